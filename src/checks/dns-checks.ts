// The DNS checks of a mailbox's domain: MX, SPF, DMARC and DKIM, each `pass`, `fail` (with a fix
// a user can act on) or `unreachable` (the resolver did not answer: nothing is known). SPF is
// evaluated by mailauth for the addresses the mailbox's SMTP server sends from, so it proves the
// record authorises them, within the 10-lookup limit; DMARC's record is found the way receivers
// find it (mailauth, with the organisational-domain fallback).
import { createPublicKey } from 'node:crypto';
import { isIP } from 'node:net';
import type getDmarcRecord from 'mailauth/lib/dmarc/get-dmarc-record.js';
import type { DmarcRecord } from 'mailauth/lib/dmarc/get-dmarc-record.js';
import type { spf } from 'mailauth/lib/spf/index.js';
import { isNoRecord, type DnsResolve } from './dns-resolver.js';
import type { DnsCheck } from './checks.schemas.js';

type SpfResolver = NonNullable<Parameters<typeof spf>[0]['resolver']>;

let mailauthLoading: Promise<{ spf: typeof spf; getDmarcRecord: typeof getDmarcRecord }> | undefined;
/**
 * mailauth's SPF and DMARC code, loaded by the first check rather than at start-up: with the tables
 * it reads it costs a process about 20 MB and 0.2 s of CPU, and most processes (a CLI command, a
 * worker between two daily checks, a planner) check no DNS.
 */
function mailauth() {
  mailauthLoading ??= Promise.all([
    import('mailauth/lib/spf/index.js'),
    import('mailauth/lib/dmarc/get-dmarc-record.js'),
  ]).then(([spfModule, dmarcModule]) => ({ spf: spfModule.spf, getDmarcRecord: dmarcModule.default }));
  return mailauthLoading;
}

function unreachable(check: DnsCheck['check'], error: unknown): DnsCheck {
  const code = (error as { code?: string }).code ?? 'no answer';
  return {
    check,
    status: 'unreachable',
    detail: `the DNS server did not answer (${code})`,
    fix: 'Try again later; if it persists, check the DNS servers this service uses (WARMUP_DNS_SERVERS).',
  };
}

export async function checkMx(resolve: DnsResolve, domain: string): Promise<DnsCheck> {
  try {
    const records = (await resolve(domain, 'MX')) as Array<{ exchange: string; priority: number }>;
    if (records.length > 0) {
      const hosts = records.sort((a, b) => a.priority - b.priority).map((r) => r.exchange);
      return { check: 'mx', status: 'pass', detail: `mail for ${domain} goes to ${hosts.join(', ')}`, fix: null };
    }
  } catch (error) {
    if (!isNoRecord(error)) return unreachable('mx', error);
  }
  return {
    check: 'mx',
    status: 'fail',
    detail: `${domain} has no MX record: replies and bounces to it cannot be delivered`,
    fix: `Publish an MX record for ${domain} pointing at your mail provider's inbound servers.`,
  };
}

export async function checkSpf(resolve: DnsResolve, domain: string, sendingIps: readonly string[]): Promise<DnsCheck> {
  let records: string[];
  try {
    records = ((await resolve(domain, 'TXT')) as string[][])
      .map((parts) => parts.join(''))
      .filter((text) => /^v=spf1(\s|$)/i.test(text));
  } catch (error) {
    if (!isNoRecord(error)) return unreachable('spf', error);
    records = [];
  }
  const publish = `Publish one TXT record on ${domain} such as "v=spf1 include:<your provider's SPF domain> -all".`;
  if (records.length === 0) {
    return { check: 'spf', status: 'fail', detail: `${domain} publishes no SPF record`, fix: publish };
  }
  if (records.length > 1) {
    return {
      check: 'spf',
      status: 'fail',
      detail: `${domain} publishes ${records.length} SPF records; receivers treat that as an error`,
      fix: 'Merge them into one TXT record starting with v=spf1.',
    };
  }
  if (sendingIps.length === 0) {
    return {
      check: 'spf',
      status: 'unreachable',
      detail: "the address of the mailbox's SMTP server could not be found",
      fix: 'Check the SMTP host of the mailbox.',
    };
  }
  const { spf: evaluateSpf } = await mailauth();
  for (const ip of sendingIps) {
    const result = await evaluateSpf({
      sender: `postmaster@${domain}`,
      ip,
      helo: domain,
      mta: 'warmup',
      resolver: resolve as SpfResolver,
    });
    const verdict = result.status.result;
    const comment = result.status.comment ?? '';
    if (verdict === 'pass') continue;
    if (verdict === 'temperror') return unreachable('spf', { code: comment || 'temperror' });
    if (verdict === 'permerror') {
      return {
        check: 'spf',
        status: 'fail',
        detail: `the SPF record of ${domain} is invalid: ${comment || 'permanent error'} (${records[0]})`,
        fix: 'Fix its syntax and keep it within 10 DNS lookups (include, a, mx, ptr, exists, redirect each count): flatten nested includes you do not need.',
      };
    }
    return {
      check: 'spf',
      status: 'fail',
      detail: `the SPF record of ${domain} does not authorise ${ip}, the address the mailbox sends from (${verdict})`,
      fix: `Add your sending provider to the record (include:… or ip4:${isIP(ip) === 4 ? ip : '…'}), then end it with -all or ~all.`,
    };
  }
  return {
    check: 'spf',
    status: 'pass',
    detail: `${records[0]} authorises ${sendingIps.join(', ')}`,
    fix: null,
  };
}

export async function checkDmarc(resolve: DnsResolve, domain: string): Promise<DnsCheck> {
  let record: DmarcRecord | false;
  try {
    record = await (await mailauth()).getDmarcRecord(domain, resolve);
  } catch (error) {
    return unreachable('dmarc', error);
  }
  if (!record) {
    return {
      check: 'dmarc',
      status: 'fail',
      detail: `${domain} publishes no DMARC record; Gmail and Yahoo require one from bulk senders`,
      fix: `Publish a TXT record at _dmarc.${domain}: "v=DMARC1; p=none; rua=mailto:dmarc@${domain}", and move to p=quarantine once reports look clean.`,
    };
  }
  const policy = (record.p ?? '').toLowerCase();
  if (!['none', 'quarantine', 'reject'].includes(policy)) {
    return {
      check: 'dmarc',
      status: 'fail',
      detail: `the DMARC record of ${domain} has no valid policy (${record.rr})`,
      fix: 'Add p=none, p=quarantine or p=reject to the record.',
    };
  }
  const alignment = `DKIM alignment ${record.adkim === 's' ? 'strict' : 'relaxed'}, SPF alignment ${record.aspf === 's' ? 'strict' : 'relaxed'}`;
  const where = record.isOrgRecord ? ' (from the organisational domain)' : '';
  return { check: 'dmarc', status: 'pass', detail: `policy ${policy}${where}, ${alignment}`, fix: null };
}

export async function checkDkim(resolve: DnsResolve, domain: string, selector: string | undefined): Promise<DnsCheck> {
  if (!selector) {
    return {
      check: 'dkim',
      status: 'skipped',
      detail: 'no DKIM selector is known for this mailbox',
      fix: "It is learned from the DKIM-Signature of this mailbox's warmup mail once a peer finds one; if your provider signs with another domain, give the selector of your domain's key (the s= of a DKIM-Signature in mail you sent) under \"DKIM selector\" with this mailbox's DNS checks.",
    };
  }
  const name = `${selector}._domainkey.${domain}`;
  let text: string | undefined;
  try {
    text = ((await resolve(name, 'TXT')) as string[][])
      .map((parts) => parts.join(''))
      .find((t) => /(^|;)\s*p=/.test(t));
  } catch (error) {
    if (!isNoRecord(error)) return unreachable('dkim', error);
  }
  const enable = `Turn on DKIM signing at your mail provider and publish the key it gives you at ${name}.`;
  if (text === undefined) {
    return { check: 'dkim', status: 'fail', detail: `no DKIM key is published at ${name}`, fix: enable };
  }
  const key = /(?:^|;)\s*p=([^;]*)/.exec(text)?.[1]?.replace(/\s+/g, '') ?? '';
  if (key === '') {
    return { check: 'dkim', status: 'fail', detail: `the DKIM key at ${name} is revoked (empty p=)`, fix: enable };
  }
  try {
    const parsed = createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' });
    const bits = parsed.asymmetricKeyDetails?.modulusLength;
    if (parsed.asymmetricKeyType === 'rsa' && bits !== undefined && bits < 1024) {
      return {
        check: 'dkim',
        status: 'fail',
        detail: `the DKIM key at ${name} has ${bits} bits; receivers ignore keys under 1024`,
        fix: 'Rotate to a 2048-bit key at your mail provider.',
      };
    }
    return {
      check: 'dkim',
      status: 'pass',
      detail: `${name} publishes a ${parsed.asymmetricKeyType}${bits ? ` ${bits}-bit` : ''} key`,
      fix: null,
    };
  } catch {
    return { check: 'dkim', status: 'fail', detail: `the DKIM key at ${name} cannot be read`, fix: enable };
  }
}

/** The addresses the mailbox's SMTP host has (an address as itself), through the same resolver. */
export async function sendingAddresses(resolve: DnsResolve, host: string): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  const found = await Promise.allSettled([resolve(host, 'A'), resolve(host, 'AAAA')]);
  return found.flatMap((result) => (result.status === 'fulfilled' ? (result.value as string[]) : []));
}

/** Every check of the mailbox's domain, side by side. */
export async function runMailboxChecks(
  resolve: DnsResolve,
  mailbox: { email: string; smtp: string },
  dkimSelector?: string,
): Promise<{ domain: string; checks: DnsCheck[] }> {
  const domain = mailbox.email.slice(mailbox.email.lastIndexOf('@') + 1).toLowerCase();
  const smtpHost = (JSON.parse(mailbox.smtp) as { host: string }).host;
  const checks = await Promise.all([
    checkMx(resolve, domain),
    sendingAddresses(resolve, smtpHost).then((ips) => checkSpf(resolve, domain, ips)),
    checkDmarc(resolve, domain),
    checkDkim(resolve, domain, dkimSelector),
  ]);
  return { domain, checks };
}
