import type { Kysely } from 'kysely';
import { addDays, dayToTime } from '../calendar.js';
import type { Clock } from '../clock.js';
import { DEFAULT_LIMITS } from '../config.js';
import { newId } from '../db/ids.js';
import type { Database, MailboxRow, MailboxRowUpdate } from '../db/schema.js';
import { pagination, type Pagination } from '../http/common.schemas.js';
import {
  ConflictError,
  ConnectionFailedError,
  NotFoundError,
  type ConnectionFailure,
  ValidationError,
  type FieldError,
} from '../http/errors.js';
import { LimitExceededError } from '../http/limits.js';
import { diagnoseMailFailure, isMailConnectionError, scrubSecret, type MailServerConfig } from '../mail/errors.js';
import { DEFAULT_MAIL_POLICY, type MailPolicy } from '../mail/policy.js';
import { decryptSecret, encryptSecret, SecretDecryptionError } from '../secrets/secrets.js';
import { createConnectionGuard, type ConnectionGuard } from './connection-guard.js';
import { applyMailboxEvent } from './mailbox-state.js';
import { createMailboxesRepository, isUniqueViolation } from './mailboxes.repository.js';
import type {
  CreateMailboxBody,
  HumanReply,
  HumanReplyListQuery,
  Interaction,
  InteractionListQuery,
  Mailbox,
  MailboxListQuery,
  ProviderId,
  ServerSettings,
  UpdateMailboxBody,
} from './mailboxes.schemas.js';
import { isKnownProvider, PROVIDERS } from './providers.js';
import { proveRoundTrip, type CheckMailWriter, type RoundTripResult } from '../mail/round-trip.js';
import { REAL_MAIL_CLIENTS, type MailClients } from './mail-clients.js';
import { DEFAULT_WARMUP, parseWarmupSettings } from './warmup-settings.js';
import {
  cleanPassword,
  movesServer,
  PasswordRequiredError,
  refuseUncheckedTls,
  resolveServer,
  resolveWarmup,
  throwIfInvalid,
} from './mailbox-input.js';
import { parseJson, presentMailboxes, toHumanReply, toInteraction } from './mailbox-view.js';
import { NOT_CHECKED, NOT_RUN, proofChanges } from './mailbox-proof.js';
import type { IssuedTokens } from '../oauth/oauth.client.js';
import type { OAuthServer } from '../oauth/oauth.config.js';
import type { OAuthProviderId } from '../oauth/oauth.schemas.js';
import { tokenColumns, type OAuthTokens } from '../oauth/oauth.tokens.js';

/** How long each login check (IMAP and SMTP, in parallel) may take before it counts as failed. */
export const DEFAULT_VERIFY_TIMEOUT_MS = 10_000;

export interface MailboxesServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** The 32-byte key that encrypts passwords (see secrets/secrets.ts loadSecretKey). */
  secretKey: Buffer;
  verifyTimeoutMs?: number;
  /** The process's cap and failure floor on connection checks (default: no floor, the default cap). */
  connectionGuard?: ConnectionGuard;
  /** Mailboxes one workspace may connect (WARMUP_MAX_MAILBOXES). */
  maxMailboxes?: number;
  /** Bytes a CSV import may have (WARMUP_MAX_IMPORT_BYTES, shared with template imports). */
  maxImportBytes?: number;
  /** The operator's rules for the hosts a tenant may name (default: public hosts, TLS only). */
  mailPolicy?: MailPolicy;
  /** Where the real reason of a refused or unreachable host goes (never to the tenant). */
  logger?: { debug(details: object, message: string): void };
  /** How long the round trip waits for its test message to arrive (see round-trip.ts). */
  roundTripWaitMs?: number;
  /** Access tokens of mailboxes that sign in with OAuth (oauth/oauth.tokens.ts). */
  oauthTokens?: Pick<OAuthTokens, 'accessToken' | 'revocationOf'>;
  /** Default: the real SMTP and IMAP clients. */
  mailClients?: MailClients;
  /**
   * The connection check's message as the mailbox's ordinary mail (engine/connection-check.ts,
   * wired in services.ts); unset or undefined: round-trip.ts's plain note.
   */
  checkMail?: (mailbox: CheckedMailbox) => Promise<CheckMailWriter | undefined>;
}

/** A mailbox's columns its connection check is written from (before or after the row is stored). */
type CheckedMailbox = Pick<MailboxRow, 'id' | 'email' | 'name' | 'warmup' | 'provider' | 'oauth_provider' | 'smtp'> & {
  workspaceId: string;
};

/** A mailbox signed in to with OAuth, as the consent flow's callback hands it over. */
export interface OAuthConnection {
  oauthProvider: OAuthProviderId;
  mailboxProvider: ProviderId;
  email: string;
  imap: OAuthServer;
  smtp: OAuthServer;
  tokens: IssuedTokens & { refreshToken: string };
  /** The mailbox the flow reconnects, when it was started for one. */
  mailboxId?: string;
}

/** Everything the mail layer needs to log in to a mailbox, password included: for the engine only. */
export interface MailboxCredentials {
  imap: MailServerConfig;
  smtp: MailServerConfig;
}

const PASSWORD_UNREADABLE =
  'the stored password cannot be decrypted with this secret key (WARMUP_SECRET_KEY or secret.key changed); send the password again';

export function mailboxLimitReached(maxMailboxes: number): LimitExceededError {
  return new LimitExceededError(
    409,
    'mailbox_limit_reached',
    `this workspace has reached its limit of ${maxMailboxes} mailboxes (WARMUP_MAX_MAILBOXES); delete one first`,
  );
}

function conflict(email: string): ConflictError {
  return new ConflictError(`${email} is already connected in this workspace`, [
    { path: '/body/email', message: 'is already connected' },
  ]);
}

export function createMailboxesService({
  db,
  clock,
  secretKey,
  verifyTimeoutMs = DEFAULT_VERIFY_TIMEOUT_MS,
  maxMailboxes = DEFAULT_LIMITS.maxMailboxes,
  maxImportBytes = DEFAULT_LIMITS.maxImportBytes,
  mailPolicy = DEFAULT_MAIL_POLICY,
  logger,
  roundTripWaitMs,
  oauthTokens,
  mailClients = REAL_MAIL_CLIENTS,
  checkMail,
  connectionGuard = createConnectionGuard({ failureFloorMs: 0 }),
}: MailboxesServiceDeps) {
  const repository = createMailboxesRepository(db);

  function serverConfig(settings: ServerSettings, password: string): MailServerConfig {
    return {
      host: settings.host,
      port: settings.port,
      secure: settings.secure,
      username: settings.username,
      password,
      policy: mailPolicy,
    };
  }

  /** Decrypts the stored password (bound to the mailbox id) into login settings for both servers. */
  function decryptCredentials(
    row: Pick<MailboxRow, 'id' | 'imap' | 'smtp' | 'password_encrypted'>,
  ): MailboxCredentials {
    const password = decryptSecret(secretKey, row.password_encrypted, row.id);
    return {
      imap: serverConfig(parseJson<ServerSettings>(row.imap), password),
      smtp: serverConfig(parseJson<ServerSettings>(row.smtp), password),
    };
  }

  /**
   * Login settings of a stored mailbox: its password decrypted, or, for an OAuth mailbox, a source
   * of access tokens that renews them as they expire.
   */
  function credentialsOf(
    row: Pick<MailboxRow, 'id' | 'imap' | 'smtp' | 'password_encrypted' | 'connection_type'>,
  ): MailboxCredentials {
    if (row.connection_type !== 'oauth2') return decryptCredentials(row);
    const oauth = {
      accessToken: (renew: boolean) => {
        if (!oauthTokens) throw new Error('an OAuth mailbox needs the OAuth token source');
        return oauthTokens.accessToken(row.id, renew);
      },
    };
    return {
      imap: { ...serverConfig(parseJson<ServerSettings>(row.imap), ''), oauth },
      smtp: { ...serverConfig(parseJson<ServerSettings>(row.smtp), ''), oauth },
    };
  }

  function describeFailure(label: 'IMAP' | 'SMTP', error: unknown, config: MailServerConfig): string {
    if (isMailConnectionError(error) && error.reason !== undefined) {
      logger?.debug({ side: error.side, host: error.host, port: error.port, reason: error.reason }, error.message);
    }
    const text = isMailConnectionError(error)
      ? error.message
      : `${label} check of ${config.host}:${config.port} failed: ${error instanceof Error ? error.message : String(error)}`;
    // The mail layer scrubs its messages already; this is the last line before a response body.
    return scrubSecret(text, config.password, config.username);
  }

  /**
   * Logs in to both servers at once; a 422 that says which side failed, what the server answered
   * and, per side, the problem and its fix (`provider`: a preset that refuses account passwords
   * makes a refused login read "use an app password").
   */
  async function verifyConnection(credentials: MailboxCredentials, provider?: string): Promise<void> {
    const [imap, smtp] = await connectionGuard.settle<unknown>([
      () => mailClients.verifyImap(credentials.imap, { timeoutMs: verifyTimeoutMs }),
      () => mailClients.verifySmtp(credentials.smtp, { timeoutMs: verifyTimeoutMs }),
    ]);
    const texts: string[] = [];
    const failures: ConnectionFailure[] = [];
    const appPasswordProvider =
      provider !== undefined && isKnownProvider(provider) && PROVIDERS[provider].appPasswordRequired;
    for (const [label, result, config] of [
      ['IMAP', imap, credentials.imap],
      ['SMTP', smtp, credentials.smtp],
    ] as const) {
      if (result.status !== 'rejected') continue;
      texts.push(describeFailure(label, result.reason, config));
      if (isMailConnectionError(result.reason))
        failures.push(diagnoseMailFailure(result.reason, { appPasswordProvider, oauth: config.oauth !== undefined }));
    }
    if (texts.length === 2)
      throw new ConnectionFailedError(`Both IMAP and SMTP failed. ${texts.join(' — ')}`, failures);
    if (texts.length === 1) throw new ConnectionFailedError(texts[0]!, failures);
  }

  async function roundTrip(mailbox: CheckedMailbox, credentials: MailboxCredentials): Promise<RoundTripResult> {
    const writeMail = checkMail ? await checkMail(mailbox) : undefined;
    return proveRoundTrip(mailbox.email, credentials, {
      waitMs: roundTripWaitMs,
      timeoutMs: verifyTimeoutMs,
      clients: mailClients,
      ...(writeMail ? { writeMail } : {}),
    });
  }

  const checkedOf = (row: MailboxRow): CheckedMailbox => ({ ...row, workspaceId: row.workspace_id });

  /** Mailboxes as the API returns them, each with its outlook (one query for the page, not one per mailbox). */
  async function present(workspaceId: string, rows: MailboxRow[]): Promise<Mailbox[]> {
    return presentMailboxes(db, workspaceId, rows, clock.now());
  }

  async function presentOne(workspaceId: string, row: MailboxRow): Promise<Mailbox> {
    return (await present(workspaceId, [row]))[0]!;
  }

  async function findOrThrow(workspaceId: string, id: string): Promise<MailboxRow> {
    const row = await repository.findById(workspaceId, id);
    if (!row) throw new NotFoundError(`no mailbox ${id}`);
    return row;
  }

  return {
    verifyConnection,
    decryptCredentials,
    maxImportBytes,

    /**
     * Stores a mailbox the user just signed in to with OAuth, after logging in to IMAP and SMTP
     * with its new access token (422 when refused). An address already connected in the workspace
     * (or the mailbox the flow was started for) is reconnected in place: its history stays, an
     * `error` mailbox becomes `active`, and a password it had is forgotten.
     */
    async connectOAuth(workspaceId: string, connection: OAuthConnection): Promise<Mailbox> {
      const email = connection.email.trim();
      const emailNormalized = email.toLowerCase();
      let existing: MailboxRow | undefined;
      if (connection.mailboxId !== undefined) {
        existing = await findOrThrow(workspaceId, connection.mailboxId);
        if (existing.email_normalized !== emailNormalized) {
          throw new ValidationError(
            `the account signed in to is ${email}, but this mailbox is ${existing.email}: sign in as ${existing.email}`,
            [{ path: '/query/code', message: `signed in as ${email}, expected ${existing.email}` }],
          );
        }
      } else {
        existing = await repository.findByEmail(workspaceId, emailNormalized);
      }
      if (!existing && (await repository.countInWorkspace(workspaceId)) >= maxMailboxes) {
        throw mailboxLimitReached(maxMailboxes);
      }
      const server = (side: OAuthServer): ServerSettings => ({
        host: side.host,
        port: side.port,
        secure: side.secure,
        username: email,
      });
      const imap = server(connection.imap);
      const smtp = server(connection.smtp);
      // the token was issued a moment ago: a refusal now is an answer, not a reason to renew
      const oauth = { accessToken: async () => connection.tokens.accessToken };
      await verifyConnection({
        imap: { ...serverConfig(imap, ''), oauth },
        smtp: { ...serverConfig(smtp, ''), oauth },
      });
      const now = clock.now();
      const id = existing?.id ?? newId('mbx', now.getTime());
      const columns: MailboxRowUpdate = {
        provider: connection.mailboxProvider,
        connection_type: 'oauth2',
        oauth_provider: connection.oauthProvider,
        imap: JSON.stringify(imap),
        smtp: JSON.stringify(smtp),
        password_encrypted: '',
        ...tokenColumns(secretKey, id, connection.tokens),
        updated_at: now.toISOString(),
      };
      if (existing) {
        const moved =
          movesServer(parseJson<ServerSettings>(existing.imap), imap) ||
          movesServer(parseJson<ServerSettings>(existing.smtp), smtp);
        // other servers prove nothing about the old ones: the mailbox proves itself again
        if (moved)
          Object.assign(columns, { proven_at: null, proof_note: NOT_RUN, next_proof_at: null, proof_attempts: 0 });
        await repository.update(workspaceId, id, columns);
        const reconnected = await applyMailboxEvent(db, id, { type: 'reconnected', at: now }, { workspaceId, at: now });
        if (!reconnected) throw new NotFoundError(`no mailbox ${id}`);
        return presentOne(workspaceId, reconnected.row);
      }
      try {
        const row = await repository.insert({
          ...(columns as Required<Pick<MailboxRowUpdate, 'provider' | 'imap' | 'smtp'>>),
          id,
          workspace_id: workspaceId,
          email,
          email_normalized: emailNormalized,
          name: null,
          connection_type: 'oauth2',
          status: 'active',
          password_encrypted: '',
          warmup: JSON.stringify(DEFAULT_WARMUP),
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
          proof_note: NOT_RUN,
          proof_attempts: 0,
          oauth_provider: connection.oauthProvider,
          access_token_encrypted: columns.access_token_encrypted as string,
          access_token_expires_at: columns.access_token_expires_at as string,
          refresh_token_encrypted: columns.refresh_token_encrypted as string,
        });
        return presentOne(workspaceId, row);
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict(email);
        throw error;
      }
    },

    async list(
      workspaceId: string,
      query: MailboxListQuery,
    ): Promise<{ mailboxes: Mailbox[]; pagination: Pagination }> {
      const page = query.page ?? 1;
      const limit = query.limit ?? 20;
      const { rows, total } = await repository.list(
        workspaceId,
        { status: query.status, provider: query.provider, q: query.q },
        { offset: (page - 1) * limit, limit },
      );
      return { mailboxes: await present(workspaceId, rows), pagination: pagination(page, limit, total) };
    },

    /** Mailboxes this workspace may still connect under WARMUP_MAX_MAILBOXES, and that limit. */
    async remainingMailboxes(workspaceId: string): Promise<{ remaining: number; limit: number }> {
      const remaining = Math.max(0, maxMailboxes - (await repository.countInWorkspace(workspaceId)));
      return { remaining, limit: maxMailboxes };
    },

    async get(workspaceId: string, id: string): Promise<Mailbox> {
      return presentOne(workspaceId, await findOrThrow(workspaceId, id));
    },

    /**
     * `roundTrip: false` (bulk import) checks the logins only and leaves the round trip that admits
     * the mailbox to the pool to the engine's next cycle.
     */
    async create(
      workspaceId: string,
      body: CreateMailboxBody,
      options: { roundTrip?: boolean } = {},
    ): Promise<Mailbox> {
      const errors: FieldError[] = [];
      const email = body.email.trim();
      const password = cleanPassword(body.password, errors);
      const imap = resolveServer('imap', body.provider, undefined, body.imap, email, errors);
      const smtp = resolveServer('smtp', body.provider, undefined, body.smtp, email, errors);
      refuseUncheckedTls('imap', body.imap, errors);
      refuseUncheckedTls('smtp', body.smtp, errors);
      const warmup = resolveWarmup(DEFAULT_WARMUP, body.warmup, errors);
      throwIfInvalid(errors);
      if (!imap || !smtp) throw new Error('unreachable: server settings resolved without errors');

      const emailNormalized = email.toLowerCase();
      // Answer a duplicate before spending seconds on a login; the unique constraint decides races.
      if (await repository.findByEmail(workspaceId, emailNormalized)) throw conflict(email);
      // Checked before the login too; concurrent creates may pass it together and overshoot by their number.
      if ((await repository.countInWorkspace(workspaceId)) >= maxMailboxes) {
        throw mailboxLimitReached(maxMailboxes);
      }
      const credentials = { imap: serverConfig(imap, password), smtp: serverConfig(smtp, password) };
      // the id is drawn before the check: the mailbox's client (drawn from it) writes the check message
      const id = newId('mbx', clock.now().getTime());
      let proof: MailboxRowUpdate = { proof_note: NOT_CHECKED };
      if (body.verify !== false) {
        await verifyConnection(credentials, body.provider);
        proof =
          options.roundTrip === false
            ? { proof_note: NOT_RUN }
            : proofChanges(
                await roundTrip(
                  {
                    id,
                    workspaceId,
                    email,
                    name: body.name ?? null,
                    warmup: JSON.stringify(warmup),
                    provider: body.provider,
                    oauth_provider: null,
                    smtp: JSON.stringify({ host: smtp.host }),
                  },
                  credentials,
                ),
                clock.now(),
                0,
              );
      }

      const now = clock.now();
      try {
        const row = await repository.insert({
          id,
          workspace_id: workspaceId,
          email,
          email_normalized: emailNormalized,
          name: body.name ?? null,
          provider: body.provider,
          connection_type: body.connectionType,
          status: 'active',
          imap: JSON.stringify(imap),
          smtp: JSON.stringify(smtp),
          password_encrypted: encryptSecret(secretKey, password, id),
          warmup: JSON.stringify(warmup),
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
          proven_at: proof.proven_at ?? null,
          proof_note: proof.proof_note ?? null,
          next_proof_at: proof.next_proof_at ?? null,
          proof_attempts: proof.proof_attempts ?? 0,
        });
        return presentOne(workspaceId, row);
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict(email);
        throw error;
      }
    },

    /**
     * Name and warmup settings change as sent. Password, servers or provider are logged in with
     * first (a failure is a 422 and nothing changes); success also brings an `error` mailbox back.
     */
    async update(workspaceId: string, id: string, body: UpdateMailboxBody): Promise<Mailbox> {
      const current = await findOrThrow(workspaceId, id);
      const reconnect =
        body.password !== undefined ||
        body.imap !== undefined ||
        body.smtp !== undefined ||
        body.provider !== undefined;
      if (reconnect && current.connection_type === 'oauth2') {
        throw new ValidationError(
          'this mailbox signs in with OAuth: reconnect it (POST /api/oauth/{provider}/authorize with its mailboxId) instead of sending a password, servers or provider',
          [{ path: '/body', message: 'password, imap, smtp and provider cannot change on an OAuth mailbox' }],
        );
      }
      const errors: FieldError[] = [];
      const changes: MailboxRowUpdate = {};

      if (body.name !== undefined) changes.name = body.name;
      if (body.warmup !== undefined)
        changes.warmup = JSON.stringify(resolveWarmup(parseWarmupSettings(current.warmup), body.warmup, errors));

      let credentials: MailboxCredentials | undefined;
      if (reconnect) {
        const provider = body.provider ?? current.provider;
        // A new provider starts from its own preset, not from the old provider's hosts.
        const fresh = body.provider !== undefined && body.provider !== current.provider;
        const imap = resolveServer(
          'imap',
          provider,
          fresh ? undefined : parseJson<ServerSettings>(current.imap),
          body.imap,
          current.email,
          errors,
        );
        const smtp = resolveServer(
          'smtp',
          provider,
          fresh ? undefined : parseJson<ServerSettings>(current.smtp),
          body.smtp,
          current.email,
          errors,
        );
        refuseUncheckedTls('imap', body.imap, errors);
        refuseUncheckedTls('smtp', body.smtp, errors);
        if (body.password === undefined && imap && smtp) {
          const moved = (
            [
              ['imap', imap],
              ['smtp', smtp],
            ] as const
          )
            .filter(([side, next]) => movesServer(parseJson<ServerSettings>(current[side]), next))
            .map(([side]) => side);
          if (moved.length > 0) throw new PasswordRequiredError(moved);
        }
        let password: string | undefined;
        if (body.password !== undefined) {
          password = cleanPassword(body.password, errors);
        } else {
          try {
            password = decryptSecret(secretKey, current.password_encrypted, current.id);
          } catch (error) {
            if (!(error instanceof SecretDecryptionError)) throw error;
            errors.push({ path: '/body/password', message: PASSWORD_UNREADABLE });
          }
        }
        throwIfInvalid(errors);
        if (!imap || !smtp || password === undefined) throw new Error('unreachable: settings resolved without errors');
        credentials = { imap: serverConfig(imap, password), smtp: serverConfig(smtp, password) };
        changes.provider = provider;
        changes.imap = JSON.stringify(imap);
        changes.smtp = JSON.stringify(smtp);
        if (body.password !== undefined) changes.password_encrypted = encryptSecret(secretKey, password, current.id);
      }
      throwIfInvalid(errors);
      if (Object.keys(changes).length === 0) return presentOne(workspaceId, current);

      if (credentials) {
        await verifyConnection(credentials, changes.provider ?? current.provider);
        // New servers or a new login prove nothing about the old ones: the mailbox proves itself again.
        Object.assign(changes, proofChanges(await roundTrip(checkedOf(current), credentials), clock.now(), 0));
      }
      changes.updated_at = clock.now().toISOString();
      // new settings (a time zone, a send window) may make its day due for planning at another time
      if (changes.warmup !== undefined) changes.plan_due_at = changes.updated_at;
      const updated = await repository.update(workspaceId, id, changes);
      if (!updated) throw new NotFoundError(`no mailbox ${id}`);
      // A login just worked with the new settings: past failures (and their backoff) were about the old ones.
      const reconnected = credentials
        ? await applyMailboxEvent(db, id, { type: 'reconnected', at: clock.now() }, { workspaceId, at: clock.now() })
        : undefined;
      return presentOne(workspaceId, reconnected?.row ?? updated);
    },

    /** Deletes the mailbox; one that signed in with OAuth also gives its access back to the provider. */
    async remove(workspaceId: string, id: string): Promise<void> {
      const current = await findOrThrow(workspaceId, id);
      const revoke = current.connection_type === 'oauth2' ? await oauthTokens?.revocationOf(current.id) : undefined;
      if (!(await repository.delete(workspaceId, id))) throw new NotFoundError(`no mailbox ${id}`);
      if (revoke) {
        await revoke().catch((error: unknown) =>
          logger?.debug({ mailboxId: id, err: error }, 'the OAuth provider did not take the revocation'),
        );
      }
    },

    /** active/error → paused; already paused answers the mailbox unchanged. `lastError` stays, so the user still sees why. */
    async pause(workspaceId: string, id: string): Promise<Mailbox> {
      const paused = await applyMailboxEvent(db, id, { type: 'paused' }, { workspaceId, at: clock.now() });
      if (!paused) throw new NotFoundError(`no mailbox ${id}`);
      return presentOne(workspaceId, paused.row);
    },

    /**
     * paused/error → active after a successful login, with a round trip if the mailbox is not proven
     * yet. An active, proven mailbox answers unchanged without logging in; an active, unproven one
     * logs in and runs its round trip now (how an owner need not wait for the engine).
     */
    async resume(workspaceId: string, id: string): Promise<Mailbox> {
      let current = await findOrThrow(workspaceId, id);
      // the owner says the automatic reply is over: it receives warmup mail again at once
      if (current.auto_reply_at !== null) {
        await repository.update(workspaceId, id, { auto_reply_at: null, updated_at: clock.now().toISOString() });
        current = await findOrThrow(workspaceId, id);
      }
      if (current.status === 'active' && current.proven_at !== null) return presentOne(workspaceId, current);
      let credentials: MailboxCredentials;
      try {
        credentials = credentialsOf(current);
      } catch (error) {
        if (error instanceof SecretDecryptionError) throw new ConnectionFailedError(PASSWORD_UNREADABLE);
        throw error;
      }
      await verifyConnection(credentials, current.provider);
      const proof =
        current.proven_at === null
          ? proofChanges(await roundTrip(checkedOf(current), credentials), clock.now(), 0)
          : {};
      if (Object.keys(proof).length > 0) {
        await repository.update(workspaceId, id, { ...proof, updated_at: clock.now().toISOString() });
      }
      if (current.status === 'active') return presentOne(workspaceId, await findOrThrow(workspaceId, id));
      const resumed = await applyMailboxEvent(
        db,
        id,
        { type: 'resumed', at: clock.now() },
        { workspaceId, at: clock.now() },
      );
      if (!resumed) throw new NotFoundError(`no mailbox ${id}`);
      return presentOne(workspaceId, resumed.row);
    },

    async listInteractions(
      workspaceId: string,
      mailboxId: string,
      query: InteractionListQuery,
    ): Promise<{ interactions: Interaction[]; pagination: Pagination }> {
      const errors: FieldError[] = [];
      for (const field of ['startDate', 'endDate'] as const) {
        const day = query[field];
        if (day !== undefined && dayToTime(day) === undefined)
          errors.push({ path: `/query/${field}`, message: 'must be a real calendar day (YYYY-MM-DD)' });
      }
      if (errors.length === 0 && query.startDate && query.endDate && query.startDate > query.endDate) {
        errors.push({ path: '/query/endDate', message: `must not be before startDate (${query.startDate})` });
      }
      throwIfInvalid(errors);
      await findOrThrow(workspaceId, mailboxId);

      const page = query.page ?? 1;
      const limit = query.limit ?? 20;
      const { rows, total } = await repository.listInteractions(
        workspaceId,
        mailboxId,
        {
          type: query.type,
          from: query.startDate && `${query.startDate}T00:00:00.000Z`,
          before: query.endDate && `${addDays(query.endDate, 1)}T00:00:00.000Z`,
        },
        { offset: (page - 1) * limit, limit },
      );
      return {
        interactions: rows.map((row) => toInteraction(row, workspaceId)),
        pagination: pagination(page, limit, total),
      };
    },

    async listHumanReplies(
      workspaceId: string,
      mailboxId: string,
      query: HumanReplyListQuery,
    ): Promise<{ replies: HumanReply[]; pagination: Pagination }> {
      await findOrThrow(workspaceId, mailboxId);
      const page = query.page ?? 1;
      const limit = query.limit ?? 20;
      const { rows, total } = await repository.listHumanReplies(workspaceId, mailboxId, {
        offset: (page - 1) * limit,
        limit,
      });
      return { replies: rows.map(toHumanReply), pagination: pagination(page, limit, total) };
    },

    /**
     * For the engine, across workspaces: login settings of a mailbox with its decrypted password.
     * Never put the result in a response, a log line or an error message.
     */
    async getCredentials(mailboxId: string): Promise<MailboxCredentials> {
      const row = await repository.findByIdInAnyWorkspace(mailboxId);
      if (!row) throw new NotFoundError(`no mailbox ${mailboxId}`);
      try {
        return credentialsOf(row);
      } catch (error) {
        // The key changed under a stored password: the engine can never log in with it, so the
        // mailbox stops with a reason the user can act on instead of failing every cycle.
        if (error instanceof SecretDecryptionError) {
          await applyMailboxEvent(
            db,
            mailboxId,
            { type: 'stopped', lastError: PASSWORD_UNREADABLE },
            { at: clock.now() },
          );
        }
        throw error;
      }
    },
  };
}

export type MailboxesService = ReturnType<typeof createMailboxesService>;
