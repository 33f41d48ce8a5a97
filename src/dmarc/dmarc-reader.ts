// The `dmarc` job: reads the new messages of each workspace's report folder over IMAP, keeps the
// DMARC aggregate reports found in their attachments, files each message whose report it kept (or
// had kept already) into `<folder>/Processed`, and touches nothing else. A message it did not
// identify as a report stays where it is, unread if it was (BODY.PEEK throughout): one without a
// report-like attachment, and one whose attachment it set aside (malformed, too large, a bomb, not
// a report), which may be a person's mail with a zip in a folder the owner shares with reports.
// The folder's UID mark moves past both, so neither is looked at again.
import type { EngineDeps } from '../engine/engine-deps.js';
import { openImapSession, type ImapSession, type MessagePart, type PartsMessage } from '../mail/imap.js';
import { insertReport, insertSetAside, listSources, markSource, type DmarcSourceRow } from './dmarc.repository.js';
import { mayBeReport, parseReportAttachment } from './report-parser.js';

/** Messages looked at per source and pass: a folder of years of reports is worked through over passes. */
export const MAX_MESSAGES_PER_PASS = 50;
/**
 * The most of one attachment downloaded (encoded): the IMAP connection refuses a literal of more
 * than 2 MiB (mail/imap-connection.ts), and a report's archive is rarely over a few hundred KiB.
 */
export const MAX_PART_BYTES = 1536 * 1024;
/** Attachments tried per message: a report mail has one. */
const MAX_CANDIDATES = 3;

export const PROCESSED_FOLDER = 'Processed';

export interface DmarcSummary {
  /** Sources (workspaces' report folders) read. */
  sources: number;
  /** Reports kept, and reports already kept (read again: counted once). */
  stored: number;
  duplicates: number;
  /** Messages whose attachment was set aside with a reason (left where they are). */
  setAside: number;
  /** Messages left where they are: no attachment that may be a report. */
  left: number;
  /** Sources whose read failed (the reason is kept on the source). */
  failed: number;
}

/** The subfolder read reports are moved to, beside nothing else: `<folder><delimiter>Processed`. */
export function processedFolderOf(folder: string, delimiter = '/'): string {
  return `${folder}${delimiter}${PROCESSED_FOLDER}`;
}

type Outcome =
  { kind: 'stored' | 'duplicate' } | { kind: 'set_aside'; code: string; reason: string } | { kind: 'left' };

async function readMessage(
  deps: EngineDeps,
  session: ImapSession,
  source: DmarcSourceRow,
  message: PartsMessage,
): Promise<Outcome> {
  const candidates = message.parts.filter((p: MessagePart) => mayBeReport(p.filename, p.type)).slice(0, MAX_CANDIDATES);
  if (candidates.length === 0) return { kind: 'left' };
  let refusal: { code: string; reason: string } | null = null;
  for (const part of candidates) {
    const bytes = await session.fetchPart!(source.folder, message.uid, part, MAX_PART_BYTES);
    if (!bytes) {
      refusal ??= { code: 'oversized', reason: `The attachment is larger than ${MAX_PART_BYTES / 1024} KiB.` };
      continue;
    }
    const parsed = parseReportAttachment(bytes);
    if (!parsed.ok) {
      refusal ??= { code: parsed.code, reason: parsed.reason };
      continue;
    }
    const kept = await insertReport(deps.db, source.workspace_id, parsed.report, deps.clock.now().toISOString());
    return { kind: kept };
  }
  return { kind: 'set_aside', ...refusal! };
}

async function readSource(
  deps: EngineDeps,
  source: DmarcSourceRow,
  summary: DmarcSummary,
  signal: AbortSignal | undefined,
): Promise<void> {
  let mark = source.last_uid;
  let uidValidity = source.uid_validity;
  let session: ImapSession | undefined;
  try {
    const { imap } = await deps.mailboxes.getCredentials(source.mailbox_id);
    session = await (deps.imap ?? openImapSession)(imap, { timeoutMs: deps.settings.imapTimeoutMs, signal });
    if (!session.listParts || !session.fetchPart) throw new Error('this mail client cannot read attachments');
    const folders = await session.folders();
    const folder = folders.find((f) => f.path === source.folder);
    if (!folder) throw new Error(`the folder "${source.folder}" does not exist in the mailbox`);
    let page = await session.listParts(source.folder, mark, MAX_MESSAGES_PER_PASS);
    if (page.uidValidity !== uidValidity) {
      // a new UIDVALIDITY (or the first read): the UIDs of before name other messages now
      uidValidity = page.uidValidity;
      if (mark !== 0) page = await session.listParts(source.folder, (mark = 0), MAX_MESSAGES_PER_PASS);
    }
    const { messages } = page;
    let processed: string | null = null;
    for (const message of messages) {
      if (signal?.aborted) break;
      const outcome = await readMessage(deps, session, source, message);
      if (outcome.kind === 'set_aside') {
        await insertSetAside(deps.db, {
          workspaceId: source.workspace_id,
          mailboxId: source.mailbox_id,
          subject: message.subject,
          code: outcome.code,
          reason: outcome.reason,
          now: deps.clock.now().toISOString(),
        });
        summary.setAside++;
      } else if (outcome.kind === 'left') {
        summary.left++;
      } else {
        summary[outcome.kind === 'stored' ? 'stored' : 'duplicates']++;
      }
      if (outcome.kind === 'stored' || outcome.kind === 'duplicate') {
        processed ??= await session.ensureFolder(processedFolderOf(source.folder, folder.delimiter || '/'));
        await session.move(source.folder, message.uid, processed);
      }
      mark = message.uid;
    }
    await markSource(deps.db, source, {
      uid_validity: uidValidity,
      last_uid: mark,
      checked_at: deps.clock.now().toISOString(),
      last_error: null,
    });
  } catch (err) {
    // what was done stays done: the mark keeps the messages already filed
    await markSource(deps.db, source, {
      uid_validity: uidValidity,
      last_uid: mark,
      checked_at: deps.clock.now().toISOString(),
      last_error: err instanceof Error ? err.message.slice(0, 500) : String(err),
    });
    throw err;
  } finally {
    await session?.close();
  }
}

/** One pass over every workspace's report folder. A source that fails does not stop the others. */
export async function readDmarcReports(
  deps: EngineDeps,
  { signal }: { signal?: AbortSignal } = {},
): Promise<DmarcSummary> {
  const summary: DmarcSummary = { sources: 0, stored: 0, duplicates: 0, setAside: 0, left: 0, failed: 0 };
  for (const source of await listSources(deps.db)) {
    if (signal?.aborted) break;
    try {
      await readSource(deps, source, summary, signal);
      summary.sources++;
    } catch (err) {
      summary.failed++;
      deps.logger.warn({ workspaceId: source.workspace_id, err }, 'reading DMARC reports failed');
    }
  }
  return summary;
}
