import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { inTransaction } from '../db/database.js';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';
import { hashToken, sameToken, type AuthenticatedSession } from '../http/auth.js';
import {
  AppError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
} from '../http/errors.js';
import type { WorkspaceRecord } from '../workspaces/workspaces.repository.js';
import { createAccountsRepository, type InviteRow, type ListedInviteRow } from './accounts.repository.js';
import type { CreatedInvite, Invite, InvitePreview, Member, MemberAccess, SessionInfo } from './accounts.schemas.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from './passwords.js';
import { hasRole, type Role } from '../http/access.js';
import type { ApiKey } from '../workspaces/workspaces.schemas.js';
import { createPasswordQueue, type PasswordQueue } from './password-queue.js';
import type { KnownDevices } from './known-devices.js';

/** A browser session lasts this long from sign-in, then its person signs in again. */
export const SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;
export const DEFAULT_INVITE_TTL_DAYS = 7;
/** Open invites per workspace: plenty for a team, bounded for the table. */
export const MAX_PENDING_INVITES = 100;

export interface LoginLimits {
  /** Failed sign-ins per account in `windowMs` before the account must wait (default 10). */
  perAccount: number;
  /** Failed sign-ins per client address in `windowMs` (default 30). */
  perAddress: number;
  windowMs: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perAccount: 10, perAddress: 30, windowMs: 15 * 60_000 };

/** Who may make workspaces through the API (WARMUP_WORKSPACE_CREATION, WARMUP_MAX_WORKSPACES_PER_PERSON). */
export interface WorkspaceCreation {
  /** false (default): the installation's owner only; true: every signed-in person. */
  open: boolean;
  /** Workspaces one person may have made (setup's first one included). */
  maxPerPerson: number;
}

export const DEFAULT_WORKSPACE_CREATION: WorkspaceCreation = { open: false, maxPerPerson: 20 };

/** The keys a person made in a workspace, from the workspaces module, for membership changes. */
export interface KeysOfPerson {
  list: (workspaceId: string, userId: string) => Promise<ApiKey[]>;
  revoke: (trx: Kysely<Database>, workspaceId: string, userId: string) => Promise<number>;
  cap: (trx: Kysely<Database>, workspaceId: string, userId: string, role: Role) => Promise<number>;
}

export interface AccountsServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** Inserts a workspace with its starting content inside the caller's transaction. */
  insertWorkspace: (trx: Kysely<Database>, name: string, createdBy?: string | null) => Promise<WorkspaceRecord>;
  keysOfPerson: KeysOfPerson;
  /** Signs and reads the cookie of browsers that signed in before. */
  knownDevices: KnownDevices;
  loginLimits?: Partial<LoginLimits>;
  workspaceCreation?: Partial<WorkspaceCreation>;
  /** Every password hash of the API goes through it (default: a queue of its own). */
  passwordQueue?: PasswordQueue;
  /** When set, first-run setup needs it (the server is reachable from other machines). */
  setupToken?: string;
}

/** A session just made: the token goes into the cookie and is never stored. */
export interface NewSession {
  token: string;
  expiresAt: string;
  sessionId: string;
  /** A device cookie for a browser that just proved a password: it is known from now on. */
  device?: string;
}

/** What a password check knows of its caller: where it comes from, and the browser's device cookie. */
export interface Caller {
  address: string;
  device?: string | undefined;
}

/**
 * The password hash of an account made through OpenID Connect sign-in: no password matches it, so
 * the account signs in through the provider only.
 */
const NO_PASSWORD = '';

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function toInvite(row: InviteRow | ListedInviteRow): Invite {
  const maker = 'maker_name' in row ? row : { maker_name: null, maker_email: null };
  return {
    id: row.id,
    role: row.role,
    email: row.email,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    createdBy: row.created_by
      ? { id: row.created_by, name: maker.maker_name ?? '', email: maker.maker_email ?? '' }
      : null,
  };
}

export function createAccountsService({
  db,
  clock,
  insertWorkspace,
  keysOfPerson,
  knownDevices,
  loginLimits,
  workspaceCreation,
  passwordQueue = createPasswordQueue(),
  setupToken,
}: AccountsServiceDeps) {
  const repository = createAccountsRepository(db);
  const limits = { ...DEFAULT_LOGIN_LIMITS, ...loginLimits };
  const creation = { ...DEFAULT_WORKSPACE_CREATION, ...workspaceCreation };

  /**
   * What a password check for this user from this caller counts against. A browser that signed in
   * as the user before (a valid device cookie) has a limit of its own; every other attempt counts
   * against the account's limit for unknown browsers and its address's. So a stranger's wrong
   * guesses lock out unknown browsers only, never the owner's known one.
   */
  function limitKeys(emailNormalized: string, userId: string | undefined, caller: Caller): string[] {
    const deviceId = userId ? knownDevices.identify(caller.device, userId) : undefined;
    if (deviceId) return [`device:${deviceId}`];
    return [`account:${emailNormalized}`, `address:${caller.address}`];
  }

  /**
   * Seconds until a password may be tried against these keys, or 0. The failures are counted in
   * the database, so the limits hold across every API process.
   */
  async function signInWait(keys: string[]): Promise<number> {
    const now = clock.now();
    const rows = await repository.countSignInFailures(keys, now.toISOString());
    let wait = 0;
    for (const row of rows) {
      const max = row.key.startsWith('address:') ? limits.perAddress : limits.perAccount;
      if (row.failures < max) continue;
      wait = Math.max(wait, Math.max(1, Math.ceil((Date.parse(row.reset_at) - now.getTime()) / 1000)));
    }
    return wait;
  }

  async function requireNoWait(keys: string[], what: string): Promise<void> {
    const wait = await signInWait(keys);
    if (wait > 0) {
      throw new AppError(429, 'rate_limited', `too many ${what}; retry in ${wait} s`, undefined, {
        'Retry-After': String(wait),
      });
    }
  }

  async function recordSignInFailure(keys: string[]): Promise<void> {
    const now = clock.now();
    await repository.pruneSignInFailures(now.toISOString());
    await repository.recordSignInFailure(
      keys,
      now.toISOString(),
      new Date(now.getTime() + limits.windowMs).toISOString(),
    );
  }

  async function createSession(trx: Kysely<Database>, userId: string, workspaceId: string | null): Promise<NewSession> {
    const token = randomBytes(32).toString('base64url');
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS).toISOString();
    const sessionId = newId('ses');
    await repository.insertSession(trx, {
      id: sessionId,
      token_hash: hashToken(token),
      user_id: userId,
      workspace_id: workspaceId,
      csrf_token: randomBytes(24).toString('base64url'),
      created_at: now.toISOString(),
      expires_at: expiresAt,
    });
    return { token, expiresAt, sessionId };
  }

  async function insertUser(
    trx: Kysely<Database>,
    user: { email: string; name: string; passwordHash: string },
  ): Promise<string> {
    const emailNormalized = normalizeEmail(user.email);
    if (await repository.findUserByEmail(emailNormalized, trx)) {
      throw new ConflictError('an account with this email exists already; sign in instead', [
        { path: '/body/email', message: 'an account with this email exists already' },
      ]);
    }
    const id = newId('usr');
    const now = clock.now().toISOString();
    await repository.insertUser(trx, {
      id,
      email: user.email.trim(),
      email_normalized: emailNormalized,
      name: user.name.trim(),
      password_hash: user.passwordHash,
      created_at: now,
      updated_at: now,
    });
    return id;
  }

  /** The first workspace a session lands in: the given one if a member, else the first by name. */
  async function landingWorkspace(userId: string, preferred?: string): Promise<string | null> {
    const workspaces = await repository.listWorkspacesOf(userId);
    return (workspaces.find((w) => w.id === preferred) ?? workspaces[0])?.id ?? null;
  }

  async function requireMembership(userId: string, workspaceId: string): Promise<Role> {
    const role = await repository.findRole(userId, workspaceId);
    if (!role) throw new NotFoundError(`workspace ${workspaceId} not found`);
    return role;
  }

  /** Owners alone grant, change or take away the owner role. */
  function requireOwnerFor(actorRole: Role, ...roles: Role[]): void {
    if (roles.includes('owner') && actorRole !== 'owner') {
      throw new ForbiddenError('only an owner may grant, change or remove the owner role');
    }
  }

  async function checkCredentials(input: { email: string; password: string } & Caller) {
    const emailNormalized = normalizeEmail(input.email);
    const user = await repository.findUserByEmail(emailNormalized);
    const keys = limitKeys(emailNormalized, user?.id, input);
    await requireNoWait(keys, 'failed sign-ins');
    const caller = `address:${input.address}`;
    const valid = user
      ? await passwordQueue.verify(input.password, user.password_hash, caller)
      : await passwordQueue.verifyDecoy(input.password, caller);
    if (!user || !valid) {
      await recordSignInFailure(keys);
      throw new UnauthorizedError('the email or the password is not right');
    }
    return user;
  }

  /**
   * An invite addressed to someone is theirs alone: whoever holds the link must join as that
   * address (as the inviter wrote it, compared trimmed and case-insensitively), or the link would
   * let anyone who saw it — a forwarded mail, a shared screen — into the workspace under any
   * account. An invite that names nobody stays open to its holder.
   */
  function requireInvitedEmail(invite: { email: string | null }, email: string): void {
    if (invite.email === null || normalizeEmail(invite.email) === normalizeEmail(email)) return;
    const message = `this invite is for ${invite.email}: accept it as that address, or ask for an invite of your own`;
    throw new AppError(403, 'invite_email_mismatch', `email: ${message}`, [{ path: '/body/email', message }]);
  }

  const inviteGone = () => new NotFoundError('this invite link is not valid: it was used, revoked or has expired');

  /** The open invite of a token hash; 404 once used, revoked or expired. */
  async function openInvite(tokenHash: string) {
    const invite = await repository.findInviteByTokenHash(tokenHash);
    if (!invite || invite.accepted_at || invite.expires_at <= clock.now().toISOString()) throw inviteGone();
    return invite;
  }

  /** Takes the invite (once) for an existing user or a new one, grants its role and opens a session. */
  async function joinInvite(
    invite: { id: string; workspace_id: string; role: Role; created_by: string | null },
    user: string | { email: string; name: string; passwordHash: string },
    options: { knownDevice?: boolean } = {},
  ): Promise<NewSession> {
    return inTransaction(db, async (trx) => {
      const now = clock.now().toISOString();
      // An invite grants no more than its maker may grant now: none once they left, their new
      // role's worth after a demotion (removal and demotion also revoke or cap it at once).
      let grant = invite.role;
      if (invite.created_by) {
        const makerRole = await repository.findRole(invite.created_by, invite.workspace_id, trx);
        if (!makerRole) throw inviteGone();
        if (!hasRole(makerRole, grant)) grant = makerRole;
      }
      const userId = typeof user === 'string' ? user : await insertUser(trx, user);
      if (!(await repository.takeInvite(trx, invite.id, userId, now))) throw inviteGone();
      const role = await repository.findRole(userId, invite.workspace_id, trx);
      if (!role) {
        await repository.insertMembership(trx, {
          userId,
          workspaceId: invite.workspace_id,
          role: grant,
          createdAt: now,
        });
      } else if (!hasRole(role, grant)) {
        await repository.updateRole(trx, invite.workspace_id, userId, grant);
      }
      const session = await createSession(trx, userId, invite.workspace_id);
      return options.knownDevice ? { ...session, device: knownDevices.issue(userId) } : session;
    });
  }

  return {
    setupRequired: async () => !(await repository.isSetUp()),

    /** Whether setting up needs the setup token the server printed (it is reachable from other machines). */
    setupTokenRequired: () => setupToken !== undefined,

    /** The token first-run setup needs, for the server's log; undefined when none is needed. */
    setupToken: () => setupToken,

    /**
     * The first-run setup: the owner and the first workspace, once. Two browsers racing here make one
     * owner: the installation row is claimed first, and the loser's transaction stops on it.
     */
    async setup(
      input: { name: string; email: string; password: string; workspaceName: string; setupToken?: string },
      caller: Caller,
    ): Promise<NewSession> {
      if (await repository.isSetUp()) throw new ConflictError('this installation is set up already; sign in instead');
      if (setupToken !== undefined && !sameToken(input.setupToken ?? '', setupToken)) {
        const message = 'enter the setup token the server printed in its log when it started';
        throw new AppError(403, 'setup_token_invalid', `setupToken: ${message}`, [
          { path: '/body/setupToken', message },
        ]);
      }
      const passwordHash = await passwordQueue.hash(input.password, `address:${caller.address}`);
      return inTransaction(db, async (trx) => {
        const now = clock.now().toISOString();
        if (!(await repository.markSetUp(trx, null, now))) {
          throw new ConflictError('this installation is set up already; sign in instead');
        }
        const userId = await insertUser(trx, { email: input.email, name: input.name, passwordHash });
        await trx.updateTable('installation').set({ owner_user_id: userId }).where('id', '=', 1).execute();
        const workspace = await insertWorkspace(trx, input.workspaceName.trim(), userId);
        await repository.insertMembership(trx, { userId, workspaceId: workspace.id, role: 'owner', createdAt: now });
        return { ...(await createSession(trx, userId, workspace.id)), device: knownDevices.issue(userId) };
      });
    },

    /**
     * A user made from the command line (headless installs). Without a workspace id a new workspace
     * is made. Marks the installation set up, so the first-run page is no longer offered.
     */
    async createUser(input: {
      name: string;
      email: string;
      password: string;
      role: Role;
      workspaceId?: string;
      workspaceName?: string;
    }): Promise<{ userId: string; workspaceId: string }> {
      const passwordHash = await hashPassword(input.password);
      return inTransaction(db, async (trx) => {
        const now = clock.now().toISOString();
        const userId = await insertUser(trx, { email: input.email, name: input.name, passwordHash });
        let workspaceId = input.workspaceId;
        if (workspaceId) {
          const found = await trx
            .selectFrom('workspaces')
            .select('id')
            .where('id', '=', workspaceId)
            .executeTakeFirst();
          if (!found) throw new NotFoundError(`workspace ${workspaceId} not found`);
        } else {
          workspaceId = (await insertWorkspace(trx, input.workspaceName?.trim() || 'My workspace')).id;
        }
        await repository.insertMembership(trx, { userId, workspaceId, role: input.role, createdAt: now });
        if (input.role === 'owner') await repository.markSetUp(trx, userId, now);
        return { userId, workspaceId };
      });
    },

    /**
     * Email and password to a session. Failures are counted per account and per client address;
     * past either limit the answer is 429 before the password is even checked.
     */
    async signIn(input: { email: string; password: string; workspaceId?: string } & Caller): Promise<NewSession> {
      const user = await checkCredentials(input);
      const workspaceId = await landingWorkspace(user.id, input.workspaceId);
      // Sessions nobody used again would stay forever: each sign-in sweeps the expired ones (indexed).
      await repository.deleteExpiredSessions(clock.now().toISOString());
      const session = await inTransaction(db, (trx) => createSession(trx, user.id, workspaceId));
      return { ...session, device: knownDevices.issue(user.id) };
    },

    /** The session a cookie's token names, if it exists and has not expired. */
    async authenticateSession(token: string): Promise<AuthenticatedSession | undefined> {
      const session = await repository.findSessionByTokenHash(hashToken(token));
      if (!session) return undefined;
      if (session.expires_at <= clock.now().toISOString()) {
        await repository.deleteSession(session.id);
        return undefined;
      }
      const role = session.workspace_id ? await repository.findRole(session.user_id, session.workspace_id) : undefined;
      return {
        sessionId: session.id,
        userId: session.user_id,
        workspaceId: role ? session.workspace_id : null,
        role: role ?? null,
        csrfToken: session.csrf_token,
      };
    },

    async describeSession(session: AuthenticatedSession, expiresAt?: string): Promise<SessionInfo> {
      const user = await repository.findUserById(session.userId);
      if (!user) throw new UnauthorizedError('the session has ended; sign in again');
      const workspaces = await repository.listWorkspacesOf(session.userId);
      const current = workspaces.find((w) => w.id === session.workspaceId);
      const stored = expiresAt
        ? undefined
        : await db.selectFrom('sessions').select('expires_at').where('id', '=', session.sessionId).executeTakeFirst();
      return {
        user: { id: user.id, email: user.email, name: user.name },
        workspace: current ? { id: current.id, name: current.name } : null,
        role: current?.role ?? null,
        workspaces,
        csrfToken: session.csrfToken,
        expiresAt: expiresAt ?? stored?.expires_at ?? '',
      };
    },

    signOut: (sessionId: string) => repository.deleteSession(sessionId),

    /** Ends every session of the user, this one included. */
    signOutEverywhere: (userId: string) => inTransaction(db, (trx) => repository.deleteSessionsOfUser(trx, userId)),

    async switchWorkspace(sessionId: string, userId: string, workspaceId: string): Promise<void> {
      await requireMembership(userId, workspaceId);
      await repository.setSessionWorkspace(sessionId, workspaceId);
    },

    /** A new password; every other session of the user ends, this one stays signed in. */
    async changePassword(
      userId: string,
      sessionId: string,
      currentPassword: string,
      newPassword: string,
      caller: Caller,
    ) {
      const user = await repository.findUserById(userId);
      if (!user) throw new UnauthorizedError('the session has ended; sign in again');
      // A wrong current password is a guess like a wrong sign-in: counted against the same limit.
      const keys = limitKeys(user.email_normalized, user.id, caller);
      await requireNoWait(keys, 'wrong passwords');
      if (!(await passwordQueue.verify(currentPassword, user.password_hash, `user:${userId}`))) {
        await recordSignInFailure(keys);
        throw ValidationError.field('/body/currentPassword', 'the current password is not right');
      }
      const passwordHash = await passwordQueue.hash(newPassword, `user:${userId}`);
      await inTransaction(db, async (trx) => {
        await repository.updatePasswordHash(trx, userId, passwordHash, clock.now().toISOString());
        await repository.deleteSessionsOfUser(trx, userId, sessionId);
      });
    },

    /** The person who set the installation up (or the first owner the CLI made); null when none. */
    installationOwner: (): Promise<string | null> => repository.installationOwner(),

    /**
     * A new workspace made by a signed-in user, who owns it; the session moves into it. Only the
     * installation's owner may, unless the operator opened it to everyone; each person up to a cap.
     */
    async createWorkspace(userId: string, sessionId: string, name: string): Promise<WorkspaceRecord> {
      if (!creation.open && (await repository.installationOwner()) !== userId) {
        throw new ForbiddenError(
          "only the installation's owner makes workspaces here; ask them, or for an invite to an existing one",
          'workspace_creation_closed',
        );
      }
      return inTransaction(db, async (trx) => {
        await repository.lockUser(trx, userId);
        if ((await repository.countWorkspacesCreatedBy(trx, userId)) >= creation.maxPerPerson) {
          throw new AppError(
            409,
            'workspace_limit_reached',
            `one person may make at most ${creation.maxPerPerson} workspaces on this server`,
          );
        }
        const workspace = await insertWorkspace(trx, name.trim(), userId);
        await repository.insertMembership(trx, {
          userId,
          workspaceId: workspace.id,
          role: 'owner',
          createdAt: workspace.createdAt,
        });
        await trx.updateTable('sessions').set({ workspace_id: workspace.id }).where('id', '=', sessionId).execute();
        return workspace;
      });
    },

    listMembers: async (workspaceId: string): Promise<Member[]> => repository.listMembers(workspaceId),

    async updateMemberRole(actorRole: Role, workspaceId: string, userId: string, role: Role): Promise<Member> {
      return inTransaction(db, async (trx) => {
        const current = await repository.findRole(userId, workspaceId, trx);
        if (!current) throw new NotFoundError(`member ${userId} not found`);
        requireOwnerFor(actorRole, current, role);
        if (current === 'owner' && role !== 'owner' && (await repository.countOwners(trx, workspaceId)) <= 1) {
          throw new ConflictError('a workspace keeps at least one owner; make another member owner first');
        }
        await repository.updateRole(trx, workspaceId, userId, role);
        // what they made can do no more than they now may
        await keysOfPerson.cap(trx, workspaceId, userId, role);
        await repository.capOpenInvitesMadeBy(trx, workspaceId, userId, role);
        const member = (await repository.listMembers(workspaceId, trx)).find((m) => m.userId === userId);
        if (!member) throw new NotFoundError(`member ${userId} not found`);
        return member;
      });
    },

    /** What removing the member would revoke: the keys and open invites they made here. */
    async memberAccess(workspaceId: string, userId: string): Promise<MemberAccess> {
      await requireMembership(userId, workspaceId).catch(() => {
        throw new NotFoundError(`member ${userId} not found`);
      });
      const now = clock.now().toISOString();
      return {
        keys: await keysOfPerson.list(workspaceId, userId),
        invites: (await repository.listPendingInvites(workspaceId, now, userId)).map(toInvite),
      };
    },

    /**
     * Removes a member: their sessions in this workspace end at once, and so do the API keys and open
     * invites they made here (re-issue a key first to keep it).
     */
    async removeMember(actorRole: Role, workspaceId: string, userId: string): Promise<void> {
      await inTransaction(db, async (trx) => {
        const current = await repository.findRole(userId, workspaceId, trx);
        if (!current) throw new NotFoundError(`member ${userId} not found`);
        requireOwnerFor(actorRole, current);
        if (current === 'owner' && (await repository.countOwners(trx, workspaceId)) <= 1) {
          throw new ConflictError('the last owner of a workspace cannot be removed');
        }
        await repository.deleteMembership(trx, workspaceId, userId);
        await repository.deleteSessionsInWorkspace(trx, userId, workspaceId);
        await keysOfPerson.revoke(trx, workspaceId, userId);
        await repository.deleteOpenInvitesMadeBy(trx, workspaceId, userId);
      });
    },

    async createInvite(
      actor: { role: Role; userId: string | null },
      workspaceId: string,
      input: { role: Role; email?: string; expiresInDays?: number },
    ): Promise<CreatedInvite> {
      requireOwnerFor(actor.role, input.role);
      if (!hasRole(actor.role, input.role)) throw new ForbiddenError(`an ${actor.role} cannot invite an ${input.role}`);
      const now = clock.now();
      if ((await repository.countPendingInvites(workspaceId, now.toISOString())) >= MAX_PENDING_INVITES) {
        throw new AppError(
          409,
          'invite_limit_reached',
          `a workspace holds at most ${MAX_PENDING_INVITES} open invites`,
        );
      }
      const token = randomBytes(32).toString('base64url');
      const row: InviteRow = {
        id: newId('inv'),
        workspace_id: workspaceId,
        token_hash: hashToken(token),
        role: input.role,
        email: input.email?.trim() || null,
        created_by: actor.userId,
        created_at: now.toISOString(),
        expires_at: new Date(
          now.getTime() + (input.expiresInDays ?? DEFAULT_INVITE_TTL_DAYS) * 24 * 60 * 60 * 1000,
        ).toISOString(),
        accepted_at: null,
        accepted_by: null,
      };
      await inTransaction(db, (trx) => repository.insertInvite(trx, row));
      return { invite: toInvite(row), token, path: `/invite/${token}` };
    },

    listInvites: async (workspaceId: string): Promise<Invite[]> =>
      (await repository.listPendingInvites(workspaceId, clock.now().toISOString())).map(toInvite),

    async revokeInvite(workspaceId: string, id: string): Promise<void> {
      if (!(await repository.deleteInvite(workspaceId, id))) throw new NotFoundError(`invite ${id} not found`);
    },

    /** What an invite link offers, for the page that accepts it; 404 once used or expired. */
    async previewInvite(token: string): Promise<InvitePreview> {
      const invite = await repository.findInviteByTokenHash(hashToken(token));
      if (!invite || invite.accepted_at || invite.expires_at <= clock.now().toISOString()) {
        throw new NotFoundError('this invite link is not valid: it was used, revoked or has expired');
      }
      return {
        workspace: { name: invite.workspace_name },
        role: invite.role,
        email: invite.email,
        expiresAt: invite.expires_at,
      };
    },

    /**
     * Joins the invite's workspace: an existing account proves itself with its password, a new
     * one is made with a name. The link works once.
     */
    async acceptInvite(
      token: string,
      input: { email: string; password: string; name?: string } & Caller,
    ): Promise<NewSession> {
      const invite = await openInvite(hashToken(token));
      requireInvitedEmail(invite, input.email);
      const existing = await repository.findUserByEmail(normalizeEmail(input.email));
      if (existing) {
        await checkCredentials(input);
        return joinInvite(invite, existing.id, { knownDevice: true });
      }
      if (!input.name?.trim()) throw ValidationError.field('/body/name', 'a new account needs a name');
      if (input.password.length < MIN_PASSWORD_LENGTH) {
        throw ValidationError.field(
          '/body/password',
          `a new password needs at least ${MIN_PASSWORD_LENGTH} characters`,
        );
      }
      const passwordHash = await passwordQueue.hash(input.password, `address:${input.address}`);
      return joinInvite(invite, { email: input.email, name: input.name, passwordHash }, { knownDevice: true });
    },

    /**
     * Signs in the account of an address the operator's OpenID Connect provider verified. An
     * address no account uses is refused: accounts are made only through invites.
     */
    async signInVerifiedEmail(email: string): Promise<NewSession> {
      const user = await repository.findUserByEmail(normalizeEmail(email));
      if (!user) {
        throw new UnauthorizedError(
          `no account here uses ${email}: ask an admin of your workspace for an invite link and sign in from it`,
        );
      }
      const workspaceId = await landingWorkspace(user.id);
      await repository.deleteExpiredSessions(clock.now().toISOString());
      return inTransaction(db, (trx) => createSession(trx, user.id, workspaceId));
    },

    /**
     * Accepts an invite (named by the SHA-256 of its token) for an address the OpenID Connect
     * provider verified: the account of that address joins, or one is made without a password
     * (it signs in through the provider).
     */
    async acceptInviteVerifiedEmail(inviteTokenHash: string, person: { email: string; name?: string }) {
      const invite = await openInvite(inviteTokenHash);
      requireInvitedEmail(invite, person.email);
      const existing = await repository.findUserByEmail(normalizeEmail(person.email));
      if (existing) return joinInvite(invite, existing.id);
      const name = person.name?.trim() || person.email.split('@')[0]!;
      return joinInvite(invite, { email: person.email, name, passwordHash: NO_PASSWORD });
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
