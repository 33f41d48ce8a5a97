// The learning filter of the test stack (the `learning` option): SpamAssassin scores every delivery
// with the receiving mailbox's own Bayes database and TxRep reputation, and Dovecot's IMAPSieve
// teaches it when the mailbox's owner moves mail out of Junk ("ham") or into it ("spam").
//
// The proof of the loop: a cold sender writes similar mail, round after round, to two receivers.
// The rescuer moves it out of Junk over IMAP as the engine does; the control never touches it.
// The rescuer's filter must come to score that sender's mail lower and file it into the INBOX,
// while the control, receiving the same mail, keeps junking it: without the learning the two
// mailboxes could not differ.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openImapSession, type FoundMessage, type ImapSession } from '../../src/mail/imap.js';
import { createSmtpSender, type OutgoingMail, type SmtpSender } from '../../src/mail/smtp.js';
import { mailStackAvailable } from './mail-stack.js';
import { startPrivateMailStack, type PrivateMailStack } from './private-stack.js';
import { getMailStack, mailServerConfigs } from './use-mail-stack.js';
import type { MailUser } from './users.js';

const user = (email: string): MailUser => ({ email, password: `${email.split('@')[0]}-pass-123` });
const nora = user('nora@cold-start.test'); // a new domain: no mail from it seen anywhere before
const rita = user('rita@rescuer.test'); // moves nora's mail out of Junk
const carl = user('carl@control.test'); // receives the same mail and never touches it
const ROUNDS = 4;

const learning = mailStackAvailable({ learning: true });
if (!learning.ok && process.env.CI === 'true') {
  throw new Error(`the learning mail stack cannot run under CI: missing ${learning.missing.join(', ')}`);
}
if (!learning.ok)
  console.warn(`learning filter tests skipped: missing ${learning.missing.join(', ') || learning.problem}`);

const TOPICS = ['the quarterly plan', 'the budget review', 'the trip to Lyon', 'the new office', 'the team lunch'];
const ASKS = [
  'Could you send me the latest draft when you have a moment?',
  'Would Thursday afternoon still work for you?',
  'Do you have the notes from last time?',
  'Shall we go over it together next week?',
  'Let me know what you think.',
];

/** Ordinary correspondence, a little different each round (a filter that only knew one exact message would prove nothing). */
function letter(round: number, to: MailUser): OutgoingMail {
  const topic = TOPICS[round % TOPICS.length];
  const ask = ASKS[(round * 2) % ASKS.length];
  const text = `Hi ${to.email.split('@')[0]},\n\nI was going through ${topic} and wondered how far you got. ${ask}\n\nThanks,\nNora\n`;
  return {
    from: { name: 'Nora Field', address: nora.email },
    to: { address: to.email },
    subject: `About ${topic}`,
    text,
    html: `<p>${text.trim().split('\n\n').join('</p><p>').replace(/\n/g, '<br>')}</p>`,
    messageId: `<learning-${round}-${to.email.split('@')[0]}-${process.pid}@cold-start.test>`,
  };
}

/** SpamAssassin's own score of a delivered message, from its X-Spam-Status. */
function scoreOf(found: FoundMessage): number {
  const status = found.receiverHeaders?.find((field) => field.name === 'x-spam-status')?.value ?? '';
  const score = /score=(-?\d+(?:\.\d+)?)/.exec(status)?.[1];
  if (score === undefined) throw new Error(`no SpamAssassin score on ${found.messageId}: '${status}'`);
  return Number(score);
}

async function delivered(session: ImapSession, messageId: string): Promise<FoundMessage> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const [found] = await session.findMessages([messageId]);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`${messageId} was not delivered within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.skipIf(getMailStack() === null || !learning.ok)(
  'the learning filter learns from what a mailbox owner does',
  () => {
    let stack: PrivateMailStack;
    let smtp: SmtpSender;
    let rescuer: ImapSession;
    let control: ImapSession;

    beforeAll(async () => {
      stack = await startPrivateMailStack('learning', [nora, rita, carl], { learning: true });
      smtp = createSmtpSender(mailServerConfigs(stack, nora).smtp);
      rescuer = await openImapSession(mailServerConfigs(stack, rita).imap);
      control = await openImapSession(mailServerConfigs(stack, carl).imap);
    }, 120_000);

    afterAll(async () => {
      smtp?.close();
      await rescuer?.close();
      await control?.close();
      await stack?.stop();
    });

    it('a cold sender lands in Junk; moving its mail out of Junk brings the next mail to the INBOX, only for the mailbox that moved it', async () => {
      const rescued: { role: string; score: number }[] = [];
      const ignored: { role: string; score: number }[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const toRescuer = letter(round, rita);
        const toControl = letter(round, carl);
        await smtp.send(toRescuer);
        await smtp.send(toControl);
        const atRescuer = await delivered(rescuer, toRescuer.messageId);
        const atControl = await delivered(control, toControl.messageId);
        rescued.push({ role: atRescuer.role, score: scoreOf(atRescuer) });
        ignored.push({ role: atControl.role, score: scoreOf(atControl) });
        // what the engine does with its mail in spam: out of Junk, into the INBOX
        if (atRescuer.role === 'spam') await rescuer.move(atRescuer.folder, atRescuer.uid, 'INBOX');
      }

      const line = (rounds: { role: string; score: number }[]) => rounds.map((r) => `${r.score} ${r.role}`).join(', ');
      console.log(`learning filter, per round: rescuer ${line(rescued)}; control ${line(ignored)}`);
      // cold: the first mail is spam at both receivers, by the same score
      expect(rescued[0].role).toBe('spam');
      expect(ignored[0].role).toBe('spam');
      expect(rescued[0].score).toBe(ignored[0].score);
      // the rescuer's filter learned: lower scores, then the INBOX, and it stays there
      expect(rescued[1].score).toBeLessThan(rescued[0].score);
      expect(rescued[ROUNDS - 1].role).toBe('inbox');
      const firstInbox = rescued.findIndex((r) => r.role === 'inbox');
      expect(rescued.slice(firstInbox).every((r) => r.role === 'inbox')).toBe(true);
      // the same mail at a mailbox that never moved anything: still spam, every round
      expect(ignored.map((r) => r.role)).toEqual(Array(ROUNDS).fill('spam'));
      for (let round = 1; round < ROUNDS; round += 1) {
        expect(rescued[round].score).toBeLessThan(ignored[round].score);
      }
    }, 60_000);

    it('moving the sender’s mail back into Junk teaches the opposite: its next mail scores higher', async () => {
      const before = letter(ROUNDS, rita);
      await smtp.send(before);
      const trusted = await delivered(rescuer, before.messageId);
      expect(trusted.role).toBe('inbox');
      await rescuer.move(trusted.folder, trusted.uid, 'Junk');

      const after = letter(ROUNDS + 1, rita);
      await smtp.send(after);
      const judged = await delivered(rescuer, after.messageId);
      expect(scoreOf(judged)).toBeGreaterThan(scoreOf(trusted));
    }, 30_000);
  },
);
