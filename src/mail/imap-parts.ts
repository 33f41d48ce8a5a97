// The messages of one folder above a UID mark, by their MIME structure, and one part of one of them
// downloaded: what reading attachments (DMARC reports) needs without downloading whole messages.
// Everything is fetched with BODY.PEEK, so \Seen stays as the owner left it.
import type { MessageStructureObject } from 'imapflow';
import type { ImapConnection } from './imap-connection.js';

/** A leaf of a message's MIME tree. */
export interface MessagePart {
  /** The part's number for BODY[n] (`1` for the body of a message that is not multipart). */
  part: string;
  /** `type/subtype`, lower case. */
  type: string;
  /** Its file name (Content-Disposition's filename, else Content-Type's name), or null. */
  filename: string | null;
  /** Content-Transfer-Encoding, lower case (`base64`, `7bit`…). */
  encoding: string;
  /** Encoded size in bytes, as the server says. */
  size: number;
}

export interface PartsMessage {
  uid: number;
  /** RFC822.SIZE: the whole message's size. */
  size: number;
  subject: string;
  parts: MessagePart[];
}

export interface FolderPage {
  /** The folder's UIDVALIDITY: when it changes, the UIDs of before name other messages. */
  uidValidity: string;
  /** Messages above the mark, not \Deleted, oldest first, at most the limit. */
  messages: PartsMessage[];
  /** Whether more messages lie above the last one given. */
  more: boolean;
}

/** A MIME tree has a handful of leaves; a tree of thousands is nobody's mail. */
const MAX_PARTS = 64;

function leaves(node: MessageStructureObject, out: MessagePart[]): void {
  if (out.length >= MAX_PARTS) return;
  if (node.childNodes && node.childNodes.length > 0) {
    for (const child of node.childNodes) leaves(child, out);
    return;
  }
  out.push({
    part: node.part ?? '1',
    type: (node.type ?? '').toLowerCase(),
    filename: node.dispositionParameters?.filename ?? node.parameters?.name ?? null,
    encoding: (node.encoding ?? '7bit').toLowerCase(),
    size: node.size ?? 0,
  });
}

export async function listParts(
  connection: ImapConnection,
  folder: string,
  afterUid: number,
  limit: number,
): Promise<FolderPage> {
  return connection.inFolder(
    folder,
    async (client) => {
      const uidValidity = String(client.mailbox ? client.mailbox.uidValidity : '');
      if (client.mailbox && client.mailbox.exists === 0) return { uidValidity, messages: [], more: false };
      const found = await connection.step('SEARCH', client, () =>
        client.search({ uid: `${afterUid + 1}:*`, deleted: false }, { uid: true }),
      );
      // `n:*` names the last message even when its UID is below n: keep only what lies above the mark
      const above = (found || []).filter((uid) => uid > afterUid).sort((a, b) => a - b);
      const page = above.slice(0, limit);
      if (page.length === 0) return { uidValidity, messages: [], more: false };
      const fetched = await connection.step('FETCH', client, () =>
        client.fetchAll(page.join(','), { uid: true, size: true, envelope: true, bodyStructure: true }, { uid: true }),
      );
      const messages = fetched
        .map((msg): PartsMessage => {
          const parts: MessagePart[] = [];
          if (msg.bodyStructure) leaves(msg.bodyStructure, parts);
          return { uid: msg.uid, size: msg.size ?? 0, subject: (msg.envelope?.subject ?? '').slice(0, 200), parts };
        })
        .sort((a, b) => a.uid - b.uid);
      return { uidValidity, messages, more: above.length > page.length };
    },
    true,
  );
}

/**
 * One part of one message, decoded (base64, or as it is for 7bit, 8bit and binary). At most
 * `maxBytes` of it is asked for: a larger part comes back as null, never downloaded whole.
 */
export async function fetchPart(
  connection: ImapConnection,
  folder: string,
  uid: number,
  part: MessagePart,
  maxBytes: number,
): Promise<Buffer | null> {
  if (part.size > maxBytes) return null;
  return connection.inFolder(folder, async (client) => {
    const msg = await connection.step('FETCH', client, () =>
      client.fetchOne(
        String(uid),
        { bodyParts: [{ key: part.part, start: 0, maxLength: maxBytes + 1 }] },
        { uid: true },
      ),
    );
    const raw = msg ? msg.bodyParts?.get(part.part) : undefined;
    if (!raw) throw connection.refused(`FETCH of part ${part.part} of UID ${uid} in ${folder} (no such part)`);
    if (raw.length > maxBytes) return null;
    if (part.encoding === 'base64') return Buffer.from(raw.toString('latin1'), 'base64');
    return raw;
  });
}
