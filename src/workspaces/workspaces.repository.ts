import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export interface WorkspaceRecord {
  id: string;
  name: string;
  createdAt: string;
}

export function createWorkspacesRepository(db: Kysely<Database>) {
  return {
    async insertWorkspace(trx: Kysely<Database>, workspace: WorkspaceRecord): Promise<void> {
      await trx
        .insertInto('workspaces')
        .values({ id: workspace.id, name: workspace.name, created_at: workspace.createdAt })
        .execute();
    },

    async insertApiKey(
      trx: Kysely<Database>,
      key: { id: string; workspaceId: string; name: string; keyHash: string; createdAt: string },
    ): Promise<void> {
      await trx
        .insertInto('api_keys')
        .values({
          id: key.id,
          workspace_id: key.workspaceId,
          name: key.name,
          key_hash: key.keyHash,
          created_at: key.createdAt,
        })
        .onConflict((oc) => oc.column('key_hash').doNothing())
        .execute();
    },

    async findById(id: string): Promise<WorkspaceRecord | undefined> {
      const row = await db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
      return row && { id: row.id, name: row.name, createdAt: row.created_at };
    },

    async findByKeyHash(keyHash: string): Promise<{ workspaceId: string; keyHash: string } | undefined> {
      const row = await db
        .selectFrom('api_keys')
        .select(['workspace_id', 'key_hash'])
        .where('key_hash', '=', keyHash)
        .executeTakeFirst();
      return row && { workspaceId: row.workspace_id, keyHash: row.key_hash };
    },
  };
}

export type WorkspacesRepository = ReturnType<typeof createWorkspacesRepository>;
