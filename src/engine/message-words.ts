/*
 * Which words a warmup message is written with. Most messages come from the conversation
 * generator: the thread is planned by its opener (topic, question, answer) in the opener's language
 * and region, and each turn is worded in its writer's region. A workspace with templates of its own
 * opens a share of its threads from them (OWN_TEMPLATE_SHARE); such a thread is answered from
 * templates, as before, since the generator cannot know what a free-form template asked.
 */
import { writeMessage, writingRegion, type WrittenMessage } from '../conversations/conversation-writer.js';
import { conversationLanguage } from '../conversations/phrase-banks.js';
import type { MailboxRow, WarmupMessageRow } from '../db/schema.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import type { TemplateType } from '../templates/templates.schemas.js';
import type { EngineDeps } from './engine-deps.js';
import { displayName, firstName, seedFrom, templateTypeFor, type Party } from './message-content.js';
import { findThreadOpener } from './warmup-messages.repository.js';

/** The share of a workspace's new threads opened from its own templates, when it has any in the language. */
export const OWN_TEMPLATE_SHARE = 0.25;

type WordsDeps = Pick<EngineDeps, 'db' | 'templates' | 'installationSeed' | 'wording'>;

export interface MessageWords {
  /** Subject and body to render (a template's own syntax, or the generator's plain text). */
  template: { subject: string; body: string };
  /** The template used, or null when the conversation generator wrote the words. */
  templateId: string | null;
}

/** Whether a thread opened by a workspace with its own templates is opened from them. */
export function opensFromOwnTemplate(threadId: string): boolean {
  return (seedFrom(`own template share\n${threadId}`) % 10_000) / 10_000 < OWN_TEMPLATE_SHARE;
}

export async function wordsFor(
  deps: WordsDeps,
  sender: MailboxRow,
  row: WarmupMessageRow,
  recipient: Party,
): Promise<MessageWords> {
  const settings = parseWarmupSettings(sender.warmup);
  const senderRegion = writingRegion(deps.installationSeed, sender.workspace_id, sender.id);
  const names = {
    senderFirstName: firstName(displayName({ email: sender.email, name: sender.name })),
    recipientFirstName: firstName(displayName(recipient)),
  };
  const isReply = row.kind === 'reply' && row.parent_message_id !== null;
  const seed = seedFrom(row.message_id);
  if (!isReply) {
    if (opensFromOwnTemplate(row.thread_id)) {
      const own = await deps.templates.pickTemplate(
        sender.workspace_id,
        { type: 'initial', language: settings.language, ownOnly: true },
        seed,
      );
      if (own) return { template: own, templateId: own.id };
    }
    const written = writeMessage({
      threadId: row.thread_id,
      turn: 1,
      language: conversationLanguage(settings.language),
      openerRegion: senderRegion,
      writerRegion: senderRegion,
      ...names,
    });
    return { template: { subject: written.subject, body: await bodyOf(deps, written, 1, names) }, templateId: null };
  }
  const opener = await findThreadOpener(deps.db, row.thread_id);
  if (opener && opener.template_id !== null) {
    const type: TemplateType = templateTypeFor(row);
    const pick = (templateType: TemplateType) =>
      deps.templates.pickTemplate(sender.workspace_id, { type: templateType, language: settings.language }, seed);
    // a workspace that deleted its follow-ups answers with a reply template instead
    const template = (await pick(type)) ?? (type === 'followup' ? await pick('reply') : undefined);
    if (template) return { template, templateId: template.id };
  }
  // The thread's language is its opener's: the answer is written in it, whatever the replier's setting.
  const language = conversationLanguage(opener ? parseWarmupSettings(opener.warmup).language : settings.language);
  const written = writeMessage({
    threadId: row.thread_id,
    turn: row.turn,
    language,
    openerRegion: opener
      ? writingRegion(deps.installationSeed, opener.workspace_id, opener.sender_mailbox_id)
      : senderRegion,
    writerRegion: senderRegion,
    ...names,
  });
  return {
    template: { subject: written.subject, body: await bodyOf(deps, written, row.turn, names) },
    templateId: null,
  };
}

/**
 * The body of a generator-written message: the operator's endpoint's wording of the same plan when
 * one is set and its text passes the rules, else the built-in wording. The generator's text is
 * plain (no template syntax), so the endpoint's, checked to hold no braces either, renders as is.
 */
async function bodyOf(
  deps: WordsDeps,
  written: WrittenMessage,
  turn: number,
  names: { senderFirstName: string; recipientFirstName: string },
): Promise<string> {
  if (!deps.wording) return written.body;
  const outcome = await deps.wording.word({
    language: written.plan.language,
    plan: written.plan,
    turn,
    ...names,
    draft: written.body,
  });
  return outcome.used ? outcome.body : written.body;
}
