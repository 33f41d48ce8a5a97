/*
 * What goes into a warmup email besides the template: the variable values, names derived from
 * addresses, the quote of the parent in a reply, threading subjects and Message-IDs. Pure: the same
 * inputs (and seed) always give the same message, so a retry after a crash resends the same text.
 */
import { createHash } from 'node:crypto';
import { COMPANIES, TOPICS_BY_LANGUAGE } from '../templates/default-templates.js';
import { bodyToHtml, renderMessage, type RenderedMessage, type TemplateVariable } from '../templates/render.js';
import type { TemplateType } from '../templates/templates.schemas.js';
import {
  attributionLines,
  clientHtml,
  clientText,
  messageIdHost,
  replyMessageIdToken,
  replyPrefix,
  type ClientProfileName,
  type QuoteParts,
} from './client-profile.js';

export type MessageVariables = Record<TemplateVariable, string>;

/** One side of a message: a mailbox's address and optional display name. */
export interface Party {
  email: string;
  name: string | null;
}

/** A stable, non-negative safe-integer seed from any text (a Message-ID, a thread id). */
export function seedFrom(text: string): number {
  return createHash('sha256').update(text).digest().readUIntBE(0, 6);
}

/**
 * A display name from an address when the mailbox has none: `john.smith+news@x` → "John Smith".
 * Digits and tags are dropped; what is left of the local part is split on `.`, `_` and `-`.
 */
export function nameFromAddress(email: string): string {
  const local = email.split('@')[0]?.split('+')[0] ?? '';
  const words = local
    .replace(/[0-9]+/g, ' ')
    .split(/[._\-\s]+/)
    .filter((word) => word.length > 0)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase());
  return words.length > 0 ? words.join(' ') : local || email;
}

export function displayName(party: Party): string {
  const name = party.name?.trim();
  return name ? name : nameFromAddress(party.email);
}

export function firstName(name: string): string {
  return name.trim().split(/\s+/)[0] ?? name;
}

/** Picks from a list by seed; `salt` lets two picks from one seed be independent. */
function pick<T>(items: readonly T[], seed: number, salt: string): T {
  return items[seedFrom(`${seed}:${salt}`) % items.length];
}

export function topicFor(language: string, seed: number): string {
  const topics = TOPICS_BY_LANGUAGE[language] ?? TOPICS_BY_LANGUAGE.en;
  return pick(topics, seed, 'topic');
}

export function companyFor(seed: number): string {
  return pick(COMPANIES, seed, 'company');
}

/** Weekday and date of an instant in a time zone, in the language of the message ("Donnerstag", "14. März"). */
export function localizedDay(at: Date, language: string, timeZone: string): { dayOfWeek: string; date: string } {
  const { dayOfWeek, date } = dayFormatsFor(language, timeZone);
  return { dayOfWeek: dayOfWeek.format(at), date: date.format(at) };
}

// Made once per language and zone: making formatters (and looking the locale up) costs far more
// than formatting, and every message written asks for them. Languages come from templates (any two
// letters), so the cache starts again past a bound rather than grow with what tenants write.
const dayFormats = new Map<string, { dayOfWeek: Intl.DateTimeFormat; date: Intl.DateTimeFormat }>();
const DAY_FORMATS_MAX = 2_000;

function dayFormatsFor(language: string, timeZone: string) {
  const key = `${language}\n${timeZone}`;
  let formats = dayFormats.get(key);
  if (!formats) {
    const locale = Intl.DateTimeFormat.supportedLocalesOf([language]).length > 0 ? language : 'en';
    formats = {
      dayOfWeek: new Intl.DateTimeFormat(locale, { weekday: 'long', timeZone }),
      date: new Intl.DateTimeFormat(locale, { month: 'long', day: 'numeric', timeZone }),
    };
    if (dayFormats.size >= DAY_FORMATS_MAX) dayFormats.clear();
    dayFormats.set(key, formats);
  }
  return formats;
}

export interface VariableInput {
  sender: Party;
  recipient: Party;
  /** The sender's language and time zone: the message is written and dated by the sender. */
  language: string;
  timeZone: string;
  at: Date;
  /** Seed of the thread, so that both sides of a conversation talk about the same topic and company. */
  threadSeed: number;
}

/** Every known variable, filled: a template may use any of them. */
export function messageVariables(input: VariableInput): MessageVariables {
  const senderName = displayName(input.sender);
  const recipientName = displayName(input.recipient);
  const { dayOfWeek, date } = localizedDay(input.at, input.language, input.timeZone);
  return {
    recipient_name: recipientName,
    recipient_first_name: firstName(recipientName),
    recipient_email: input.recipient.email,
    sender_name: senderName,
    sender_first_name: firstName(senderName),
    sender_email: input.sender.email,
    topic: topicFor(input.language, input.threadSeed),
    company: companyFor(input.threadSeed),
    day_of_week: dayOfWeek,
    date,
  };
}

/**
 * The reply's subject with the replier's client's prefix (`Re:`, Outlook's `RE:` or `AW:`) once,
 * however deep the thread: the prefixes the other side's client wrote are taken off first, as a
 * client that recognises them does, so they never stack.
 */
export function replySubject(subject: string, profile: ClientProfileName = 'thunderbird', language = 'en'): string {
  const bare = subject.replace(/^\s*((re|aw|sv|antw|r|rif|res|ref)\s*:\s*)+/i, '').trim();
  return `${replyPrefix(profile, language)} ${bare}`;
}

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/** A Message-ID on the sender's domain, from a unique token (`<token@domain>`). */
export function messageIdFor(senderEmail: string, token: string): string {
  return `<${token}@${domainOf(senderEmail)}>`;
}

/**
 * The Message-ID of the reply to `parentMessageId`, derived from it and in the replier's client's
 * form: a sync that crashed after planning a reply plans the same one again (and the unique
 * Message-ID keeps it single).
 */
export function replyMessageIdFor(
  replierEmail: string,
  parentMessageId: string,
  profile: ClientProfileName,
  at?: Date,
): string {
  return `<${replyMessageIdToken(profile, parentMessageId, at)}@${messageIdHost(profile, replierEmail)}>`;
}

/** Which message of a thread is the original sender's answer to the reply: the third. */
export const FOLLOWUP_TURN = 3;

/**
 * The template a warmup message is written from: `initial` opens a thread, the original sender's
 * answer to the reply (turn 3) is a `followup`, every other answer a `reply`.
 */
export function templateTypeFor(message: { kind: string; turn: number }): TemplateType {
  if (message.kind !== 'reply') return 'initial';
  return message.turn === FOLLOWUP_TURN ? 'followup' : 'reply';
}

export interface ComposeInput {
  template: { subject: string; body: string };
  kind: 'initial' | 'reply';
  sender: Party;
  recipient: Party;
  /** The sender's mail client: it lays out text, HTML, signature and quote. */
  profile: ClientProfileName;
  /** The sender's language and time zone. */
  language: string;
  timeZone: string;
  at: Date;
  messageId: string;
  threadId: string;
  /** The message a reply answers; its author is the reply's recipient. */
  parent?: {
    subject: string | null;
    body: string | null;
    /** Its HTML as sent (older rows may have none: the text is shown as HTML then). */
    html?: string | null;
    sentAt: Date | null;
    messageId?: string;
  };
}

/**
 * Subject, text and HTML of one warmup message: the template rendered with the message's variables
 * and a seed from its Message-ID, signed with the sender's name and laid out the way the sender's
 * client does it; a reply takes the thread's subject with `Re:` and quotes its parent whole (with
 * the older quotes it carries), under the client's own attribution line.
 */
export function composeMessage(input: ComposeInput): RenderedMessage {
  const seed = seedFrom(input.messageId);
  const values = messageVariables({
    sender: input.sender,
    recipient: input.recipient,
    language: input.language,
    timeZone: input.timeZone,
    at: input.at,
    threadSeed: seedFrom(input.threadId),
  });
  const rendered = renderMessage(input.template, values, seed);
  const signature = displayName(input.sender);
  const parent = input.parent;
  const subject =
    input.kind === 'reply' && parent
      ? replySubject(parent.subject ?? rendered.subject, input.profile, input.language)
      : rendered.subject;
  if (input.kind !== 'reply' || !parent?.body || !parent.sentAt) {
    return {
      subject,
      body: clientText(input.profile, rendered.body, signature),
      html: clientHtml(input.profile, rendered.body, signature),
    };
  }
  const quote: QuoteParts = {
    attribution: attributionLines(input.profile, {
      sentAt: parent.sentAt,
      author: { name: displayName(input.recipient), email: input.recipient.email },
      recipient: { name: signature, email: input.sender.email },
      subject: parent.subject ?? rendered.subject,
      language: input.language,
      timeZone: input.timeZone,
    }),
    parentText: parent.body,
    parentHtml: parent.html ?? bodyToHtml(parent.body),
    ...(parent.messageId ? { parentMessageId: parent.messageId } : {}),
  };
  return {
    subject,
    body: clientText(input.profile, rendered.body, signature, quote),
    html: clientHtml(input.profile, rendered.body, signature, quote),
  };
}
