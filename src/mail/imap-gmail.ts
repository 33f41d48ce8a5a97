// Gmail's IMAP extensions (X-GM-EXT-1): which inbox tab a message is shown in, taking it to
// Primary, and the Important marker. A server without them is answered with nothing done.
import type { ImapFlow } from 'imapflow';
import { GMAIL_CATEGORIES, type GmailCategory } from './imap-folders.js';
import { type ImapConnection, capable } from './imap-connection.js';
/**
 * Messages of INBOX whose Gmail tab is asked per round of X-GM-RAW searches: one search per tab
 * other than Primary (four) for up to this many, so a sync costs a few searches, not one per
 * message (a mailbox receives a few dozen warmup emails a day).
 */
export const CATEGORY_BATCH = 100;

/**
 * Gmail's tab of each message found in INBOX: one X-GM-RAW `category:` search per tab other than
 * Primary, limited to the messages' UIDs; a message in none of them is in Primary.
 */
export async function categorize(
  connection: ImapConnection,
  client: ImapFlow,
  messages: { uid: number; category?: GmailCategory }[],
): Promise<void> {
  for (let i = 0; i < messages.length; i += CATEGORY_BATCH) {
    const batch = messages.slice(i, i + CATEGORY_BATCH);
    const uids = batch.map((message) => message.uid).join(',');
    const tabs = new Map<number, GmailCategory>();
    for (const category of GMAIL_CATEGORIES) {
      if (category === 'primary') continue;
      const hits = await connection.step('SEARCH', client, () =>
        client.search({ uid: uids, gmraw: `category:${category}` }, { uid: true }),
      );
      for (const uid of hits || []) if (!tabs.has(uid)) tabs.set(uid, category);
    }
    for (const message of batch) message.category = tabs.get(message.uid) ?? 'primary';
  }
}

export async function isGmail(connection: ImapConnection): Promise<boolean> {
  return capable(await connection.connect(), 'X-GM-EXT-1');
}

export async function promote(
  connection: ImapConnection,
  folder: string,
  uid: number,
  category: GmailCategory,
): Promise<boolean> {
  if (category === 'primary') return false;
  return connection.inFolder(folder, async (client) => {
    if (!capable(client, 'X-GM-EXT-1')) return false;
    const range = String(uid);
    const label = `CATEGORY_${category.toUpperCase()}`;
    const stored = await connection.step('STORE', client, () =>
      client.messageFlagsRemove(range, [label], { uid: true, useLabels: true }),
    );
    if (!stored) return false;
    // it took effect only if the message is still here and no longer in the tab
    const present = await connection.step('SEARCH', client, () => client.search({ uid: range }, { uid: true }));
    if (!present || !present.includes(uid)) return false;
    const inTab = await connection.step('SEARCH', client, () =>
      client.search({ uid: range, gmraw: `category:${category}` }, { uid: true }),
    );
    return Array.isArray(inTab) && inTab.length === 0;
  });
}

export async function markImportant(connection: ImapConnection, folder: string, uid: number): Promise<boolean> {
  return connection.inFolder(folder, async (client) => {
    if (!capable(client, 'X-GM-EXT-1')) return false;
    const ok = await connection.step('STORE', client, () =>
      client.messageFlagsAdd(String(uid), ['\\Important'], { uid: true, useLabels: true }),
    );
    if (!ok) throw connection.refused(`STORE +X-GM-LABELS (\\Important) on UID ${uid} in ${folder}`);
    return true;
  });
}
