import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { releaseSyncClaims } from './mailbox-engine-state.repository.js';
import { releaseAllMessageLeases } from './warmup-message-claims.repository.js';

/** Identifies one engine process in lease rows: host, pid and a random suffix. */
export function newWorkerId(): string {
  return `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/**
 * Claims the named lease for `owner` until now + ttl when it is free, expired or already ours.
 * One statement (insert, or update only where the current lease has expired or is ours), so two
 * workers racing on either database cannot both win.
 */
export async function acquireLease(
  db: Kysely<Database>,
  key: string,
  owner: string,
  ttlMs: number,
  now: Date,
): Promise<boolean> {
  const nowIso = now.toISOString();
  const expiresAt = new Date(now.getTime() + ttlMs).toISOString();
  const row = await db
    .insertInto('leases')
    .values({ key, owner, expires_at: expiresAt })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet({ owner, expires_at: expiresAt })
        .where((eb) => eb.or([eb('leases.expires_at', '<=', nowIso), eb('leases.owner', '=', owner)])),
    )
    .returning('owner')
    .executeTakeFirst();
  return row?.owner === owner;
}

/** Gives a lease back early (clean shutdown, finished work) so nobody waits for it to expire. */
export async function releaseLease(db: Kysely<Database>, key: string, owner: string): Promise<void> {
  await db.deleteFrom('leases').where('key', '=', key).where('owner', '=', owner).execute();
}

/** Releases every lease of a worker: on SIGTERM, so its work is taken over at once. */
export async function releaseAllLeases(db: Kysely<Database>, owner: string): Promise<void> {
  await db.deleteFrom('leases').where('owner', '=', owner).execute();
  await releaseAllMessageLeases(db, owner);
  await releaseSyncClaims(db, owner);
}

/** Runs `work` while holding the lease; returns undefined without running it when the lease is taken. */
export async function withLease<T>(
  db: Kysely<Database>,
  key: string,
  owner: string,
  ttlMs: number,
  now: Date,
  work: () => Promise<T>,
): Promise<{ ran: true; result: T } | { ran: false }> {
  if (!(await acquireLease(db, key, owner, ttlMs, now))) return { ran: false };
  try {
    return { ran: true, result: await work() };
  } finally {
    await releaseLease(db, key, owner);
  }
}
