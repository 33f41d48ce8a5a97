import { describe, expect, it } from 'vitest';
import { headerBlock, headerFields, MAX_HEADER_CHARS } from '../mail/headers.js';
import {
  isReceiverAuthserv,
  isTrustedVerdict,
  parseAuthenticationResults,
  receiverVerdict,
  splitStructured,
  type Receiver,
} from './receiver-verdict.js';

const MiB = 1024 * 1024;
const gmail: Receiver = { provider: 'gmail', email: 'frank@gmail.com', imapHost: 'imap.gmail.com' };
const outlook: Receiver = { provider: 'outlook', email: 'olga@outlook.com', imapHost: 'outlook.office365.com' };
const yahoo: Receiver = { provider: 'yahoo', email: 'yuri@yahoo.com', imapHost: 'imap.mail.yahoo.com' };
const custom: Receiver = { provider: 'custom', email: 'bob@beta.test', imapHost: 'mail.beta.test' };

/** The receiver's fields as the mail layer hands them over: parsed from a bounded header block. */
function fields(raw: string) {
  return headerFields(headerBlock(raw, MAX_HEADER_CHARS));
}

function expectFast(parse: () => unknown): void {
  const started = performance.now();
  parse();
  // generous: a loaded 2-core machine; a quadratic parser takes minutes on these inputs
  expect(performance.now() - started).toBeLessThan(1_500);
}

describe('receiver verdicts: hostile headers', () => {
  it.each([
    ['one endless Authentication-Results', `Authentication-Results: mx.google.com; ${'dkim=pass '.repeat(MiB / 10)}`],
    ['endless nested comments', `Authentication-Results: mx.google.com; dkim=pass ${'('.repeat(MiB)}`],
    ['endless quoted string', `Authentication-Results: mx.google.com; dkim="${'\\"'.repeat(MiB / 2)}`],
    ['a million semicolons', `Authentication-Results: mx.google.com${';'.repeat(MiB)}`],
    ['a million equals signs', `Authentication-Results: ${'='.repeat(MiB)}`],
    ['folded a million times', `Authentication-Results: mx.google.com;${'\r\n dkim=pass'.repeat(MiB / 12)}`],
    ['thousands of fields', 'Authentication-Results: mx.google.com; dkim=fail\r\n'.repeat(MiB / 48)],
    ['an endless Forefront report', `X-Forefront-Antispam-Report: ${'SCL:1;'.repeat(MiB / 6)}`],
    ['an endless spam status', `X-Spam-Status: No, ${'score=1 '.repeat(MiB / 8)}`],
    ['a spam score of a million digits', `X-Spam-Status: Yes, score=${'9'.repeat(MiB)}`],
  ])('%s (1 MiB) is read in linear time', (_, raw) => {
    for (const receiver of [gmail, outlook, custom]) expectFast(() => receiverVerdict(fields(raw), receiver));
    // the field parser alone, given the whole field (the reader never passes more than 64 KiB)
    expectFast(() => parseAuthenticationResults(raw));
    expectFast(() => splitStructured(raw.slice(0, 64 * 1024)));
  });

  it('a score no number can hold is no score', () => {
    const verdict = receiverVerdict(fields(`X-Spam-Status: Yes, score=${'9'.repeat(400)}\r\n`), custom);
    expect(verdict.spamScore).toBeNull();
    expect(receiverVerdict(fields('X-Spam-Status: Yes, score=NaN\r\n'), custom).spamScore).toBeNull();
    expect(receiverVerdict(fields('X-Spam-Status: Yes, score=Infinity\r\n'), custom).spamScore).toBeNull();
  });

  it('takes the receiver’s own Authentication-Results, never one the sender wrote below it', () => {
    const raw = [
      'Authentication-Results: mx.google.com; dkim=fail header.i=@echo.test; spf=pass smtp.mailfrom=echo.test; dmarc=fail header.from=echo.test',
      'Received: by mail.echo.test',
      // written by the sender: the receiver's name, results the sender would like
      'Authentication-Results: mx.google.com; dkim=pass; spf=pass; dmarc=pass',
      '',
    ].join('\r\n');
    expect(receiverVerdict(fields(raw), gmail)).toMatchObject({
      authservId: 'mx.google.com',
      dkim: 'fail',
      spf: 'pass',
      dmarc: 'fail',
    });
  });

  it('ignores Authentication-Results of another server than the receiver’s', () => {
    const raw = [
      'Authentication-Results: spamhost.example; dkim=pass; spf=pass; dmarc=pass',
      'Authentication-Results: mx.google.com.evil.example; dkim=pass',
      'Authentication-Results: evilmx.google.com.example; dkim=pass',
      '',
    ].join('\r\n');
    expect(receiverVerdict(fields(raw), gmail)).toMatchObject({ authservId: null, dkim: null, dmarc: null });
    // nor one without an authserv-id anywhere but at Microsoft
    const bare = 'Authentication-Results: spf=pass smtp.mailfrom=x.test; dkim=pass header.d=x.test\r\n\r\n';
    expect(receiverVerdict(fields(bare), gmail).dkim).toBeNull();
    expect(receiverVerdict(fields(bare), custom).dkim).toBeNull();
    expect(receiverVerdict(fields(bare), outlook).dkim).toBe('pass');
  });

  it('reads Microsoft’s SCL and BCL only on a Microsoft mailbox, and no X-Spam-Status at the big providers', () => {
    const raw = [
      'X-Forefront-Antispam-Report: CIP:192.0.2.1;CTRY:;LANG:en;SCL:6;SRV:;IPV:NLI;SFV:SPM;H:mail.echo.test;PTR:;CAT:SPM;SFS:(13230040);DIR:INB;',
      'X-Microsoft-Antispam: BCL:3;ARA:13230040|69100299015;',
      'X-Spam-Status: No, score=-5.0 required=5.0',
      '',
    ].join('\r\n');
    expect(receiverVerdict(fields(raw), outlook)).toMatchObject({ scl: 6, bcl: 3, spamScore: null });
    expect(receiverVerdict(fields(raw), gmail)).toMatchObject({ scl: null, bcl: null, spamScore: null });
    expect(receiverVerdict(fields(raw), custom)).toMatchObject({ scl: null, bcl: null, spamScore: -5 });
    expect(receiverVerdict(fields('X-Forefront-Antispam-Report: SCL:99;\r\n'), outlook).scl).toBeNull();
  });
});

describe('receiver verdicts: what providers write', () => {
  it('Gmail', () => {
    const raw = [
      'ARC-Authentication-Results: i=1; mx.google.com; dkim=pass header.i=@echo.test header.s=s1 header.b=abc; spf=pass (google.com: domain of erin@echo.test designates 192.0.2.1 as permitted sender) smtp.mailfrom=erin@echo.test; dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=echo.test',
      'Authentication-Results: mx.google.com;',
      '       dkim=pass header.i=@echo.test header.s=s1 header.b=abc;',
      '       spf=pass (google.com: domain of erin@echo.test designates 192.0.2.1 as permitted sender) smtp.mailfrom=erin@echo.test;',
      '       dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=echo.test',
      '',
    ].join('\r\n');
    expect(receiverVerdict(fields(raw), gmail)).toEqual({
      authservId: 'mx.google.com',
      spf: 'pass',
      dkim: 'pass',
      dmarc: 'pass',
      arc: null,
      scl: null,
      bcl: null,
      spamScore: null,
    });
  });

  it('Outlook.com (no authserv-id, several results in one part)', () => {
    const raw = [
      'Authentication-Results: spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=echo.test; dkim=fail (signature did not verify) header.d=echo.test;dmarc=fail action=none header.from=echo.test;compauth=fail reason=001',
      'X-MS-Exchange-Organization-SCL: 1',
      '',
    ].join('\r\n');
    expect(receiverVerdict(fields(raw), outlook)).toMatchObject({
      authservId: '',
      spf: 'pass',
      dkim: 'fail',
      dmarc: 'fail',
      scl: 1,
    });
  });

  it('Yahoo, with two DKIM signatures of which one passed', () => {
    const raw =
      'Authentication-Results: atlas-production.v2.mail-ne1.yahoo.com;\r\n dkim=fail header.i=@old.echo.test;\r\n dkim=pass header.i=@echo.test;\r\n spf=pass smtp.mailfrom=echo.test;\r\n dmarc=pass(p=NONE) header.from=echo.test;\r\n\r\n';
    expect(receiverVerdict(fields(raw), yahoo)).toMatchObject({ dkim: 'pass', spf: 'pass', dmarc: 'pass' });
  });

  it('a server of the mailbox’s own domain, with a version and SpamAssassin', () => {
    const raw = [
      'X-Spam-Status: No, score=0.4 required=5.0 tests=ALL_TRUSTED autolearn=ham',
      'Authentication-Results: beta.test 1; spf=softfail smtp.mailfrom=echo.test; dkim=none; dmarc=none header.from=echo.test',
      '',
    ].join('\r\n');
    expect(receiverVerdict(fields(raw), custom)).toMatchObject({
      authservId: 'beta.test',
      spf: 'softfail',
      dkim: 'none',
      dmarc: 'none',
      spamScore: 0.4,
    });
  });

  it('knows whose authserv-ids are the receiver’s', () => {
    expect(isReceiverAuthserv('mx.google.com', gmail)).toBe(true);
    expect(isReceiverAuthserv('mx.google.com', yahoo)).toBe(false);
    expect(isReceiverAuthserv('mail.beta.test', custom)).toBe(true);
    expect(isReceiverAuthserv('beta.test.evil.example', custom)).toBe(false);
    // a custom domain on Microsoft 365 reads its mail at outlook.office365.com
    expect(
      isReceiverAuthserv('', { provider: 'custom', email: 'a@firm.test', imapHost: 'outlook.office365.com' }),
    ).toBe(true);
    // an IMAP host given as an address names no domain
    expect(isReceiverAuthserv('0.1', { provider: 'custom', email: 'a@b.test', imapHost: '127.0.0.1' })).toBe(false);
  });
});

describe('receiver verdicts: whose word stands for a sender of another workspace', () => {
  const failing = (authserv: string) => `Authentication-Results: ${authserv}; spf=fail; dkim=fail; dmarc=fail\r\n`;
  const judged = (raw: string, receiver: Receiver, sameWorkspace: boolean) =>
    isTrustedVerdict(receiverVerdict(fields(raw), receiver), receiver, sameWorkspace);

  it("believes the sender's own workspace on any server, as before", () => {
    expect(judged(failing('beta.test'), custom, true)).toBe(true);
  });

  it("believes another tenant's mailbox only where a big provider's own servers speak under their own name", () => {
    expect(judged(failing('mx.google.com'), gmail, false)).toBe(true);
    expect(judged('Authentication-Results: spf=pass; dkim=fail; dmarc=fail\r\n', outlook, false)).toBe(true);
    expect(judged(failing('mta4.am0.yahoodns.net'), yahoo, false)).toBe(true);
    // Google Workspace on the tenant's own domain: still Google's servers and Google's name
    const workspace: Receiver = { provider: 'gmail', email: 'ops@tenant.example', imapHost: 'imap.gmail.com' };
    expect(judged(failing('mx.google.com'), workspace, false)).toBe(true);
    // ...but a field under the tenant's own domain there is the tenant's, not Google's
    expect(judged(failing('tenant.example'), workspace, false)).toBe(false);
  });

  it("never believes another tenant's own server, whatever preset or name it claims", () => {
    expect(judged(failing('beta.test'), custom, false)).toBe(false);
    const claimsGmail: Receiver = { provider: 'gmail', email: 'x@evil.example', imapHost: 'imap.evil.example' };
    expect(judged(failing('mx.google.com'), claimsGmail, false)).toBe(false);
    const claimsOutlook: Receiver = { provider: 'outlook', email: 'x@evil.example', imapHost: 'mail.evil.example' };
    expect(judged('Authentication-Results: dkim=fail\r\n', claimsOutlook, false)).toBe(false);
    const lookalike: Receiver = { provider: 'gmail', email: 'x@evil.example', imapHost: 'imap.gmail.com.evil.example' };
    expect(judged(failing('mx.google.com'), lookalike, false)).toBe(false);
    // a big provider's mailbox whose copy carries no field of the provider's says nothing
    expect(judged('Subject: hi\r\n', gmail, false)).toBe(false);
  });
});
