// What the pool's trust rule (evidence.ts) needs to know about the receivers that reported on a
// sender: which people stand behind each receiver's workspace, which mail server it lives on, and
// how long it and its workspace have been around.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** Roles whose holders run a workspace's mailboxes: they speak for it. */
const STEWARD_ROLES = ['owner', 'admin'] as const;

export interface ReceiverFacts {
  mailboxId: string;
  workspaceId: string;
  workspaceCreatedAt: string;
  provenAt: string | null;
  /** The address its IMAP client last connected to; null: not synced since migration 032. */
  imapAddress: string | null;
}

export interface Steward {
  workspaceId: string;
  userId: string;
}

/** The receivers' workspaces, proof and server, by mailbox id. */
export async function listReceiverFacts(
  db: Kysely<Database>,
  mailboxIds: readonly string[],
): Promise<Map<string, ReceiverFacts>> {
  const facts = new Map<string, ReceiverFacts>();
  if (mailboxIds.length === 0) return facts;
  const rows = await db
    .selectFrom('mailboxes as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['m.id', 'm.workspace_id', 'w.created_at', 'm.proven_at', 'm.imap_address'])
    .where('m.id', 'in', [...mailboxIds])
    .execute();
  for (const row of rows) {
    facts.set(row.id, {
      mailboxId: row.id,
      workspaceId: row.workspace_id,
      workspaceCreatedAt: row.created_at,
      provenAt: row.proven_at,
      imapAddress: row.imap_address,
    });
  }
  return facts;
}

/**
 * The owners and administrators of these workspaces, and every other workspace those people own
 * or administer: enough to tell which of the given workspaces are run by the same people, however
 * far the chain of shared people goes.
 */
export async function listStewards(db: Kysely<Database>, workspaceIds: readonly string[]): Promise<Steward[]> {
  if (workspaceIds.length === 0) return [];
  const seen = new Set<string>();
  const stewards: Steward[] = [];
  let workspaces = new Set(workspaceIds);
  const visited = new Set<string>();
  // A chain of shared people is followed a step per round; a party of a handful of workspaces is
  // a few rounds.
  while (workspaces.size > 0) {
    for (const id of workspaces) visited.add(id);
    const rows = await db
      .selectFrom('memberships as m')
      .innerJoin('memberships as other', 'other.user_id', 'm.user_id')
      .select(['other.workspace_id', 'other.user_id'])
      .where('m.workspace_id', 'in', [...workspaces])
      .where('m.role', 'in', [...STEWARD_ROLES])
      .where('other.role', 'in', [...STEWARD_ROLES])
      .execute();
    const next = new Set<string>();
    for (const row of rows) {
      const key = `${row.workspace_id}\u0000${row.user_id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      stewards.push({ workspaceId: row.workspace_id, userId: row.user_id });
      if (!visited.has(row.workspace_id)) next.add(row.workspace_id);
    }
    workspaces = next;
  }
  return stewards;
}

/** Remembers the address a mailbox's IMAP client connected to; writes only when it changed. */
export async function noteImapAddress(db: Kysely<Database>, mailboxId: string, address: string): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({ imap_address: address })
    .where('id', '=', mailboxId)
    .where((eb) => eb.or([eb('imap_address', 'is', null), eb('imap_address', '!=', address)]))
    .execute();
}
