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
import type { TemplateType } from '../templates/templates.schemas.js';
import { boundaryFor, clientProfileOf, type ClientProfile } from './client-profile.js';
import type { EngineDeps } from './engine-deps.js';
import { findMailboxParty } from './mailbox-engine-state.repository.js';
import { composeMessage, displayName, seedFrom, templateTypeFor, type Party } from './message-content.js';
import { findMessageContent, listThread, storeContentOnce } from './warmup-messages.repository.js';

/** What writing a message needs of the engine. */
type MailDeps = Pick<EngineDeps, 'db' | 'templates'>;

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
    mail.boundary = boundaryFor(input.profile.name, input.messageId);
    mail.headers = input.profile.headers;
    mail.quotedPrintable = input.profile.quotedPrintable;
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
  const threading =
    isReply && row.parent_message_id
      ? { inReplyTo: row.parent_message_id, references: await threadReferences(deps, row) }
      : {};

  let content: RenderedMessage | undefined =
    row.subject !== null && row.body_text !== null && row.body_html !== null
      ? { subject: row.subject, body: row.body_text, html: row.body_html }
      : undefined;
  if (!content) {
    const settings = parseWarmupSettings(sender.warmup);
    const type: TemplateType = isReply ? templateTypeFor(row) : 'initial';
    const pick = (templateType: TemplateType) =>
      deps.templates.pickTemplate(
        sender.workspace_id,
        { type: templateType, language: settings.language },
        seedFrom(row.message_id),
      );
    // a workspace that deleted its follow-ups answers with a reply template instead
    const template = (await pick(type)) ?? (type === 'followup' ? await pick('reply') : undefined);
    if (!template) throw new Error(`the workspace has no "${type}" template (language ${settings.language} or en)`);
    const composed = composeMessage({
      template,
      kind: isReply ? 'reply' : 'initial',
      sender: senderParty,
      recipient,
      profile: clientProfileOf(sender.id).name,
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
      template_id: template.id,
    });
    if (!stored) return null;
    content = {
      subject: stored.subject ?? composed.subject,
      body: stored.body_text ?? composed.body,
      html: stored.body_html ?? composed.html,
    };
  }
  return outgoingMail({
    sender: senderParty,
    recipient,
    messageId: row.message_id,
    content,
    profile: clientProfileOf(sender.id),
    date: now,
    timeZone: validTimeZone(parseWarmupSettings(sender.warmup).timezone),
    ...threading,
  });
}

/** The thread's Message-IDs from its first message down to the parent, for `References`. */
async function threadReferences(deps: MailDeps, row: WarmupMessageRow): Promise<string[]> {
  const thread = await listThread(deps.db, row.thread_id);
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
