import type { Kysely } from 'kysely';
import type { ApiKeyOrigin, Database } from '../db/schema.js';
import { ROLES, type KeyRole, type Role } from '../http/access.js';

import type { UpdateWorkspaceSettingsBody, WorkspaceSettings } from './workspaces.schemas.js';
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
  /** The person who made it; null for bootstrap and CLI keys and keys older than provenance. */
  createdBy: { id: string; name: string; email: string } | null;
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
  createdBy: string | null;
}

// The column holds a Role; a key is never stored as owner (the service refuses it), so read it as a key role.
function asKeyRole(role: string): KeyRole {
  return role === 'viewer' || role === 'member' ? role : 'admin';
}

/** Workspace and API key SQL; key queries that take a workspace id never reach another workspace's keys. */
export function createWorkspacesRepository(db: Kysely<Database>) {
  return {
    async insertWorkspace(
      trx: Kysely<Database>,
      workspace: WorkspaceRecord,
      createdBy: string | null = null,
    ): Promise<void> {
      await trx
        .insertInto('workspaces')
        .values({ id: workspace.id, name: workspace.name, created_at: workspace.createdAt, created_by: createdBy })
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
          created_by: key.createdBy,
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

    async findSettings(id: string): Promise<WorkspaceSettings | undefined> {
      const row = await db
        .selectFrom('workspaces')
        .select(['human_replies', 'onboarding_dismissed_at'])
        .where('id', '=', id)
        .executeTakeFirst();
      return (
        row && {
          humanReplies: row.human_replies === 'inbox' ? 'inbox' : 'file',
          onboardingDismissed: row.onboarding_dismissed_at !== null,
        }
      );
    },

    /** `now` is when a dismissal happened: kept, so it can be told apart from never shown. */
    async updateSettings(id: string, change: UpdateWorkspaceSettingsBody, now: string): Promise<void> {
      const set: { human_replies?: string; onboarding_dismissed_at?: string | null } = {};
      if (change.humanReplies !== undefined) set.human_replies = change.humanReplies;
      if (change.onboardingDismissed !== undefined)
        set.onboarding_dismissed_at = change.onboardingDismissed ? now : null;
      if (Object.keys(set).length === 0) return;
      await db.updateTable('workspaces').set(set).where('id', '=', id).execute();
    },

    async findById(id: string): Promise<WorkspaceRecord | undefined> {
      const row = await db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
      return row && { id: row.id, name: row.name, createdAt: row.created_at };
    },

    async findByKeyHash(keyHash: string): Promise<
      | {
          id: string;
          workspaceId: string;
          keyHash: string;
          role: KeyRole;
          lastUsedAt: string | null;
          createdBy: string | null;
        }
      | undefined
    > {
      const row = await db
        .selectFrom('api_keys')
        .select(['id', 'workspace_id', 'key_hash', 'role', 'last_used_at', 'created_by'])
        .where('key_hash', '=', keyHash)
        .executeTakeFirst();
      return (
        row && {
          id: row.id,
          workspaceId: row.workspace_id,
          keyHash: row.key_hash,
          role: asKeyRole(row.role),
          lastUsedAt: row.last_used_at,
          createdBy: row.created_by,
        }
      );
    },

    async touchApiKey(id: string, at: string): Promise<void> {
      await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
    },

    /** The workspace's keys, oldest first; with `madeBy`, only the keys that person made. */
    async listApiKeys(workspaceId: string, executor: Kysely<Database> = db, madeBy?: string): Promise<ApiKeyRecord[]> {
      let query = executor
        .selectFrom('api_keys')
        .leftJoin('users', 'users.id', 'api_keys.created_by')
        .select([
          'api_keys.id',
          'api_keys.workspace_id',
          'api_keys.name',
          'api_keys.prefix',
          'api_keys.origin',
          'api_keys.role',
          'api_keys.created_at',
          'api_keys.last_used_at',
          'api_keys.created_by',
          'users.name as maker_name',
          'users.email as maker_email',
        ])
        .where('api_keys.workspace_id', '=', workspaceId);
      if (madeBy !== undefined) query = query.where('api_keys.created_by', '=', madeBy);
      const rows = await query.orderBy('api_keys.created_at', 'asc').orderBy('api_keys.id', 'asc').execute();
      return rows.map((row) => ({
        id: row.id,
        workspaceId: row.workspace_id,
        name: row.name,
        prefix: row.prefix,
        origin: row.origin,
        role: asKeyRole(row.role),
        createdAt: row.created_at,
        lastUsedAt: row.last_used_at,
        // a maker whose account is gone still names the key's origin by id
        createdBy: row.created_by
          ? { id: row.created_by, name: row.maker_name ?? '', email: row.maker_email ?? '' }
          : null,
      }));
    },

    /** Revokes every key the person made in the workspace: their access ends with their membership. */
    async deleteKeysMadeBy(trx: Kysely<Database>, workspaceId: string, userId: string): Promise<number> {
      const result = await trx
        .deleteFrom('api_keys')
        .where('workspace_id', '=', workspaceId)
        .where('created_by', '=', userId)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** Lowers the keys the person made in the workspace to `role` where they stood higher. */
    async capKeysMadeBy(trx: Kysely<Database>, workspaceId: string, userId: string, role: Role): Promise<number> {
      const above = ROLES.slice(ROLES.indexOf(role) + 1);
      if (above.length === 0) return 0;
      const result = await trx
        .updateTable('api_keys')
        .set({ role })
        .where('workspace_id', '=', workspaceId)
        .where('created_by', '=', userId)
        .where('role', 'in', above)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
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
