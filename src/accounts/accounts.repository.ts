import { PostgresAdapter, sql, type Kysely } from 'kysely';
import type { Database, InvitesTable, SessionsTable, UsersTable } from '../db/schema.js';
import { ROLES, type Role } from '../http/access.js';

export type UserRow = UsersTable;
export type SessionRow = SessionsTable;
export type InviteRow = InvitesTable;

/** An invite with the name and email of the person who made it (null when nobody is recorded). */
export type ListedInviteRow = InviteRow & { maker_name: string | null; maker_email: string | null };

export interface MemberRow {
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: string;
}

/** Users, memberships, sessions and invites; every membership and invite query takes the workspace id. */
export function createAccountsRepository(db: Kysely<Database>) {
  return {
    async isSetUp(executor: Kysely<Database> = db): Promise<boolean> {
      const row = await executor.selectFrom('installation').select('id').where('id', '=', 1).executeTakeFirst();
      return row !== undefined;
    },

    /** True for the one caller that marks the installation set up; false when it already was. */
    async markSetUp(trx: Kysely<Database>, ownerUserId: string | null, at: string): Promise<boolean> {
      const inserted = await trx
        .insertInto('installation')
        .values({ id: 1, owner_user_id: ownerUserId, set_up_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    async insertUser(trx: Kysely<Database>, user: UserRow): Promise<void> {
      await trx.insertInto('users').values(user).execute();
    },

    /** The failures counted against each key in its current window (a key without one: 0). */
    async countSignInFailures(
      keys: string[],
      now: string,
    ): Promise<Array<{ key: string; failures: number; reset_at: string }>> {
      return db
        .selectFrom('sign_in_failures')
        .select(['key', 'failures', 'reset_at'])
        .where('key', 'in', keys)
        .where('reset_at', '>', now)
        .execute();
    },

    /**
     * Counts one failure against each key, in one statement per key so that API processes failing
     * at once never lose a count: a key without a window, or whose window has ended, starts a new
     * one at 1; else its count goes up.
     */
    async recordSignInFailure(keys: string[], now: string, resetAt: string): Promise<void> {
      for (const key of keys) {
        await db
          .insertInto('sign_in_failures')
          .values({ key, failures: 1, reset_at: resetAt })
          .onConflict((oc) =>
            oc.column('key').doUpdateSet({
              failures: sql<number>`case when sign_in_failures.reset_at <= ${now} then 1 else sign_in_failures.failures + 1 end`,
              reset_at: sql<string>`case when sign_in_failures.reset_at <= ${now} then ${resetAt} else sign_in_failures.reset_at end`,
            }),
          )
          .execute();
      }
    },

    /** Forgets windows that have ended: the table holds only keys failing now. */
    async pruneSignInFailures(now: string): Promise<void> {
      await db.deleteFrom('sign_in_failures').where('reset_at', '<=', now).execute();
    },

    async findUserByEmail(emailNormalized: string, executor: Kysely<Database> = db): Promise<UserRow | undefined> {
      return executor
        .selectFrom('users')
        .selectAll()
        .where('email_normalized', '=', emailNormalized)
        .executeTakeFirst();
    },

    async findUserById(id: string, executor: Kysely<Database> = db): Promise<UserRow | undefined> {
      return executor.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async updatePasswordHash(trx: Kysely<Database>, userId: string, passwordHash: string, at: string): Promise<void> {
      await trx
        .updateTable('users')
        .set({ password_hash: passwordHash, updated_at: at })
        .where('id', '=', userId)
        .execute();
    },

    async insertMembership(
      trx: Kysely<Database>,
      membership: { userId: string; workspaceId: string; role: Role; createdAt: string },
    ): Promise<void> {
      await trx
        .insertInto('memberships')
        .values({
          user_id: membership.userId,
          workspace_id: membership.workspaceId,
          role: membership.role,
          created_at: membership.createdAt,
        })
        .execute();
    },

    async findRole(userId: string, workspaceId: string, executor: Kysely<Database> = db): Promise<Role | undefined> {
      const row = await executor
        .selectFrom('memberships')
        .select('role')
        .where('user_id', '=', userId)
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst();
      return row?.role;
    },

    /** The user's workspaces by name, with the role in each. */
    async listWorkspacesOf(userId: string): Promise<{ id: string; name: string; role: Role }[]> {
      const rows = await db
        .selectFrom('memberships')
        .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
        .select(['workspaces.id', 'workspaces.name', 'memberships.role'])
        .where('memberships.user_id', '=', userId)
        .orderBy('workspaces.name', 'asc')
        .orderBy('workspaces.id', 'asc')
        .execute();
      return rows;
    },

    async listMembers(workspaceId: string, executor: Kysely<Database> = db): Promise<MemberRow[]> {
      const rows = await executor
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select(['users.id', 'users.email', 'users.name', 'memberships.role', 'memberships.created_at'])
        .where('memberships.workspace_id', '=', workspaceId)
        .orderBy('memberships.created_at', 'asc')
        .orderBy('users.id', 'asc')
        .execute();
      return rows.map((row) => ({
        userId: row.id,
        email: row.email,
        name: row.name,
        role: row.role,
        joinedAt: row.created_at,
      }));
    },

    async countOwners(trx: Kysely<Database>, workspaceId: string): Promise<number> {
      const row = await trx
        .selectFrom('memberships')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('role', '=', 'owner')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async updateRole(trx: Kysely<Database>, workspaceId: string, userId: string, role: Role): Promise<void> {
      await trx
        .updateTable('memberships')
        .set({ role })
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .execute();
    },

    async deleteMembership(trx: Kysely<Database>, workspaceId: string, userId: string): Promise<void> {
      await trx
        .deleteFrom('memberships')
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .execute();
    },

    async insertSession(trx: Kysely<Database>, session: SessionRow): Promise<void> {
      await trx.insertInto('sessions').values(session).execute();
    },

    async findSessionByTokenHash(tokenHash: string): Promise<SessionRow | undefined> {
      return db.selectFrom('sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    },

    async setSessionWorkspace(sessionId: string, workspaceId: string): Promise<void> {
      await db.updateTable('sessions').set({ workspace_id: workspaceId }).where('id', '=', sessionId).execute();
    },

    async deleteSession(sessionId: string): Promise<void> {
      await db.deleteFrom('sessions').where('id', '=', sessionId).execute();
    },

    /** Ends the user's sessions, all but `keepSessionId` when given. */
    async deleteSessionsOfUser(trx: Kysely<Database>, userId: string, keepSessionId?: string): Promise<number> {
      let query = trx.deleteFrom('sessions').where('user_id', '=', userId);
      if (keepSessionId) query = query.where('id', '!=', keepSessionId);
      const result = await query.executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async deleteSessionsInWorkspace(trx: Kysely<Database>, userId: string, workspaceId: string): Promise<void> {
      await trx.deleteFrom('sessions').where('user_id', '=', userId).where('workspace_id', '=', workspaceId).execute();
    },

    async deleteExpiredSessions(now: string): Promise<void> {
      await db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
    },

    async insertInvite(trx: Kysely<Database>, invite: InviteRow): Promise<void> {
      await trx.insertInto('invites').values(invite).execute();
    },

    /** Invites not yet accepted nor expired, newest first; with `madeBy`, only that person's. */
    async listPendingInvites(workspaceId: string, now: string, madeBy?: string): Promise<ListedInviteRow[]> {
      let query = db
        .selectFrom('invites')
        .leftJoin('users', 'users.id', 'invites.created_by')
        .selectAll('invites')
        .select(['users.name as maker_name', 'users.email as maker_email'])
        .where('invites.workspace_id', '=', workspaceId)
        .where('invites.accepted_at', 'is', null)
        .where('invites.expires_at', '>', now);
      if (madeBy !== undefined) query = query.where('invites.created_by', '=', madeBy);
      return query.orderBy('invites.created_at', 'desc').orderBy('invites.id', 'desc').limit(100).execute();
    },

    /** Revokes the open invites the person made in the workspace: their access ends with their membership. */
    async deleteOpenInvitesMadeBy(trx: Kysely<Database>, workspaceId: string, userId: string): Promise<number> {
      const result = await trx
        .deleteFrom('invites')
        .where('workspace_id', '=', workspaceId)
        .where('created_by', '=', userId)
        .where('accepted_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** Lowers the open invites the person made in the workspace to `role` where they stood higher. */
    async capOpenInvitesMadeBy(trx: Kysely<Database>, workspaceId: string, userId: string, role: Role): Promise<void> {
      const above = ROLES.slice(ROLES.indexOf(role) + 1);
      if (above.length === 0) return;
      await trx
        .updateTable('invites')
        .set({ role })
        .where('workspace_id', '=', workspaceId)
        .where('created_by', '=', userId)
        .where('accepted_at', 'is', null)
        .where('role', 'in', above)
        .execute();
    },

    /** The person who set the installation up (or the first owner the CLI made); null when none. */
    async installationOwner(): Promise<string | null> {
      const row = await db.selectFrom('installation').select('owner_user_id').where('id', '=', 1).executeTakeFirst();
      return row?.owner_user_id ?? null;
    },

    /**
     * Holds the user's row until the transaction ends, so two of their requests counting what they
     * made cannot both pass a cap (PostgreSQL; SQLite runs one writing transaction at a time).
     */
    async lockUser(trx: Kysely<Database>, userId: string): Promise<void> {
      if (!(trx.getExecutor().adapter instanceof PostgresAdapter)) return;
      await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
    },

    async countWorkspacesCreatedBy(trx: Kysely<Database>, userId: string): Promise<number> {
      const row = await trx
        .selectFrom('workspaces')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('created_by', '=', userId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /**
     * The people who own or administer each of the workspaces: one party behind several workspaces
     * shows as the same user id in each (evidence from them counts once).
     */
    async administratorsOf(
      workspaceIds: readonly string[],
    ): Promise<Array<{ workspaceId: string; userId: string; role: 'admin' | 'owner' }>> {
      if (workspaceIds.length === 0) return [];
      const rows = await db
        .selectFrom('memberships')
        .select(['workspace_id', 'user_id', 'role'])
        .where('workspace_id', 'in', [...workspaceIds])
        .where('role', 'in', ['admin', 'owner'])
        .orderBy('workspace_id')
        .orderBy('user_id')
        .execute();
      return rows.map((row) => ({
        workspaceId: row.workspace_id,
        userId: row.user_id,
        role: row.role === 'owner' ? 'owner' : 'admin',
      }));
    },

    async countPendingInvites(workspaceId: string, now: string): Promise<number> {
      const row = await db
        .selectFrom('invites')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('accepted_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async deleteInvite(workspaceId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('invites')
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('accepted_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async findInviteByTokenHash(
      tokenHash: string,
      executor: Kysely<Database> = db,
    ): Promise<(InviteRow & { workspace_name: string }) | undefined> {
      return executor
        .selectFrom('invites')
        .innerJoin('workspaces', 'workspaces.id', 'invites.workspace_id')
        .selectAll('invites')
        .select('workspaces.name as workspace_name')
        .where('invites.token_hash', '=', tokenHash)
        .executeTakeFirst();
    },

    /** Single use: true for the one caller that takes the invite while it is still open. */
    async takeInvite(trx: Kysely<Database>, id: string, userId: string, now: string): Promise<boolean> {
      const result = await trx
        .updateTable('invites')
        .set({ accepted_at: now, accepted_by: userId })
        .where('id', '=', id)
        .where('accepted_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}

export type AccountsRepository = ReturnType<typeof createAccountsRepository>;
