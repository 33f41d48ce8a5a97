// Each client profile writes its mail with the structure that client's real mail has: the
// signatures of real samples (test/fixtures/clients/, each naming its source) against the bytes
// Warmup sends. A difference fails the test unless ALLOWED lists it with its reason.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildRawMessage } from '../mail/smtp.js';
import { zoneOffsetMinutes } from '../mail/date-header.js';
import {
  loadClientFixtures,
  SAMPLE_ONLY_HEADERS,
  signatureOf,
  unexplainedDifferences,
} from '../../test/helpers/mime-signature.js';
import {
  boundaryFor,
  clientHtml,
  clientMessageId,
  clientProfileNamed,
  clientText,
  fileTime,
  outlookIdTime,
  threadIndexFor,
  type ClientProfileName,
} from './client-profile.js';
import { outgoingMail } from './outgoing-mail.js';

const SENDER = { email: 'erin@echo.test', name: 'Erin Example' };
const RECIPIENT = { email: 'frank@foxtrot.test', name: 'Frank Foxtrot' };
const ZONE = 'America/New_York';
const SENT = new Date('2026-12-01T15:20:07Z');
const OWN =
  'Thanks for sending the figures over this morning. I went through them on the train and they look right to me, apart from the second quarter, where I think the totals were carried over twice.\n\nCould we go through that part together on Thursday?';

function bytesOf(seed: string): Buffer {
  return createHash('sha256').update(seed).digest();
}

async function messageOf(
  profile: ClientProfileName,
  kind: 'new' | 'reply',
  own = OWN,
  subject = 'Second quarter figures',
) {
  const started = new Date(SENT.getTime() - 3 * 3600_000);
  const rootId = clientMessageId(profile, RECIPIENT.email, bytesOf(`root:${profile}`), started);
  const messageId = clientMessageId(profile, SENDER.email, bytesOf(`${kind}:${profile}`), SENT);
  const quote =
    kind === 'reply'
      ? {
          attribution: ['On 1 Dec 2026, Frank wrote:'],
          parentText: 'How do the figures look?',
          parentHtml: '<p>How do the figures look?</p>',
        }
      : undefined;
  const mail = outgoingMail({
    sender: SENDER,
    recipient: RECIPIENT,
    messageId,
    content: {
      subject: kind === 'reply' ? `Re: ${subject}` : subject,
      body: clientText(profile, own, 'Erin', quote),
      html: clientHtml(profile, own, 'Erin', quote),
    },
    profile: clientProfileNamed(profile),
    date: SENT,
    timeZone: ZONE,
    language: 'en',
    threadIndex: threadIndexFor(
      kind === 'reply' ? rootId : messageId,
      kind === 'reply' ? started : SENT,
      kind === 'reply' ? [SENT] : [],
    ),
    ...(kind === 'reply' ? { inReplyTo: rootId, references: [rootId] } : {}),
  });
  return { mail, raw: await buildRawMessage(mail) };
}

describe("each client profile writes the structure of that client's real mail", () => {
  for (const { name, fixture } of loadClientFixtures()) {
    it(`${name} (${fixture.source})`, async () => {
      const { raw } = await messageOf(fixture.client as ClientProfileName, fixture.kind);
      const ours = signatureOf(raw);
      expect(unexplainedDifferences(name, fixture, ours, 'echo.test')).toEqual([]);
      // an allowed header-order difference is only the sample's extra headers: the rest is in the same order
      if (fixture.headers) {
        expect(ours.headers).toEqual(fixture.headers.filter((header) => !SAMPLE_ONLY_HEADERS.has(header)));
      }
    });
  }

  it('writes the same bytes for the same message (a resend is the same message)', async () => {
    for (const profile of ['thunderbird', 'apple-mail', 'outlook', 'gmail-app'] as const) {
      expect((await messageOf(profile, 'reply')).raw.equals((await messageOf(profile, 'reply')).raw)).toBe(true);
    }
  });

  it("dates every message in the sender's zone", async () => {
    for (const profile of ['thunderbird', 'apple-mail', 'outlook', 'gmail-app'] as const) {
      expect(signatureOf((await messageOf(profile, 'new')).raw).date).toBe('Tue, 1 Dec 2026 10:20:07 -0500');
    }
  });
});

describe('Outlook: every time-derived field agrees with the send time', () => {
  it('carries the send time in its Message-ID (UTC) and its boundary (local time), counter and counter + 1', async () => {
    const { mail, raw } = await messageOf('outlook', 'new');
    const ours = signatureOf(raw);
    expect(Math.abs(outlookIdTime(ours.messageId)!.getTime() - SENT.getTime())).toBeLessThan(1000);
    const [, counter, high, low] = /^<([0-9a-f]{4})([0-9a-f]{8})\$([0-9a-f]{8})\$/.exec(ours.messageId)!;
    const local = fileTime(new Date(SENT.getTime() + zoneOffsetMinutes(SENT, ZONE) * 60_000));
    const [, boundaryCounter, boundaryHigh, boundaryLow] = /_000_([0-9A-F]{4})_([0-9A-F]{8})\.([0-9A-F]{8})$/.exec(
      ours.boundary!,
    )!;
    expect(parseInt(boundaryCounter, 16)).toBe(parseInt(counter, 16) + 1);
    expect((BigInt(`0x${boundaryHigh}`) << 32n) | BigInt(`0x${boundaryLow}`)).toBe(local);
    expect((BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`)).toBe(fileTime(SENT));
    expect(mail.boundary).toBe(boundaryFor('outlook', mail.messageId, ZONE));
  });

  it('gives a new thread a 22-byte Thread-Index from its time, and a reply one more 5-byte block', async () => {
    const newIndex = Buffer.from(threadIndexFor('<t@echo.test>', SENT, []), 'base64');
    expect(newIndex).toHaveLength(22);
    expect(newIndex.readUIntBE(0, 6)).toBe(Number(fileTime(SENT) >> 16n));
    const reply = Buffer.from(threadIndexFor('<t@echo.test>', SENT, [new Date(SENT.getTime() + 3600_000)]), 'base64');
    expect(reply).toHaveLength(27);
    expect(reply.subarray(0, 22).equals(newIndex)).toBe(true);
    // an hour is 36e9 units of 100 ns: 137,329 units of 2^18
    expect(reply.readUInt32BE(22)).toBe(Math.floor(36e9 / 2 ** 18));
  });

  it('does not stamp a counter of 0000 on every message', () => {
    const counters = new Set(
      Array.from({ length: 20 }, (_, i) =>
        clientMessageId('outlook', SENDER.email, bytesOf(`c${i}`), SENT).slice(1, 5),
      ),
    );
    expect(counters.size).toBeGreaterThan(5);
  });
});

describe('Gmail: Message-IDs on mail.gmail.com of varying length', () => {
  it('differs in length from one message to the next', () => {
    const ids = Array.from({ length: 40 }, (_, i) =>
      clientMessageId('gmail-app', SENDER.email, bytesOf(`g${i}`), SENT),
    );
    for (const id of ids) expect(id).toMatch(/^<CA[A-Za-z0-9+_=-]{47,49}@mail\.gmail\.com>$/);
    expect(new Set(ids.map((id) => id.length)).size).toBeGreaterThan(1);
  });
});

describe('text that is not ASCII is encoded as each client encodes it', () => {
  const own = 'Grüße aus Köln, bis Donnerstag.';
  it.each([
    ['thunderbird', 'charset=UTF-8; format=flowed', '8bit'],
    ['apple-mail', 'charset=utf-8', 'quoted-printable'],
    ['outlook', 'charset="utf-8"', 'quoted-printable'],
    ['gmail-app', 'charset="UTF-8"', 'quoted-printable'],
  ] as const)('%s', async (profile, params, encoding) => {
    const text = signatureOf((await messageOf(profile, 'new', own, 'Grüße')).raw).parts[0];
    expect(text).toMatchObject({ type: 'text/plain', params, encoding });
  });
});
