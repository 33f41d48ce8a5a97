import type { Kysely } from 'kysely';
import type { ApiKeyOrigin, Database } from '../db/schema.js';
import type { KeyRole } from '../http/access.js';

export interface WorkspaceRecord {
  id: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string | null;
  origin: ApiKeyOrigin;
  role: KeyRole;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface NewApiKey {
  id: string;
  workspaceId: string;
  name: string;
  keyHash: string;
  prefix: string;
  origin: ApiKeyOrigin;
  role: KeyRole;
  createdAt: string;
}

// The column holds a Role; a key is never stored as owner (the service refuses it), so read it as a key role.
function asKeyRole(role: string): KeyRole {
  return role === 'viewer' || role === 'member' ? role : 'admin';
}

/** Workspace and API key SQL; key queries that take a workspace id never reach another workspace's keys. */
export function createWorkspacesRepository(db: Kysely<Database>) {
  return {
    async insertWorkspace(trx: Kysely<Database>, workspace: WorkspaceRecord): Promise<void> {
      await trx
        .insertInto('workspaces')
        .values({ id: workspace.id, name: workspace.name, created_at: workspace.createdAt })
        .execute();
    },

    async insertApiKey(trx: Kysely<Database>, key: NewApiKey): Promise<void> {
      await trx
        .insertInto('api_keys')
        .values({
          id: key.id,
          workspace_id: key.workspaceId,
          name: key.name,
          key_hash: key.keyHash,
          prefix: key.prefix,
          origin: key.origin,
          role: key.role,
          created_at: key.createdAt,
        })
        .onConflict((oc) => oc.column('key_hash').doNothing())
        .execute();
    },

    /** Removes the workspace's bootstrap keys other than `keepHash`: the previous WARMUP_API_KEY stops working. */
    async deleteOtherBootstrapKeys(trx: Kysely<Database>, workspaceId: string, keepHash: string): Promise<number> {
      const result = await trx
        .deleteFrom('api_keys')
        .where('workspace_id', '=', workspaceId)
        .where('origin', '=', 'bootstrap')
        .where('key_hash', '!=', keepHash)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async findById(id: string): Promise<WorkspaceRecord | undefined> {
      const row = await db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
      return row && { id: row.id, name: row.name, createdAt: row.created_at };
    },

    async findByKeyHash(
      keyHash: string,
    ): Promise<
      { id: string; workspaceId: string; keyHash: string; role: KeyRole; lastUsedAt: string | null } | undefined
    > {
      const row = await db
        .selectFrom('api_keys')
        .select(['id', 'workspace_id', 'key_hash', 'role', 'last_used_at'])
        .where('key_hash', '=', keyHash)
        .executeTakeFirst();
      return (
        row && {
          id: row.id,
          workspaceId: row.workspace_id,
          keyHash: row.key_hash,
          role: asKeyRole(row.role),
          lastUsedAt: row.last_used_at,
        }
      );
    },

    async touchApiKey(id: string, at: string): Promise<void> {
      await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
    },

    /** The workspace's keys, oldest first. */
    async listApiKeys(workspaceId: string, executor: Kysely<Database> = db): Promise<ApiKeyRecord[]> {
      const rows = await executor
        .selectFrom('api_keys')
        .select(['id', 'workspace_id', 'name', 'prefix', 'origin', 'role', 'created_at', 'last_used_at'])
        .where('workspace_id', '=', workspaceId)
        .orderBy('created_at', 'asc')
        .orderBy('id', 'asc')
        .execute();
      return rows.map((row) => ({
        id: row.id,
        workspaceId: row.workspace_id,
        name: row.name,
        prefix: row.prefix,
        origin: row.origin,
        role: asKeyRole(row.role),
        createdAt: row.created_at,
        lastUsedAt: row.last_used_at,
      }));
    },

    /** Whether any person belongs to the workspace (then it stays reachable without a key). */
    async hasMembers(trx: Kysely<Database>, workspaceId: string): Promise<boolean> {
      const row = await trx
        .selectFrom('memberships')
        .select('user_id')
        .where('workspace_id', '=', workspaceId)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async deleteApiKey(trx: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
      const result = await trx
        .deleteFrom('api_keys')
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

export type WorkspacesRepository = ReturnType<typeof createWorkspacesRepository>;
