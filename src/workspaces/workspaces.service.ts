import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { inTransaction } from '../db/database.js';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';
import { generateApiKey, hashApiKey, sameHash } from './api-keys.js';
import { createWorkspacesRepository, type WorkspaceRecord } from './workspaces.repository.js';

export const DEFAULT_WORKSPACE_ID = 'ws_default';

export interface WorkspacesServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** Gives a new workspace its starting content (the default templates), in the same transaction. */
  onWorkspaceCreated: (trx: Kysely<Database>, workspaceId: string) => Promise<void>;
}

export function createWorkspacesService({ db, clock, onWorkspaceCreated }: WorkspacesServiceDeps) {
  const repository = createWorkspacesRepository(db);

  async function createWorkspace(
    name: string,
    id = newId('ws'),
  ): Promise<{ workspace: WorkspaceRecord; apiKey: string }> {
    const apiKey = generateApiKey();
    const workspace = { id, name, createdAt: clock.now().toISOString() };
    await inTransaction(db, async (trx) => {
      await repository.insertWorkspace(trx, workspace);
      await repository.insertApiKey(trx, {
        id: newId('key'),
        workspaceId: id,
        name: 'default',
        keyHash: hashApiKey(apiKey),
        createdAt: workspace.createdAt,
      });
      await onWorkspaceCreated(trx, id);
    });
    return { workspace, apiKey };
  }

  return {
    createWorkspace,

    findWorkspace: (id: string) => repository.findById(id),

    /** Makes WARMUP_API_KEY valid for the `default` workspace, creating the workspace on first start. */
    async bootstrap(apiKey: string): Promise<void> {
      const now = clock.now().toISOString();
      await inTransaction(db, async (trx) => {
        // Several replicas may start at once on a fresh database: exactly one of them creates it.
        const created = await trx
          .insertInto('workspaces')
          .values({ id: DEFAULT_WORKSPACE_ID, name: 'default', created_at: now })
          .onConflict((oc) => oc.column('id').doNothing())
          .returning('id')
          .executeTakeFirst();
        if (created) await onWorkspaceCreated(trx, DEFAULT_WORKSPACE_ID);
        await repository.insertApiKey(trx, {
          id: newId('key'),
          workspaceId: DEFAULT_WORKSPACE_ID,
          name: 'bootstrap',
          keyHash: hashApiKey(apiKey),
          createdAt: now,
        });
      });
    },

    /** The workspace a presented key belongs to, or undefined. */
    async authenticate(apiKey: string): Promise<string | undefined> {
      const hash = hashApiKey(apiKey);
      const found = await repository.findByKeyHash(hash);
      return found && sameHash(found.keyHash, hash) ? found.workspaceId : undefined;
    },
  };
}

export type WorkspacesService = ReturnType<typeof createWorkspacesService>;
