import { describe, expect, it } from 'vitest';
import { automaticReplySign, automaticReplySignOf } from './auto-reply.js';
import { answeredMessageIds, headerBlock, headerFields, MAX_HEADER_CHARS } from './headers.js';

const header = (...lines: string[]) => `${lines.join('\r\n')}\r\n\r\nbody\r\n`;
const sign = (...lines: string[]) => automaticReplySignOf(headerBlock(header(...lines)));

describe('automaticReplySign', () => {
  it.each([
    [['Auto-Submitted: auto-replied (vacation)'], 'Auto-Submitted: auto-replied'],
    [['Auto-Submitted: auto-generated'], 'Auto-Submitted: auto-generated'],
    [['AUTO-SUBMITTED:   Auto-Notified; owner-email="a@b.test"'], 'Auto-Submitted: auto-notified'],
    [['X-Autoreply: yes'], 'x-autoreply'],
    [['X-Autorespond: Out of office'], 'x-autorespond'],
    [['Precedence: auto_reply'], 'Precedence: auto_reply'],
    [['Precedence: bulk'], 'Precedence: bulk'],
    [['X-MS-Exchange-Inbox-Rules-Loop: someone@example.test'], 'x-ms-exchange-inbox-rules-loop'],
    [['X-MS-Exchange-Organization-AutoReply: true'], 'x-ms-exchange-organization-autoreply'],
    [['Subject: Automatic reply: Quarterly numbers'], 'Subject: automatic reply:'],
    [['Subject: Out of Office: Quarterly numbers'], 'Subject: out of office:'],
    [['Subject: Abwesenheitsnotiz: Zahlen'], 'Subject: abwesenheitsnotiz'],
    [['Subject: Réponse automatique : Chiffres'], 'Subject: réponse automatique'],
  ])('recognises %j', (lines, expected) => {
    expect(sign('From: someone@example.test', ...lines)).toBe(expected);
  });

  it.each([
    [['Subject: Re: Quarterly numbers']],
    [['Auto-Submitted: no', 'Subject: Re: the automatic reply: was it yours?']],
    [['Precedence: normal']],
    [['X-Autoreply: no']],
    [['Subject: Re: Quarterly numbers', 'X-Mailer: Outlook 16.0']],
    [['In-Reply-To: <a@b.test>', 'References: <a@b.test>']],
  ])('takes %j for mail a person wrote', (lines) => {
    expect(sign('From: someone@example.test', ...lines)).toBeNull();
  });

  it('prefers the decoded subject the caller has over the raw, encoded one', () => {
    const fields = headerFields('Subject: =?utf-8?q?Automatic_reply=3A_x?=\r\n');
    expect(automaticReplySign(fields)).toBeNull();
    expect(automaticReplySign(fields, 'Automatic reply: x')).toBe('Subject: automatic reply:');
  });

  it('reads only the header: the same words in the body are not a sign', () => {
    expect(automaticReplySignOf(headerBlock('Subject: Re: hi\r\n\r\nAuto-Submitted: auto-replied\r\n'))).toBeNull();
  });
});

describe('answeredMessageIds', () => {
  it('names In-Reply-To first, then References, folded or not', () => {
    const fields = headerFields(
      header('In-Reply-To: <b@x.test>', 'References: <a@x.test>', '\t<b@x.test> <c@x.test>', 'Subject: Re: x'),
    );
    expect(answeredMessageIds(fields)).toEqual(['<b@x.test>', '<a@x.test>', '<b@x.test>', '<c@x.test>']);
  });

  it('ignores what is not a Message-ID: text, white space inside brackets, empty brackets', () => {
    const fields = headerFields(
      header('In-Reply-To: your message of Monday <not an id> <>', 'References: <ok@x.test>'),
    );
    expect(answeredMessageIds(fields)).toEqual(['<ok@x.test>']);
  });
});

describe('hostile headers stay bounded', () => {
  it('parses at most MAX_HEADER_CHARS of a huge header, however it is built', () => {
    const hugeReferences = `References: ${'<x@y.test> '.repeat(1_000_000)}\r\nAuto-Submitted: auto-replied\r\n\r\n`;
    const block = headerBlock(hugeReferences);
    expect(block.length).toBeLessThanOrEqual(MAX_HEADER_CHARS);
    // the sign after the cut is never read: what is parsed is the bounded start only
    expect(automaticReplySignOf(block)).toBeNull();
    expect(answeredMessageIds(headerFields(block)).length).toBeLessThan(MAX_HEADER_CHARS / 10);
  });

  it.each([
    ['a run of brackets', `In-Reply-To: ${'<'.repeat(2_000_000)}${'>'.repeat(2_000_000)}\r\n`],
    ['a million folded lines', `References: <a@b>\r\n${' <c@d>\r\n'.repeat(1_000_000)}`],
    ['one endless line', `X${'-'.repeat(4_000_000)}: yes\r\n`],
    ['no line ends at all', 'Subject: '.repeat(500_000)],
  ])('%s: cut to the bounded start and parsed in one pass', (_, raw) => {
    const block = headerBlock(raw);
    expect(block.length).toBeLessThanOrEqual(MAX_HEADER_CHARS);
    const fields = headerFields(block);
    expect(fields.length).toBeLessThanOrEqual(block.length);
    expect(() => automaticReplySign(fields)).not.toThrow();
    expect(answeredMessageIds(fields).length).toBeLessThanOrEqual(block.length);
  });
});
