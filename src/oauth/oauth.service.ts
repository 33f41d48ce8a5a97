/*
 * The consent flow: authorize (a workspace asks for the provider's consent page) and callback (the
 * provider sends the browser back with a code). The `state` of each flow is random, stored only as
 * its SHA-256 with the workspace that started it and the PKCE verifier, lives ten minutes and is
 * deleted by the first callback that names it — a replayed, forged or expired callback finds
 * nothing and changes nothing. A flow started in a browser session connects at its callback (that
 * browser is the member's); a flow started with an API key does not, since anyone may be sent its
 * consent link: its tokens wait, encrypted, for a signed-in member of the workspace to confirm
 * (confirm, cancel, pending).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { AppError, NotFoundError } from '../http/errors.js';
import { TokenUnavailableError } from '../mail/errors.js';
import { decryptSecret, encryptSecret } from '../secrets/secrets.js';
import { feedSecretContext, POSTMASTER_SCOPE, saveConnection } from '../feeds/feed-connections.repository.js';
import type { MailboxesService } from '../mailboxes/mailboxes.service.js';
import type { Mailbox } from '../mailboxes/mailboxes.schemas.js';
import type { IssuedTokens, OAuthClient } from './oauth.client.js';
import type { AuthorizeBody, CallbackQuery, OAuthProviderId, PendingConnect } from './oauth.schemas.js';

/** How long a user has between the start of a flow and its callback. */
export const STATE_TTL_MS = 10 * 60_000;

export class InvalidStateError extends AppError {
  constructor() {
    super(
      400,
      'oauth_state_invalid',
      'this sign-in answer is unknown, already used or expired: start the connection again from the dashboard',
    );
  }
}

const stateId = (state: string) => createHash('sha256').update(state, 'utf8').digest('hex');
const pendingContext = (id: string) => `${id}:oauth-pending`;
const CONFIRMATION_NOT_FOUND =
  'no such connection waiting for confirmation in this workspace (used, cancelled or expired)';

export function createOAuthService({
  db,
  clock,
  secretKey,
  client,
  mailboxes,
  publicUrl,
}: {
  db: Kysely<Database>;
  clock: Clock;
  secretKey: Buffer;
  client: OAuthClient;
  mailboxes: Pick<MailboxesService, 'get' | 'connectOAuth'>;
  publicUrl: string | undefined;
}) {
  function providerOrThrow(provider: OAuthProviderId) {
    const settings = client.settings(provider);
    if (!settings) {
      throw new NotFoundError(
        `sign-in with ${provider} is not set up on this server (WARMUP_OAUTH_${provider.toUpperCase()}_CLIENT_ID)`,
      );
    }
    return settings;
  }

  /** The dashboard page the browser lands on, with what happened. */
  function dashboard(path: string, query: Record<string, string>): string {
    return `${publicUrl ?? ''}${path}?${new URLSearchParams(query).toString()}`;
  }

  function connect(
    workspaceId: string,
    provider: OAuthProviderId,
    mailboxId: string | null,
    tokens: IssuedTokens & { email: string; refreshToken: string },
  ): Promise<Mailbox> {
    const settings = providerOrThrow(provider);
    return mailboxes.connectOAuth(workspaceId, {
      oauthProvider: provider,
      mailboxProvider: settings.mailboxProvider,
      email: tokens.email,
      imap: settings.imap,
      smtp: settings.smtp,
      tokens,
      ...(mailboxId ? { mailboxId } : {}),
    });
  }

  /** The waiting consent of this workspace named by a confirmation link, while it is fresh. */
  async function pendingRow(workspaceId: string, link: string) {
    const row = await db
      .selectFrom('oauth_confirmations')
      .selectAll()
      .where('id', '=', stateId(link))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!row || Date.parse(row.expires_at) <= clock.now().getTime()) throw new NotFoundError(CONFIRMATION_NOT_FOUND);
    return row;
  }

  return {
    providers: () => client.configured(),

    /** What the confirmation page shows: which address would join which workspace. */
    async pending(workspaceId: string, link: string): Promise<PendingConnect> {
      const row = await pendingRow(workspaceId, link);
      const workspace = await db
        .selectFrom('workspaces')
        .select('name')
        .where('id', '=', workspaceId)
        .executeTakeFirstOrThrow();
      return {
        email: row.email,
        provider: row.provider,
        providerName: providerOrThrow(row.provider).name,
        workspace: { id: workspaceId, name: workspace.name },
        mailboxId: row.mailbox_id,
        expiresAt: row.expires_at,
      };
    },

    /** A member's yes: the waiting tokens connect the mailbox, once. */
    async confirm(workspaceId: string, link: string): Promise<Mailbox> {
      const fresh = await pendingRow(workspaceId, link);
      // deleted before the connect, so two confirmations racing connect once
      const row = await db
        .deleteFrom('oauth_confirmations')
        .where('id', '=', fresh.id)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new NotFoundError(CONFIRMATION_NOT_FOUND);
      let tokens: IssuedTokens & { email: string; refreshToken: string };
      try {
        tokens = parseTokens(decryptSecret(secretKey, row.tokens_encrypted, pendingContext(row.id)));
      } catch {
        throw new NotFoundError(CONFIRMATION_NOT_FOUND);
      }
      try {
        return await connect(workspaceId, row.provider, row.mailbox_id, tokens);
      } catch (error) {
        if (error instanceof TokenUnavailableError)
          throw new AppError(502, 'oauth_provider_unavailable', error.message);
        throw error;
      }
    },

    /** A member's no: the waiting tokens are discarded. */
    async cancel(workspaceId: string, link: string): Promise<void> {
      const row = await pendingRow(workspaceId, link);
      await db.deleteFrom('oauth_confirmations').where('id', '=', row.id).execute();
    },

    async authorize(
      workspaceId: string,
      provider: OAuthProviderId,
      body: NonNullable<AuthorizeBody>,
      /** The browser session starting the flow, if any: only it may finish the flow. */
      sessionId?: string,
      /** A Postmaster Tools consent for these domains (feeds/), not a mailbox's: its scope, its own ending. */
      feed?: { domains: string[] },
    ): Promise<{ authorizationUrl: string; expiresAt: string }> {
      providerOrThrow(provider);
      if (body.mailboxId !== undefined) await mailboxes.get(workspaceId, body.mailboxId);
      const now = clock.now();
      // flows nobody finished are of no use to anyone
      await db.deleteFrom('oauth_states').where('expires_at', '<', now.toISOString()).execute();
      const flow = client.newFlowSecrets();
      const id = stateId(flow.state);
      const expiresAt = new Date(now.getTime() + STATE_TTL_MS).toISOString();
      let authorizationUrl: string;
      try {
        authorizationUrl = await client.authorizationUrl(provider, {
          ...flow,
          ...(body.loginHint ? { loginHint: body.loginHint } : {}),
          ...(feed ? { scopes: [POSTMASTER_SCOPE] } : {}),
        });
      } catch (error) {
        if (error instanceof TokenUnavailableError)
          throw new AppError(502, 'oauth_provider_unavailable', error.message);
        throw error;
      }
      await db
        .insertInto('oauth_states')
        .values({
          id,
          workspace_id: workspaceId,
          provider,
          mailbox_id: body.mailboxId ?? null,
          code_verifier_encrypted: encryptSecret(secretKey, flow.codeVerifier, id),
          created_at: now.toISOString(),
          expires_at: expiresAt,
          session_id: sessionId ?? null,
        })
        .execute();
      if (feed)
        await db
          .insertInto('feed_oauth_flows')
          .values({ id, domains: JSON.stringify(feed.domains) })
          .execute();
      return { authorizationUrl, expiresAt };
    },

    /**
     * Finishes a flow: the state is consumed first (so it works once), then the code is traded for
     * tokens, the mailbox logs in with them and is stored. Answers where to send the browser: the
     * mailbox's page, or back with `oauth_error` saying what went wrong.
     */
    async callback(query: CallbackQuery, rawQuery: string, sessionId?: string): Promise<string> {
      if (!query.state) throw new InvalidStateError();
      const id = stateId(query.state);
      // read before the state goes (its feed row goes with it)
      const feed = await db.selectFrom('feed_oauth_flows').select('domains').where('id', '=', id).executeTakeFirst();
      const row = await db.deleteFrom('oauth_states').where('id', '=', id).returningAll().executeTakeFirst();
      const now = clock.now();
      if (!row || Date.parse(row.expires_at) <= now.getTime()) throw new InvalidStateError();
      // A flow started in a browser session is finished by that browser only: a consent link
      // handed to someone else cannot connect a mailbox to the starter's workspace.
      if (row.session_id !== null && row.session_id !== sessionId) throw new InvalidStateError();
      const settings = providerOrThrow(row.provider);
      const back = feed
        ? '/domains'
        : row.mailbox_id
          ? `/mailboxes/${encodeURIComponent(row.mailbox_id)}`
          : '/mailboxes/new';
      if (query.error !== undefined) {
        const reason = query.error === 'access_denied' ? 'consent was not given' : query.error;
        return dashboard(back, { oauth_error: `${settings.name} sign-in was not completed: ${reason}` });
      }
      try {
        const codeVerifier = decryptSecret(secretKey, row.code_verifier_encrypted, id);
        const tokens = await client.exchangeCode(
          row.provider,
          new URL(`${client.redirectUri()}?${rawQuery}`),
          { state: query.state, codeVerifier },
          now,
        );
        if (!tokens.refreshToken) {
          throw new TokenUnavailableError(
            `${settings.name} gave no refresh token (offline access was not granted)`,
            true,
          );
        }
        if (feed) {
          // a feed's consent is started in a browser session only (its route is session-only)
          await saveConnection(db, {
            workspaceId: row.workspace_id,
            feed: 'postmaster',
            secretEncrypted: encryptSecret(
              secretKey,
              tokens.refreshToken,
              feedSecretContext(row.workspace_id, 'postmaster'),
            ),
            domains: JSON.parse(feed.domains) as string[],
            at: now.toISOString(),
          });
          return dashboard('/domains', { feeds: 'connected' });
        }
        if (!tokens.email) {
          throw new TokenUnavailableError(
            `${settings.name} did not say which address signed in (the "email" scope is missing)`,
            true,
          );
        }
        const issued = { ...tokens, email: tokens.email, refreshToken: tokens.refreshToken };
        if (row.session_id === null) {
          // Started with an API key: whoever opened the link may not be of the workspace, so a
          // signed-in member confirms first (the code itself would expire while they sign in).
          const link = randomBytes(24).toString('base64url');
          const pendingId = stateId(link);
          await db.deleteFrom('oauth_confirmations').where('expires_at', '<', now.toISOString()).execute();
          await db
            .insertInto('oauth_confirmations')
            .values({
              id: pendingId,
              workspace_id: row.workspace_id,
              provider: row.provider,
              mailbox_id: row.mailbox_id,
              email: tokens.email,
              tokens_encrypted: encryptSecret(secretKey, serializeTokens(issued), pendingContext(pendingId)),
              created_at: now.toISOString(),
              expires_at: new Date(now.getTime() + STATE_TTL_MS).toISOString(),
            })
            .execute();
          return dashboard('/oauth/confirm', { flow: link });
        }
        const mailbox = await connect(row.workspace_id, row.provider, row.mailbox_id, issued);
        return dashboard(`/mailboxes/${encodeURIComponent(mailbox.id)}`, { oauth: 'connected' });
      } catch (error) {
        if (error instanceof AppError || error instanceof TokenUnavailableError) {
          return dashboard(back, { oauth_error: error.message });
        }
        throw error;
      }
    },
  };
}

function serializeTokens(tokens: IssuedTokens & { email: string; refreshToken: string }): string {
  return JSON.stringify({ ...tokens, expiresAt: tokens.expiresAt.toISOString() });
}

function parseTokens(json: string): IssuedTokens & { email: string; refreshToken: string } {
  const value = JSON.parse(json) as { accessToken: string; refreshToken: string; email: string; expiresAt: string };
  return { ...value, expiresAt: new Date(value.expiresAt) };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
