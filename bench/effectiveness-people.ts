// The people of the effectiveness benchmark (bench/effectiveness.bench.ts): mailboxes with names
// of their own, the letters the own-text control writes, and the ordinary spam every receiver gets
// each day and moves into Junk when its filter left it in the INBOX, as a person does. Bench only:
// nothing here is known to the engine or to the stack's filter.
import nodemailer from 'nodemailer';
import { openImapSession } from '../src/mail/imap.js';
import { seededRandom, type Random } from '../src/engine/random.js';
import { mailServerConfigs, type MailStack } from '../test/mailstack/use-mail-stack.js';
import type { MailUser } from '../test/mailstack/users.js';

/** A stack user who is a person: an address, the password the stack gives it, a name for mail. */
export interface Person extends MailUser {
  first: string;
  name: string;
}

const FIRST_NAMES = [
  'nora', 'theo', 'maya', 'jonah', 'lena', 'oscar', 'iris', 'felix', 'clara', 'milo', 'ada', 'ruben',
  'vera', 'emil', 'hana', 'lukas', 'sofia', 'noah', 'greta', 'pablo', 'ines', 'jasper', 'lotte', 'kai',
  'elif', 'tomas', 'mira', 'arjun', 'zoe', 'henrik', 'leila', 'victor', 'anouk', 'samir', 'petra', 'olaf',
  'yara', 'dmitri', 'nell', 'bruno',
]; // prettier-ignore
const SURNAMES = ['aster', 'birch', 'cedar', 'dahlia', 'elm', 'fern', 'gorse', 'hazel', 'iris', 'juniper'];
const capital = (word: string) => word[0].toUpperCase() + word.slice(1);

/**
 * `count` people of one group (`group` names their domains): each with a first name nobody else in
 * the run has (`offset` into the list) on a domain of its own.
 */
export function peopleOf(group: string, count: number, offset: number): Person[] {
  return Array.from({ length: count }, (_, i) => {
    const first = FIRST_NAMES[(offset + i) % FIRST_NAMES.length];
    const surname = SURNAMES[i % SURNAMES.length];
    const email = `${first}@${surname}-${group}.test`;
    return {
      email,
      password: `${first}-pass-123`,
      first: capital(first),
      name: `${capital(first)} ${capital(surname)}`,
    };
  });
}

const TOPICS = [
  'the supplier contract', 'the garden project', 'our reading group', 'the spring fair', 'the van rental',
  'the new shelving', 'the volunteers’ rota', 'the roof repair', 'the school concert', 'the club accounts',
  'the kitchen order', 'the street party', 'the photo archive', 'the bike repairs', 'the choir rehearsal',
]; // prettier-ignore
const ASKS = [
  'Could you check the figures before Friday?', 'Is the usual room free on Monday?', 'Did the parcel ever arrive?',
  'Can we move it to the afternoon?', 'What did the others say?', 'Would you mind looking over my notes?',
  'Shall I bring the keys on Tuesday?', 'Do you still have the old list?', 'Is Anna coming along this time?',
  'Could we talk it through on the phone?',
]; // prettier-ignore
const OPENINGS = ['', 'I hope the week is going well. ', 'Thanks again for yesterday. ', 'Sorry this took a while. '];
const CLOSINGS = ['Best', 'Thanks', 'Cheers', 'See you soon', 'Warm wishes'];

/** A short letter of the sender's own words for the own-text control, different each time. */
export function ownLetter(random: Random, from: Person, to: Person): { subject: string; text: string; html: string } {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const topic = pick(TOPICS);
  const text = `Hello ${to.first},\n\n${pick(OPENINGS)}A quick note on ${topic}. ${pick(ASKS)}\n\n${pick(CLOSINGS)},\n${from.first}\n`;
  return { subject: `${pick(['About', 'Re', 'Quick question on'])} ${topic}`, text, html: htmlOf(text) };
}

const htmlOf = (text: string) => `<p>${text.trim().split('\n\n').join('</p><p>').replace(/\n/g, '<br>')}</p>`;

// Ordinary spam, in the kinds the seed corpus has (test/mailstack/learning-seed.sh), worded afresh:
// prizes, loans, crypto, pharmacy, phishing, and cold business outreach in the words of work mail.
const SPAM_SUBJECTS = [
  'You have been selected', 'Final notice: your account', 'Exclusive offer for {name}', 'Quick question, {name}',
  'Your reward is waiting', 'Re: our call next week', 'Invoice overdue', 'Lowest rates this month',
  'Congratulations {name}!', 'Action required: verify now', 'Partnership opportunity', 'Last chance to claim',
]; // prettier-ignore
const SPAM_LINES = [
  'You have been chosen to receive a cash prize of {amount} USD.',
  'Claim your brand new phone today, only shipping to pay.',
  'Our trading robot turned {amount} into ten times that in a month.',
  'Get approved for a personal loan of {amount} with no credit check.',
  'Your mailbox will be closed unless you confirm your password within 24 hours.',
  'We noticed unusual sign-in activity; verify your bank details to restore access.',
  'Cheap medication delivered discreetly to your door, no prescription needed.',
  'We help teams like yours cut their costs by half; can we book a short call next week?',
  'Following up on my last email: would Thursday or Friday work for a quick demo?',
  'I put together a free audit of your website; shall I send the report over?',
  'Please find the outstanding invoice attached; payment is due today to avoid fees.',
  'Let me know if you are the right person to talk to about your plans for the quarter.',
  'Lose weight fast with this one simple trick doctors hate.',
  'Work from home and earn {amount} a week, no experience required.',
  'Your parcel is held at customs; pay the small fee to release it.',
  'Limited time: 90 % off designer watches, today only.',
]; // prettier-ignore
const SPAM_SENDERS = ['offers', 'rewards', 'support', 'billing', 'growth', 'deals', 'sales', 'security', 'team'];
const SPAM_DOMAINS = ['promo', 'mailer', 'bestdeal', 'secure-login', 'leadgen', 'winners', 'fastloan', 'pharma'];

function spamLetter(random: Random, to: Person, serial: number) {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const fill = (line: string) =>
    line.replace('{name}', to.first).replace('{amount}', String(1_000 * (1 + Math.floor(random() * 9))));
  const lines = [pick(SPAM_LINES), pick(SPAM_LINES), pick(SPAM_LINES)].map(fill);
  const domain = `${pick(SPAM_DOMAINS)}-${Math.floor(random() * 1_000)}.example`;
  const text = `${pick(['Dear', 'Hi', 'Hello'])} ${to.first},\n\n${lines.join(' ')}\n\n${pick(['Regards', 'Best', 'Thanks'])},\n${capital(pick(FIRST_NAMES))}\n`;
  return {
    from: { name: capital(pick(SPAM_SENDERS)), address: `${pick(SPAM_SENDERS)}@${domain}` },
    to: { address: to.email },
    subject: fill(pick(SPAM_SUBJECTS)),
    text,
    html: htmlOf(text),
    messageId: `<spam-${serial}-${Math.floor(random() * 1e9)}@${domain}>`,
  };
}

export interface SpamDay {
  /** Spam delivered to the receivers this day. */
  delivered: number;
  /** Of it, what the filter left in the INBOX (and the person moved into Junk). */
  inInbox: number;
}

/**
 * The daily spam of a set of receivers: `perDay` letters to each at the start of the day, over the
 * stack's MX port (no login, senders on domains of their own, like spam from outside), and a
 * person who moves what the filter left in the INBOX into Junk (an IMAP MOVE: IMAPSieve learns it
 * as spam) and leaves alone what is already in Junk, as people do.
 */
export class SpamTrickle {
  private readonly random: Random;
  private readonly pending = new Map<string, string[]>();
  private serial = 0;
  private day: SpamDay = { delivered: 0, inInbox: 0 };

  constructor(
    private readonly stack: MailStack,
    private readonly receivers: readonly Person[],
    private readonly perDay: number,
    seed: number,
  ) {
    this.random = seededRandom(seed);
  }

  /** `at`: the simulated morning, as the letters' `Date` (the warmup mail carries simulated dates too). */
  async deliver(at: Date): Promise<void> {
    this.day = { delivered: 0, inInbox: 0 };
    const transport = nodemailer.createTransport({ host: this.stack.host, port: this.stack.smtpPort, ignoreTLS: true });
    try {
      for (const receiver of this.receivers) {
        for (let n = 0; n < this.perDay; n += 1) {
          const letter = spamLetter(this.random, receiver, (this.serial += 1));
          await transport.sendMail({ ...letter, date: at });
          this.pending.set(receiver.email, [...(this.pending.get(receiver.email) ?? []), letter.messageId]);
          this.day.delivered += 1;
        }
      }
    } finally {
      transport.close();
    }
  }

  /** Each receiver with spam not looked at yet reads its mailbox: spam in the INBOX goes to Junk. */
  async sweep(): Promise<void> {
    for (const receiver of this.receivers) {
      const ids = this.pending.get(receiver.email) ?? [];
      if (ids.length === 0) continue;
      const session = await openImapSession(mailServerConfigs(this.stack, receiver).imap);
      try {
        const found = await session.findMessages(ids);
        for (const message of found) {
          if (message.role === 'inbox') {
            await session.move(message.folder, message.uid, 'Junk');
            this.day.inInbox += 1;
          }
        }
        const seen = new Set(found.map((f) => f.messageId));
        this.pending.set(
          receiver.email,
          ids.filter((id) => !seen.has(id)),
        );
      } finally {
        await session.close();
      }
    }
  }

  today(): SpamDay {
    return { ...this.day };
  }
}
