import { describe, expect, it } from 'vitest';
import { MAX_EXCERPT_CHARS, MAX_REPLY_BYTES, readableLine, replyExcerpt } from './reply-text.js';

const message = (headers: string[], body: string) => `${headers.join('\r\n')}\r\n\r\n${body}`;
const latin1 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

describe('replyExcerpt: what a person wrote, as bounded plain text', () => {
  it('keeps the text above the quoted message', () => {
    const raw = message(
      ['From: Dana <dana@example.test>', 'Subject: Re: the workshop', 'Content-Type: text/plain; charset=utf-8'],
      "Which workshop do you mean? I don't think we have met.\r\n\r\nDana\r\n\r\nOn Mon, 3 Nov 2026, Alice wrote:\r\n> Shall we meet at the workshop?\r\n",
    );
    expect(replyExcerpt(latin1(raw))).toBe("Which workshop do you mean? I don't think we have met.\n\nDana");
  });

  it('undoes quoted-printable and base64 in the charset the part names', () => {
    const qp = message(
      ['Content-Type: text/plain; charset="iso-8859-1"', 'Content-Transfer-Encoding: quoted-printable'],
      'Gr=FC=DFe aus K=F6ln, ein sehr langer Satz der =\r\numbricht.\r\n',
    );
    expect(replyExcerpt(qp)).toBe('Grüße aus Köln, ein sehr langer Satz der umbricht.');
    const b64 = message(
      ['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64'],
      Buffer.from('Привет, кто вы?')
        .toString('base64')
        .replace(/(.{8})/g, '$1\r\n'),
    );
    expect(replyExcerpt(b64)).toBe('Привет, кто вы?');
  });

  it('takes the text part of a nested multipart, and the text of HTML when there is none', () => {
    const nested = message(
      ['Content-Type: multipart/mixed; boundary="outer"'],
      [
        '--outer',
        'Content-Type: multipart/alternative; boundary=inner',
        '',
        '--inner',
        'Content-Type: text/html; charset=utf-8',
        '',
        '<p>html version</p>',
        '--inner',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'plain version',
        '--inner--',
        '--outer',
        'Content-Type: text/plain; name=a.txt',
        'Content-Disposition: attachment; filename=a.txt',
        '',
        'an attachment',
        '--outer--',
        '',
      ].join('\r\n'),
    );
    expect(replyExcerpt(nested)).toBe('plain version');
    const html = message(
      ['Content-Type: text/html; charset=utf-8'],
      '<html><style>p{color:red}</style><p>Who are you &amp; why&nbsp;write?</p><script>alert(1)</script></html>',
    );
    expect(replyExcerpt(html)).toBe('Who are you & why write?');
  });

  it('leaves markup and control characters as harmless text', () => {
    const raw = message(
      ['Content-Type: text/plain; charset=utf-8'],
      latin1('<script>alert("x")</script>\u0000\u0007\u001b[31mred\u009b\r\nnext\u2028line'),
    );
    expect(replyExcerpt(raw)).toBe('<script>alert("x")</script>[31mred\nnextline');
    expect(readableLine('Re:\r\n Bcc: x\u0000 <b>y</b>')).toBe('Re:   Bcc: x <b>y</b>');
  });

  it('is bounded: a huge reply gives at most MAX_EXCERPT_CHARS, an unknown charset reads as UTF-8', () => {
    const raw = message(['Content-Type: text/plain; charset=no-such-charset'], 'word '.repeat(1_000_000));
    const excerpt = replyExcerpt(raw);
    expect(excerpt.length).toBeLessThanOrEqual(MAX_EXCERPT_CHARS);
    expect(excerpt.startsWith('word word')).toBe(true);
  });

  it.each([
    [
      'thousands of nested multiparts',
      (n: number) =>
        `Content-Type: multipart/mixed; boundary=b\r\n\r\n${'--b\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n'.repeat(n)}`,
    ],
    [
      'a boundary that is never closed',
      (n: number) => `Content-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\n\r\n${'--x-'.repeat(n)}`,
    ],
    ['a run of ampersands in HTML', (n: number) => `Content-Type: text/html\r\n\r\n${'&'.repeat(n)}`],
    ['a run of unclosed tags', (n: number) => `Content-Type: text/html\r\n\r\n${'<style'.repeat(n)}`],
    ['a run of semicolons in Content-Type', (n: number) => `Content-Type: text/plain${';'.repeat(n)}\r\n\r\nhi`],
    ['a run of quoted lines', (n: number) => `Content-Type: text/plain\r\n\r\n${'>\n'.repeat(n)}`],
    ['one line without a break', (n: number) => `Content-Type: text/plain\r\n\r\n${'a'.repeat(n)}`],
    [
      'base64 junk',
      (n: number) => `Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n${'!'.repeat(n)}`,
    ],
    [
      'quoted-printable runs of =',
      (n: number) => `Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${'='.repeat(n)}`,
    ],
  ])('parses %s in linear time', (_name, build) => {
    // the whole download (MAX_REPLY_BYTES) of the worst case of each loop: quadratic work on it
    // would take many seconds; the same bound as the other parsers of remote input (imap.test.ts)
    const raw = build(MAX_REPLY_BYTES);
    const started = performance.now();
    const excerpt = replyExcerpt(raw);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(excerpt.length).toBeLessThanOrEqual(MAX_EXCERPT_CHARS);
  });
});
