/*
 * What receivers thought of a mailbox's mail: its receiver verdicts over a period, per receiving
 * provider, and what fails (SPF, DKIM, DMARC as the receivers evaluated them) as a problem with the
 * change that fixes it.
 */
import type { Kysely } from 'kysely';
import { addDays } from '../calendar.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { NotFoundError } from '../http/errors.js';
import { resolvePeriod, type DayRange, type PeriodInput } from '../stats/period.js';
import {
  countVerdicts,
  findMailboxOfWorkspace,
  sumScores,
  type VerdictCountRow,
  type VerdictScope,
} from './verdicts.repository.js';
import type { MailboxVerdicts, ProviderVerdicts, VerdictProblem } from './verdicts.schemas.js';

export interface VerdictsServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
}

const PROVIDER_NAMES: Record<string, string> = {
  gmail: 'Gmail',
  outlook: 'Outlook',
  yahoo: 'Yahoo',
  zoho: 'Zoho',
  icloud: 'iCloud',
  fastmail: 'Fastmail',
  custom: 'Other servers',
};

/** Results that mean the check did not hold (a temporary error says nothing). */
const FAILING = new Set(['fail', 'permerror', 'softfail']);

function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10;
}

function tally(rows: VerdictCountRow[], provider: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const row of rows) {
    if (row.provider !== provider) continue;
    const key = row.value ?? 'unknown';
    counts[key] = (counts[key] ?? 0) + row.count;
  }
  return counts;
}

/** The result most emails got, ignoring `unknown` ("n/a" when the receiver never said). */
function mostCommon(counts: Record<string, number>): string {
  const known = Object.entries(counts).filter(([value]) => value !== 'unknown');
  if (known.length === 0) return 'n/a';
  known.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return known[0][0];
}

function fixFor(code: VerdictProblem['code'], domain: string): string {
  switch (code) {
    case 'spf_fail':
      return `Receivers do not find the sending server in ${domain}'s SPF record: add your mail provider's include (or its IP addresses) to the TXT record of ${domain} that starts with v=spf1, keeping one SPF record and at most 10 DNS lookups.`;
    case 'dkim_fail':
      return `Receivers cannot verify the DKIM signature of mail from ${domain}: turn on DKIM signing for ${domain} at your mail provider and publish the public key it gives you as a TXT record at <selector>._domainkey.${domain} (GET /api/mailboxes/:id/checks?dkimSelector=… checks it).`;
    case 'dmarc_fail':
      return `Mail from ${domain} passes neither DKIM nor SPF for the From domain, so it fails DMARC: sign it with DKIM as ${domain} (d=${domain}) or send it from a server in ${domain}'s SPF record, then keep the DMARC record at _dmarc.${domain}.`;
  }
}

/** Receivers' verdicts on the scope's mail over a range, per receiving provider, with what fails. */
async function summarize(
  db: Kysely<Database>,
  scope: VerdictScope,
  range: DayRange,
  domains: string[],
): Promise<VerdictSummary> {
  const since = `${range.startDate}T00:00:00.000Z`;
  const until = `${addDays(range.endDate, 1)}T00:00:00.000Z`;
  const [placement, spf, dkim, dmarc, scores] = await Promise.all([
    countVerdicts(db, scope, 'placement', since, until),
    countVerdicts(db, scope, 'spf', since, until),
    countVerdicts(db, scope, 'dkim', since, until),
    countVerdicts(db, scope, 'dmarc', since, until),
    sumScores(db, scope, since, until),
  ]);
  const providers = [...new Set(placement.map((row) => row.provider))];
  const byProvider: ProviderVerdicts[] = providers.map((provider) => {
    const places = tally(placement, provider);
    const total = Object.values(places).reduce((a, b) => a + b, 0);
    const inbox = places.inbox ?? 0;
    const score = scores.find((row) => row.provider === provider);
    const mean = (sum: number | null | undefined, count: number | undefined) =>
      sum === null || sum === undefined || !count ? null : Math.round((sum / count) * 10) / 10;
    const entry = {
      provider,
      total,
      inbox,
      spam: places.spam ?? 0,
      promotions: places.promotions ?? 0,
      other: places.other ?? 0,
      inboxRate: percent(inbox, total),
      spf: tally(spf, provider),
      dkim: tally(dkim, provider),
      dmarc: tally(dmarc, provider),
      averageSpamScore: mean(score?.spamScoreSum, score?.scored),
      averageScl: mean(score?.sclSum, score?.sclCount),
      averageBcl: mean(score?.bclSum, score?.bclCount),
    };
    const name = PROVIDER_NAMES[provider] ?? provider;
    const summary = `${name}: SPF ${mostCommon(entry.spf)}, DKIM ${mostCommon(entry.dkim)}, DMARC ${mostCommon(entry.dmarc)}, ${entry.inboxRate} % inbox`;
    return { ...entry, summary };
  });
  byProvider.sort((a, b) => b.total - a.total || a.provider.localeCompare(b.provider));

  const problems: VerdictProblem[] = [];
  const checks: Array<[VerdictProblem['code'], string, 'spf' | 'dkim' | 'dmarc']> = [
    ['spf_fail', 'SPF', 'spf'],
    ['dkim_fail', 'DKIM', 'dkim'],
    ['dmarc_fail', 'DMARC', 'dmarc'],
  ];
  for (const [code, label, key] of checks) {
    const failing = byProvider.filter((p) => Object.keys(p[key]).some((result) => FAILING.has(result)));
    if (failing.length === 0) continue;
    const failed = failing.reduce(
      (sum, p) => sum + Object.entries(p[key]).reduce((n, [r, c]) => n + (FAILING.has(r) ? c : 0), 0),
      0,
    );
    const names = failing.map((p) => PROVIDER_NAMES[p.provider] ?? p.provider);
    problems.push({
      code,
      providers: failing.map((p) => p.provider),
      failed,
      message: `${failed} ${failed === 1 ? 'email' : 'emails'} failed ${label} at ${names.join(', ')} (as the receivers evaluated it).`,
      fix: fixFor(code, domains.length === 1 ? domains[0] : '<your domain>'),
    });
  }
  return { total: byProvider.reduce((sum, p) => sum + p.total, 0), byProvider, problems };
}

export interface VerdictSummary {
  total: number;
  byProvider: ProviderVerdicts[];
  problems: VerdictProblem[];
}

/** For the report: the verdicts on the mail of the workspace (or of one of its mailboxes) over a range. */
export function verdictSummary(
  db: Kysely<Database>,
  workspaceId: string,
  range: DayRange,
  mailboxId?: string,
): Promise<VerdictSummary> {
  return summarize(db, { workspaceId, ...(mailboxId ? { senderMailboxId: mailboxId } : {}) }, range, []);
}

export function createVerdictsService({ db, clock }: VerdictsServiceDeps) {
  return {
    async mailboxVerdicts(workspaceId: string, mailboxId: string, query: PeriodInput): Promise<MailboxVerdicts> {
      const range = resolvePeriod(query, clock.now().toISOString().slice(0, 10));
      const mailbox = await findMailboxOfWorkspace(db, workspaceId, mailboxId);
      if (!mailbox) throw new NotFoundError(`mailbox ${mailboxId} not found`);
      const domain = mailbox.email.slice(mailbox.email.lastIndexOf('@') + 1);
      const summary = await summarize(db, { workspaceId, senderMailboxId: mailbox.id }, range, [domain]);
      return { mailboxId: mailbox.id, startDate: range.startDate, endDate: range.endDate, ...summary };
    },
  };
}

export type VerdictsService = ReturnType<typeof createVerdictsService>;
