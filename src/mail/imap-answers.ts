// Replies to our messages in the owner's folders (a person's answer or an automatic reply), and
// the oldest messages of a folder by what they answer: read by their thread headers only.
import type { SearchObject } from 'imapflow';
import { automaticReplySign } from './auto-reply.js';
import {
  angleTokens,
  answeredMessageIds,
  fieldValues,
  headerBlock,
  headerFields,
  MAX_HEADER_CHARS,
  normalizeMessageId,
} from './headers.js';
import { type FolderRole, isWarmupFolder } from './imap-folders.js';
import { SEARCH_BATCH } from './imap-search.js';
import { type ImapConnection } from './imap-connection.js';
import { MAX_REPLY_BYTES, readableLine, replyExcerpt } from './reply-text.js';
/** A message in the owner's folders that answers one of our messages (a person's or an automatic reply). */
export interface FoundAnswer {
  folder: string;
  role: FolderRole;
  uid: number;
  /** Its own Message-ID, with angle brackets ('' when it has none). */
  messageId: string;
  /**
   * The Message-IDs it had before a provider rewrote it (X-Microsoft-Original-Message-ID), with
   * angle brackets: a warmup reply of ours that Outlook.com renamed is still ours.
   */
  originalMessageIds: string[];
  /** Its Date, when it has a readable one (a reply of ours renamed with nothing kept is known by it). */
  date: Date | null;
  /** Which of our Message-IDs (as the caller passed them) it names, In-Reply-To first. */
  answers: string[];
  /** Sender address. */
  from: string;
  /** The sender's name as their mail client wrote it ('' when none), one line, bounded. */
  fromName: string;
  /** Its subject, one line, bounded. */
  subject: string;
  /** What a person wrote, as bounded plain text without what it quotes ('' for an automatic reply). */
  excerpt: string;
  /** Why it is an automatic reply (e.g. `Auto-Submitted: auto-replied`); null: a person wrote it. */
  automatic: string | null;
}

/** A message of a folder, by the Message-IDs that identify it. */
export interface FolderMessage {
  uid: number;
  /** With angle brackets ('' when it has none). */
  messageId: string;
  /** The Message-IDs it had before a provider rewrote it (X-Microsoft-Original-Message-ID), with angle brackets. */
  originalMessageIds: string[];
  /** The Message-IDs it answers (In-Reply-To, then References), with angle brackets. */
  answers: string[];
  /** Why it is an automatic reply, or null: a person may have written it. */
  automatic: string | null;
}

export async function findAnswers(
  connection: ImapConnection,
  ourMessageIds: string[],
  since: Date,
  limit: number,
): Promise<FoundAnswer[]> {
  const ours = new Map<string, string>();
  for (const id of ourMessageIds) {
    const norm = normalizeMessageId(id);
    if (norm) ours.set(norm, id);
  }
  if (ours.size === 0) return [];
  const folders = (await connection.cachedFolders()).filter(
    (f) => (f.role === 'inbox' || f.role === 'spam' || f.role === 'promotions') && !isWarmupFolder(f),
  );
  const ids = [...ours.keys()];
  const answers: FoundAnswer[] = [];
  for (const folder of folders) {
    await connection.inFolder(
      folder.path,
      async (client) => {
        if (client.mailbox && client.mailbox.exists === 0) return;
        const uids = new Set<number>();
        for (let i = 0; i < ids.length; i += SEARCH_BATCH) {
          const batch = ids.slice(i, i + SEARCH_BATCH);
          const query = {
            since,
            deleted: false,
            or: batch.flatMap((id): SearchObject[] => [
              { header: { 'in-reply-to': id } },
              { header: { references: id } },
            ]),
          };
          const found = await connection.step('SEARCH', client, () => client.search(query, { uid: true }));
          for (const uid of found || []) uids.add(uid);
        }
        const oldest = [...uids].sort((a, b) => a - b).slice(0, limit);
        if (oldest.length === 0) return;
        const messages = await connection.step('FETCH', client, () =>
          client.fetchAll(
            oldest.join(','),
            // BODY.PEEK[]<0.N>: the start of each, never setting \Seen on what a person wrote
            { uid: true, envelope: true, source: { maxLength: MAX_REPLY_BYTES } },
            { uid: true },
          ),
        );
        for (const msg of messages) {
          if (!msg.source) continue;
          const raw = msg.source.toString('latin1');
          const fields = headerFields(headerBlock(raw, MAX_HEADER_CHARS));
          const named: string[] = [];
          for (const token of answeredMessageIds(fields)) {
            const original = ours.get(normalizeMessageId(token));
            if (original !== undefined && !named.includes(original)) named.push(original);
          }
          // SEARCH HEADER matches substrings: only a real In-Reply-To/References counts
          if (named.length === 0) continue;
          const ownId = normalizeMessageId(msg.envelope?.messageId ?? '');
          const date = msg.envelope?.date ? new Date(msg.envelope.date) : null;
          const automatic = automaticReplySign(fields, msg.envelope?.subject);
          answers.push({
            folder: folder.path,
            role: folder.role,
            uid: msg.uid,
            messageId: ownId ? `<${ownId}>` : '',
            originalMessageIds: fieldValues(fields, 'x-microsoft-original-message-id')
              .flatMap(angleTokens)
              .map((token) => `<${normalizeMessageId(token)}>`),
            date: date && Number.isFinite(date.getTime()) ? date : null,
            answers: named,
            from: msg.envelope?.from?.[0]?.address ?? '',
            fromName: readableLine(msg.envelope?.from?.[0]?.name ?? ''),
            subject: readableLine(msg.envelope?.subject ?? ''),
            excerpt: automatic === null ? replyExcerpt(raw) : '',
            automatic,
          });
        }
      },
      true,
    );
  }
  return answers;
}

export async function findOlderThan(
  connection: ImapConnection,
  folder: string,
  before: Date,
  limit: number,
): Promise<FolderMessage[]> {
  const wanted = folder.toLowerCase();
  const match = (await connection.cachedFolders()).find(
    (f) => f.path.toLowerCase() === wanted || f.name.toLowerCase() === wanted,
  );
  if (!match) return [];
  return connection.inFolder(match.path, async (client) => {
    if (client.mailbox && client.mailbox.exists === 0) return [];
    const found = await connection.step('SEARCH', client, () =>
      client.search({ before, deleted: false }, { uid: true }),
    );
    const oldest = (found || []).sort((a, b) => a - b).slice(0, limit);
    if (oldest.length === 0) return [];
    const messages = await connection.step('FETCH', client, () =>
      client.fetchAll(
        oldest.join(','),
        // BODY.PEEK[]<0.N>: a bounded start holding the header, whatever its size; \Seen stays as it is.
        // Every header is read (not a list of names) because an automatic reply is known by names
        // such as X-MS-Exchange-…-AutoReply that no fixed list covers.
        { uid: true, envelope: true, source: { maxLength: MAX_HEADER_CHARS } },
        { uid: true },
      ),
    );
    return messages.map((msg): FolderMessage => {
      const ownId = normalizeMessageId(msg.envelope?.messageId ?? '');
      const fields = msg.source ? headerFields(headerBlock(msg.source.toString('latin1'), MAX_HEADER_CHARS)) : [];
      return {
        uid: msg.uid,
        messageId: ownId ? `<${ownId}>` : '',
        originalMessageIds: fieldValues(fields, 'x-microsoft-original-message-id')
          .flatMap(angleTokens)
          .map((token) => `<${normalizeMessageId(token)}>`),
        answers: answeredMessageIds(fields).map((token) => `<${normalizeMessageId(token)}>`),
        automatic: automaticReplySign(fields, msg.envelope?.subject),
      };
    });
  });
}
