/*
 * Writes one message of a planned conversation: the opening asks the plan's question, the reply
 * answers it (its sentence for that question names the plan's answer), the follow-up acknowledges
 * the answer and any later turn closes the exchange. The wording is drawn in the writer's own
 * region from (thread, turn), so a retry writes the same words and another installation other ones.
 */
import { createHmac } from 'node:crypto';
import { drawFrom, expandRule, tidySentence, type Draw } from './grammar.js';
import { planConversation, type ConversationPlan, type Intent } from './conversation-plan.js';
import { bankFor, conversationLanguage, type ConversationLanguage, type PhraseBank } from './phrase-banks.js';

/**
 * The installation's own seed for wording, derived one way from its secret key: it never reveals
 * the key, and it stays the same for as long as the key does.
 */
export function installationSeedFrom(secretKey: Buffer): string {
  return createHmac('sha256', secretKey).update('conversation wording region').digest('hex');
}

/**
 * The region of the phrase space a mailbox writes from: its installation's and workspace's, and
 * within them its own habits (people keep to their favourite phrases, and differ from colleagues).
 */
export function writingRegion(installationSeed: string, workspaceId: string, mailboxId: string): string {
  return createHmac('sha256', installationSeed)
    .update(`workspace ${workspaceId}\nmailbox ${mailboxId}`)
    .digest('hex')
    .slice(0, 32);
}

export interface WriteInput {
  /** The thread's id (its first Message-ID): with the turn, it seeds every choice. */
  threadId: string;
  /** 1 opens the thread, 2 answers it, 3 is the opener's follow-up, later turns close it. */
  turn: number;
  /** The thread's language: every turn is written in it, whatever the writer's own setting. */
  language: ConversationLanguage;
  /** The opener's region: it plans the conversation, so both sides share one plan. */
  openerRegion: string;
  /** The region of this message's writer: it chooses the wording. */
  writerRegion: string;
  senderFirstName: string;
  recipientFirstName: string;
}

export interface WrittenMessage {
  /** The subject of an opening message (replies take the thread's own subject). */
  subject: string;
  /** The writer's own words, signed with their first name; the client adds quote and signature. */
  body: string;
  plan: ConversationPlan;
  /** The question the text answers (turn 2) or whose answer it acknowledges (turn 3), else null. */
  answers: Intent | null;
}

interface Writer {
  bank: PhraseBank;
  region: string;
  draw: Draw;
  slots: Record<string, string>;
}

function sentence(writer: Writer, rule: string): string {
  let text = expandRule(rule, {
    rules: writer.bank.rules,
    region: writer.region,
    draw: writer.draw,
    slots: writer.slots,
  });
  for (const [pattern, replacement] of writer.bank.contractions) text = text.replace(pattern, replacement);
  return tidySentence(text);
}

function paragraph(...sentences: string[]): string {
  return sentences.filter((s) => s.length > 0).join(' ');
}

export function writeMessage(input: WriteInput): WrittenMessage {
  const plan = planConversation({ threadId: input.threadId, region: input.openerRegion, language: input.language });
  const bank = bankFor(input.language);
  const draw = drawFrom(`${input.writerRegion}\n${input.threadId}\n${input.turn}`);
  const writer: Writer = {
    bank,
    region: input.writerRegion,
    draw,
    slots: { ...plan.slots, first: input.recipientFirstName, me: input.senderFirstName },
  };
  const subjectWriter: Writer = {
    ...writer,
    region: input.openerRegion,
    draw: drawFrom(`${input.openerRegion}\n${input.threadId}\nsubject`),
  };
  const subject = sentence(subjectWriter, `subject_${plan.intent}`);
  const intent = plan.intent;
  const paragraphs: string[] = [];
  let answers: Intent | null = null;
  if (input.turn <= 1) {
    paragraphs.push(sentence(writer, 'greeting'));
    const opener = draw() < 0.45 ? sentence(writer, 'opener') : '';
    if (opener && draw() < 0.4) paragraphs.push(opener);
    paragraphs.push(
      paragraph(
        paragraphs.length === 2 ? '' : opener,
        sentence(writer, 'context'),
        sentence(writer, `question_${intent}`),
      ),
    );
    paragraphs.push(sentence(writer, 'closing_initial'));
  } else if (input.turn === 2) {
    paragraphs.push(sentence(writer, 'greeting'));
    paragraphs.push(
      paragraph(
        sentence(writer, 'thanks_reply'),
        sentence(writer, `answer_${intent}`),
        sentence(writer, 'extra_reply'),
      ),
    );
    paragraphs.push(sentence(writer, 'closing_reply'));
    answers = intent;
  } else if (input.turn === 3) {
    if (draw() < 0.5) paragraphs.push(sentence(writer, 'greeting'));
    paragraphs.push(paragraph(sentence(writer, `ack_${intent}`), sentence(writer, 'next_step')));
    answers = intent;
  } else {
    paragraphs.push(sentence(writer, 'final_note'));
  }
  paragraphs.push(sentence(writer, 'signoff'));
  return { subject, body: paragraphs.filter((p) => p.length > 0).join('\n\n'), plan, answers };
}

/**
 * A fresh subject and body for a message that opens a thread, in `language` (any setting; the
 * generator writes en, de, fr and es, English for others), seeded by `seed`: for mail that is not
 * part of a warmup thread, such as a mailbox's connection check.
 */
export function writeOpeningMessage(input: {
  language: string;
  seed: string;
  region: string;
  senderFirstName: string;
  recipientFirstName: string;
}): { subject: string; body: string } {
  const written = writeMessage({
    threadId: input.seed,
    turn: 1,
    language: conversationLanguage(input.language),
    openerRegion: input.region,
    writerRegion: input.region,
    senderFirstName: input.senderFirstName,
    recipientFirstName: input.recipientFirstName,
  });
  return { subject: written.subject, body: written.body };
}
