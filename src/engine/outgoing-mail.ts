/*
 * The message a warmup send puts on the wire: its content, written once at the first attempt and
 * kept on the row so a retry sends the same words, and the envelope and headers around it in the
 * sender's own mail client's manner.
 */
import { validTimeZone } from '../calendar.js';
import type { MailboxRow, WarmupMessageRow } from '../db/schema.js';
import type { OutgoingMail } from '../mail/smtp.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import type { RenderedMessage } from '../templates/render.js';
import { boundaryFor, clientProfileOf, outlookIdTime, threadIndexFor, type ClientProfile } from './client-profile.js';
import type { EngineDeps } from './engine-deps.js';
import { findMailboxParty } from './mailbox-engine-state.repository.js';
import { composeMessage, displayName, type Party } from './message-content.js';
import { wordsFor } from './message-words.js';
import { findMessageContent, listThread, storeContentOnce } from './warmup-messages.repository.js';

/** What writing a message needs of the engine. */
type MailDeps = Pick<EngineDeps, 'db' | 'templates' | 'installationSeed'>;

/** The envelope and headers of a warmup message around its content; nothing in it says "warmup". */
export function outgoingMail(input: {
  sender: Party;
  recipient: Party;
  messageId: string;
  content: RenderedMessage;
  /** The sender's mail client: its boundary style and the headers it writes about itself. */
  profile?: ClientProfile;
  date: Date;
  /** The sender's zone: its Date carries that local time and offset, as its mail client's would. */
  timeZone?: string;
  inReplyTo?: string;
  references?: string[];
  /** The language the mail is written in (Content-Language). */
  language?: string;
  /** Outlook's Thread-Index of the message (threadIndexFor). */
  threadIndex?: string;
}): OutgoingMail {
  const mail: OutgoingMail = {
    from: { name: displayName(input.sender), address: input.sender.email },
    to: { name: displayName(input.recipient), address: input.recipient.email },
    subject: input.content.subject,
    text: input.content.body,
    html: input.content.html,
    messageId: input.messageId,
    date: input.date,
  };
  if (input.timeZone) mail.timeZone = input.timeZone;
  if (input.profile) {
    mail.boundary = boundaryFor(input.profile.name, input.messageId, input.timeZone);
    mail.headers = input.profile.headers;
    mail.client = {
      style: input.profile.name,
      language: input.language ?? 'en',
      ...(input.profile.name === 'outlook' && input.threadIndex ? { threadIndex: input.threadIndex } : {}),
    };
  }
  if (input.inReplyTo) mail.inReplyTo = input.inReplyTo;
  if (input.references?.length) mail.references = input.references;
  return mail;
}

/**
 * The message as it goes out. Written at the first attempt and stored on the row, so a retry
 * sends exactly the same text. Null when the row or its recipient no longer exists.
 */
export async function prepareMail(
  deps: MailDeps,
  now: Date,
  sender: MailboxRow,
  row: WarmupMessageRow,
): Promise<OutgoingMail | null> {
  const recipient = await findMailboxParty(deps.db, row.recipient_mailbox_id);
  if (!recipient) return null;
  const senderParty = { email: sender.email, name: sender.name };
  const isReply = row.kind === 'reply' && row.parent_message_id !== null;
  const parent =
    isReply && row.parent_message_id ? await findMessageContent(deps.db, row.parent_message_id) : undefined;
  const thread = await listThread(deps.db, row.thread_id);
  const threading =
    isReply && row.parent_message_id
      ? { inReplyTo: row.parent_message_id, references: threadReferences(thread, row) }
      : {};

  let content: RenderedMessage | undefined =
    row.subject !== null && row.body_text !== null && row.body_html !== null
      ? { subject: row.subject, body: row.body_text, html: row.body_html }
      : undefined;
  if (!content) {
    const settings = parseWarmupSettings(sender.warmup);
    const words = await wordsFor(deps, sender, row, recipient);
    const composed = composeMessage({
      template: words.template,
      kind: isReply ? 'reply' : 'initial',
      sender: senderParty,
      recipient,
      profile: clientProfileOf(sender).name,
      language: settings.language,
      timeZone: validTimeZone(settings.timezone),
      at: now,
      messageId: row.message_id,
      threadId: row.thread_id,
      ...(parent
        ? {
            parent: {
              subject: parent.subject,
              body: parent.body_text,
              html: parent.body_html,
              sentAt: parent.sent_at ? new Date(parent.sent_at) : null,
              ...(row.parent_message_id ? { messageId: row.parent_message_id } : {}),
            },
          }
        : {}),
    });
    // Only the first writer's text counts: a worker racing on the same row sends the same words.
    const stored = await storeContentOnce(deps.db, row.id, {
      subject: composed.subject,
      body_text: composed.body,
      body_html: composed.html,
      template_id: words.templateId,
    });
    if (!stored) return null;
    content = {
      subject: stored.subject ?? composed.subject,
      body: stored.body_text ?? composed.body,
      html: stored.body_html ?? composed.html,
    };
  }
  const profile = clientProfileOf(sender);
  const settings = parseWarmupSettings(sender.warmup);
  return outgoingMail({
    sender: senderParty,
    recipient,
    messageId: row.message_id,
    content,
    profile,
    date: now,
    timeZone: validTimeZone(settings.timezone),
    language: settings.language,
    ...(profile.name === 'outlook' ? { threadIndex: threadIndexOf(thread, row, now) } : {}),
    ...threading,
  });
}

type ThreadRow = Awaited<ReturnType<typeof listThread>>[number];

/** When a message of the thread went out (or is due), for Outlook's Thread-Index. */
function timeOf(message: ThreadRow | WarmupMessageRow): Date {
  return new Date(message.sent_at ?? message.due_at);
}

/**
 * Outlook's Thread-Index: the thread's first message's time and the thread, then a block for each
 * reply down to this one, this one at its send time.
 */
function threadIndexOf(thread: ThreadRow[], row: WarmupMessageRow, now: Date): string {
  const byId = new Map(thread.map((m) => [m.message_id, m]));
  const root = byId.get(row.thread_id);
  const started = root ? (outlookIdTime(root.message_id) ?? timeOf(root)) : now;
  const replies: Date[] = [];
  let current = row.parent_message_id;
  while (current && current !== row.thread_id && replies.length < 20) {
    const parent = byId.get(current);
    if (!parent) break;
    replies.unshift(timeOf(parent));
    current = parent.parent_message_id;
  }
  if (row.kind === 'reply') replies.push(now);
  return threadIndexFor(row.thread_id, started, replies);
}

/** The thread's Message-IDs from its first message down to the parent, for `References`. */
function threadReferences(thread: ThreadRow[], row: WarmupMessageRow): string[] {
  const parentOf = new Map(thread.map((m) => [m.message_id, m.parent_message_id]));
  const chain: string[] = [];
  let current = row.parent_message_id;
  while (current && !chain.includes(current) && chain.length < 20) {
    chain.unshift(current);
    current = parentOf.get(current) ?? null;
  }
  if (chain[0] !== row.thread_id) chain.unshift(row.thread_id);
  return chain;
}
