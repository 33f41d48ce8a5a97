// What a peer's copy of a mailbox's warmup mail says about how the mailbox sends: the selector of
// the DKIM key its provider signs with (the `s=` of a `DKIM-Signature` whose `d=` is its domain),
// and the address of the server that handed the mail to the receiver (the first public address
// in the `Received` fields, read from the top: the receiver's own hops come first and are
// internal). The DNS checks use the selector, the blocklist checks the addresses. Everything here
// reads what a remote server wrote, so it is bounded in size and parsed in one pass.
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { fieldValues, headerFields } from '../mail/headers.js';
import { isInternalAddress } from '../mail/policy.js';
import { findSenderDkim, learnDkimSelector } from './mailbox-engine-state.repository.js';

/** Header text read at most: a message with more is read up to here. */
export const MAX_EVIDENCE_HEADER_CHARS = 32 * 1024;
/** Received fields read at most, from the top. */
const MAX_RECEIVED_FIELDS = 20;
/** Sending addresses kept per mailbox: the most recently seen. */
export const MAX_SENDING_IPS = 8;

const SELECTOR = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62})$/;

/** `tag=value` pairs of a DKIM-Signature (RFC 6376 §3.2), names in lower case, whitespace removed. */
function dkimTags(value: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of value.split(';')) {
    const equals = part.indexOf('=');
    if (equals <= 0) continue;
    const name = part.slice(0, equals).trim().toLowerCase();
    if (!tags.has(name)) tags.set(name, part.slice(equals + 1).replace(/\s+/g, ''));
  }
  return tags;
}

/**
 * The selector of the signature made for `domain` (its `d=` is the domain or a parent of it, as
 * DMARC's relaxed alignment allows), the exact domain preferred; undefined when none.
 */
export function dkimSelectorOf(headerBlock: string, domain: string): string | undefined {
  const fields = headerFields(headerBlock.slice(0, MAX_EVIDENCE_HEADER_CHARS));
  const wanted = domain.toLowerCase();
  let parent: string | undefined;
  for (const value of fieldValues(fields, 'dkim-signature')) {
    const tags = dkimTags(value);
    const signer = (tags.get('d') ?? '').toLowerCase().replace(/\.$/, '');
    const selector = tags.get('s') ?? '';
    if (!signer || !SELECTOR.test(selector)) continue;
    if (signer === wanted) return selector;
    if (parent === undefined && wanted.endsWith(`.${signer}`)) parent = selector;
  }
  return parent;
}

/** The address in the `from` clause of a Received value: `from host (name [192.0.2.1])` or `from [192.0.2.1]`. */
function fromAddress(value: string): string | undefined {
  const text = value.trimStart();
  if (!/^from\s/i.test(text)) return undefined;
  // the from clause ends where the `by` clause starts
  const by = text.search(/\sby\s/i);
  const clause = by < 0 ? text : text.slice(0, by);
  const open = clause.indexOf('[');
  if (open < 0) return undefined;
  const close = clause.indexOf(']', open);
  if (close < 0) return undefined;
  let address = clause.slice(open + 1, close).trim();
  if (address.toLowerCase().startsWith('ipv6:')) address = address.slice(5);
  return isIP(address) === 0 ? undefined : address.toLowerCase();
}

/** The first public address in the Received fields, from the top: the server that handed the mail to the receiver. */
export function sendingIpOf(headerBlock: string): string | undefined {
  const fields = headerFields(headerBlock.slice(0, MAX_EVIDENCE_HEADER_CHARS));
  const received = fieldValues(fields, 'received').slice(0, MAX_RECEIVED_FIELDS);
  for (const value of received) {
    const address = fromAddress(value);
    if (address !== undefined && !isInternalAddress(address)) return address;
  }
  return undefined;
}

/**
 * Notes what a peer's copy of the mailbox's mail shows: a DKIM selector learned from it replaces
 * a learned one (never one the user gave), and the sending address is remembered (the newest
 * MAX_SENDING_IPS kept). Only a copy held by a mailbox of the sender's own workspace counts: in a
 * shared pool another tenant controls its own server and the headers of what it holds, and could
 * otherwise plant a wrong selector or a listed address on someone else's mailbox.
 */
export async function noteSenderEvidence(
  db: Kysely<Database>,
  senderMailboxId: string,
  receiverWorkspaceId: string,
  headerBlock: string | undefined,
  at: Date,
): Promise<void> {
  if (!headerBlock) return;
  const sender = await findSenderDkim(db, senderMailboxId);
  if (!sender || sender.workspace_id !== receiverWorkspaceId) return;
  const domain = sender.email.slice(sender.email.lastIndexOf('@') + 1);
  const selector = dkimSelectorOf(headerBlock, domain);
  if (selector !== undefined && sender.dkim_selector_source !== 'user' && sender.dkim_selector !== selector) {
    await learnDkimSelector(db, senderMailboxId, selector);
  }
  const ip = sendingIpOf(headerBlock);
  if (ip === undefined) return;
  const seen = at.toISOString();
  await db
    .insertInto('mailbox_sending_ips')
    .values({ mailbox_id: senderMailboxId, ip, first_seen_at: seen, last_seen_at: seen })
    .onConflict((oc) => oc.columns(['mailbox_id', 'ip']).doUpdateSet({ last_seen_at: seen }))
    .execute();
  const stale = await db
    .selectFrom('mailbox_sending_ips')
    .select('ip')
    .where('mailbox_id', '=', senderMailboxId)
    .orderBy('last_seen_at', 'desc')
    .orderBy('ip')
    .offset(MAX_SENDING_IPS)
    .limit(100)
    .execute();
  if (stale.length > 0) {
    await db
      .deleteFrom('mailbox_sending_ips')
      .where('mailbox_id', '=', senderMailboxId)
      .where(
        'ip',
        'in',
        stale.map((row) => row.ip),
      )
      .execute();
  }
}
