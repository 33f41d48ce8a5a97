/*
 * A month of warmup conversations without a mail server: mailboxes in workspaces open threads with
 * partners across the pool, partners answer, openers follow up, each message written as the sender
 * writes it (its words only, without the client's quote and signature). The same month is written
 * twice: by the conversation generator, and by the shipped templates as the engine did before.
 */
import { drawFrom } from '../../src/conversations/grammar.js';
import { writeMessage, writingRegion } from '../../src/conversations/conversation-writer.js';
import type { Intent } from '../../src/conversations/conversation-plan.js';
import { conversationLanguage } from '../../src/conversations/phrase-banks.js';
import { messageVariables, seedFrom, templateTypeFor } from '../../src/engine/message-content.js';
import { DEFAULT_TEMPLATES } from '../../src/templates/default-templates.js';
import { renderMessage } from '../../src/templates/render.js';

const FIRST_NAMES = [
  'Anna',
  'Ben',
  'Clara',
  'David',
  'Elena',
  'Felix',
  'Greta',
  'Hugo',
  'Ines',
  'Jonas',
  'Karin',
  'Leo',
  'Maria',
  'Nils',
  'Olga',
  'Paul',
  'Rosa',
  'Sam',
  'Tara',
  'Uwe',
  'Vera',
  'Will',
  'Yara',
  'Zoe',
  'Amir',
  'Beatriz',
  'Chloé',
  'Dario',
  'Emma',
  'Farid',
  'Gina',
  'Henrik',
  'Ivo',
  'Julia',
  'Kofi',
  'Lina',
  'Marco',
  'Nora',
  'Omar',
  'Pia',
];
const LANGUAGE_MIX = ['en', 'en', 'en', 'en', 'en', 'en', 'de', 'de', 'fr', 'fr', 'es', 'es'];

export interface SimulatedMailbox {
  id: string;
  workspaceId: string;
  email: string;
  name: string;
  language: string;
}

export interface SimulatedMessage {
  sender: SimulatedMailbox;
  recipient: SimulatedMailbox;
  threadId: string;
  turn: number;
  subject: string;
  ownText: string;
  /** What the generator's plan asked in this thread, and the answer the plan gives. */
  intent: Intent;
  answer: string;
  /** The question this message answers or acknowledges (turns 2 and 3), else null. */
  answers: Intent | null;
}

export function simulatedMailboxes(input: { mailboxes: number; workspaces: number; salt: string }): SimulatedMailbox[] {
  return Array.from({ length: input.mailboxes }, (_, i) => {
    const name = `${FIRST_NAMES[i % FIRST_NAMES.length]} ${String.fromCharCode(65 + ((i * 7) % 26))}.`;
    return {
      id: `${input.salt}-mbx-${i}`,
      workspaceId: `${input.salt}-ws-${i % input.workspaces}`,
      email: `${name.split(' ')[0].toLowerCase()}.${i}@example${i % 13}.test`,
      name,
      language: LANGUAGE_MIX[i % LANGUAGE_MIX.length],
    };
  });
}

interface ThreadPlan {
  opener: SimulatedMailbox;
  partner: SimulatedMailbox;
  threadId: string;
  turns: number;
  day: number;
}

/** Who writes to whom over `days` working days: 1–3 new threads per mailbox a day, replies and follow-ups. */
export function simulatedThreads(mailboxes: SimulatedMailbox[], days: number, salt: string): ThreadPlan[] {
  const draw = drawFrom(`threads ${salt}`);
  const threads: ThreadPlan[] = [];
  for (let day = 0; day < days; day++) {
    for (const opener of mailboxes) {
      const count = 1 + Math.floor(draw() * 3);
      for (let n = 0; n < count; n++) {
        let partner = mailboxes[Math.floor(draw() * mailboxes.length)];
        if (partner.id === opener.id) partner = mailboxes[(mailboxes.indexOf(partner) + 1) % mailboxes.length];
        const turns = draw() < 0.6 ? (draw() < 0.5 ? (draw() < 0.3 ? 4 : 3) : 2) : 1;
        threads.push({ opener, partner, threadId: `<${salt}.${day}.${opener.id}.${n}@example.test>`, turns, day });
      }
    }
  }
  return threads;
}

/** The month as the conversation generator writes it for an installation seeded `installationSeed`. */
export function generatedMonth(threads: ThreadPlan[], installationSeed: string): SimulatedMessage[] {
  const out: SimulatedMessage[] = [];
  for (const thread of threads) {
    const language = conversationLanguage(thread.opener.language);
    const openerRegion = writingRegion(installationSeed, thread.opener.workspaceId, thread.opener.id);
    let subject = '';
    for (let turn = 1; turn <= thread.turns; turn++) {
      const [sender, recipient] = turn % 2 === 1 ? [thread.opener, thread.partner] : [thread.partner, thread.opener];
      const written = writeMessage({
        threadId: thread.threadId,
        turn,
        language,
        openerRegion,
        writerRegion: writingRegion(installationSeed, sender.workspaceId, sender.id),
        senderFirstName: sender.name.split(' ')[0],
        recipientFirstName: recipient.name.split(' ')[0],
      });
      if (turn === 1) subject = written.subject;
      out.push({
        sender,
        recipient,
        threadId: thread.threadId,
        turn,
        subject: turn === 1 ? subject : `Re: ${subject}`,
        ownText: written.body,
        intent: written.plan.intent,
        answer: written.plan.answer,
        answers: written.answers,
      });
    }
  }
  return out;
}

/** The same month as the shipped templates wrote it before: each message from a default picked by its seed. */
export function templateMonth(
  threads: ThreadPlan[],
): { sender: SimulatedMailbox; subject: string; turn: number; ownText: string }[] {
  const out: { sender: SimulatedMailbox; subject: string; turn: number; ownText: string }[] = [];
  const at = new Date('2026-03-12T14:20:00Z');
  for (const thread of threads) {
    let subject = '';
    for (let turn = 1; turn <= thread.turns; turn++) {
      const [sender, recipient] = turn % 2 === 1 ? [thread.opener, thread.partner] : [thread.partner, thread.opener];
      const messageId = turn === 1 ? thread.threadId : `${thread.threadId}#${turn}`;
      const type = templateTypeFor({ kind: turn === 1 ? 'initial' : 'reply', turn });
      let candidates = DEFAULT_TEMPLATES.filter((t) => t.type === type && t.language === sender.language);
      if (candidates.length === 0) candidates = DEFAULT_TEMPLATES.filter((t) => t.type === type && t.language === 'en');
      const template = candidates[seedFrom(messageId) % candidates.length];
      const values = messageVariables({
        sender: { email: sender.email, name: sender.name },
        recipient: { email: recipient.email, name: recipient.name },
        language: sender.language,
        timeZone: 'Europe/Berlin',
        at,
        threadSeed: seedFrom(thread.threadId),
      });
      const rendered = renderMessage(template, values, seedFrom(messageId));
      if (turn === 1) subject = rendered.subject;
      out.push({ sender, subject, turn, ownText: rendered.body });
    }
  }
  return out;
}
