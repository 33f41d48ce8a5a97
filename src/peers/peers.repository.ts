import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import type { PeerIdentityTable, PeersTable, PeerState } from '../db/schema-peers.js';

// Peering is installation-wide: no query here takes a workspace, and none is reached by a
// workspace's key (the routes are the installation owner's). What leaves for a peer is read
// by `offeredMailboxes` alone, which selects the offered addresses and their volumes, nothing else.

export type PeerRow = Selectable<PeersTable>;
export type PeerIdentityRow = Selectable<PeerIdentityTable>;

export async function findIdentity(db: Kysely<Database>): Promise<PeerIdentityRow | undefined> {
  return db.selectFrom('peer_identity').selectAll().where('id', '=', 1).executeTakeFirst();
}

/** Stores the identity unless another process stored one first; the caller reads back the winner. */
export async function insertIdentity(db: Kysely<Database>, row: PeerIdentityRow): Promise<void> {
  await db
    .insertInto('peer_identity')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export async function listPeers(db: Kysely<Database>): Promise<PeerRow[]> {
  return db.selectFrom('peers').selectAll().where('state', '!=', 'removed').orderBy('id').execute();
}

export async function findPeer(db: Kysely<Database>, id: string): Promise<PeerRow | undefined> {
  return db.selectFrom('peers').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findPeerByKey(db: Kysely<Database>, publicKey: string): Promise<PeerRow | undefined> {
  return db.selectFrom('peers').selectAll().where('public_key', '=', publicKey).executeTakeFirst();
}

export async function insertPeer(db: Kysely<Database>, row: Insertable<PeersTable>): Promise<void> {
  await db.insertInto('peers').values(row).execute();
}

/** A removed peer added again: the same row (its key is unique) with the new terms, pending. */
export async function reviveRemovedPeer(
  db: Kysely<Database>,
  id: string,
  values: Pick<PeerRow, 'url' | 'offer_domains' | 'offer_mailboxes' | 'daily_ceiling' | 'updated_at'>,
): Promise<boolean> {
  const result = await db
    .updateTable('peers')
    .set({ ...values, state: 'pending', handshake_at: null, last_error: null, paused_reason: null })
    .where('id', '=', id)
    .where('state', '=', 'removed')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Moves a peer from one of `from` to `to`; false when it was in none of them (a racing change won). */
export async function moveState(
  db: Kysely<Database>,
  id: string,
  from: readonly PeerState[],
  to: PeerState,
  now: string,
  extra: Partial<Pick<PeerRow, 'handshake_at' | 'last_error' | 'paused_reason'>> = {},
): Promise<boolean> {
  const result = await db
    .updateTable('peers')
    .set({ state: to, updated_at: now, ...extra })
    .where('id', '=', id)
    .where('state', 'in', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function recordHandshakeFailure(db: Kysely<Database>, id: string, reason: string, now: string) {
  await db.updateTable('peers').set({ last_error: reason, updated_at: now }).where('id', '=', id).execute();
}

/**
 * Remembers a nonce until `expiresAt`; false when it was seen already (a replay). Forgets the
 * nonces past their time first, so the table holds one window of traffic at most.
 */
export async function rememberNonce(
  db: Kysely<Database>,
  keyId: string,
  nonce: string,
  expiresAt: string,
  now: string,
): Promise<boolean> {
  await db.deleteFrom('peer_nonces').where('expires_at', '<', now).execute();
  const result = await db
    .insertInto('peer_nonces')
    .values({ key_id: keyId, nonce, expires_at: expiresAt })
    .onConflict((oc) => oc.columns(['key_id', 'nonce']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export interface OfferedMailboxRow {
  email: string;
  warmup: string;
}

/**
 * The mailboxes offered to a peer: active and proven (in the pool), on one of the offered domains,
 * first by address, at most `limit`. Only the address and the warmup settings are read.
 */
export async function offeredMailboxes(
  db: Kysely<Database>,
  domains: readonly string[],
  limit: number,
): Promise<OfferedMailboxRow[]> {
  if (domains.length === 0 || limit === 0) return [];
  return db
    .selectFrom('mailboxes')
    .select(['email', 'warmup'])
    .where('status', '=', 'active')
    .where('proven_at', 'is not', null)
    .where((eb) => eb.or(domains.map((domain) => eb('email_normalized', 'like', sql<string>`${`%@${domain}`}`))))
    .orderBy('email_normalized')
    .limit(limit)
    .execute();
}

/** What the peer's last offer said of the mail it accepts from us, and when it was fetched. */
export async function recordTheirOffer(db: Kysely<Database>, id: string, theirCeiling: number, now: string) {
  await db
    .updateTable('peers')
    .set({ their_ceiling: theirCeiling, offer_fetched_at: now, last_error: null })
    .where('id', '=', id)
    .execute();
}
