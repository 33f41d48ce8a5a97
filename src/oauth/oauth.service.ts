/*
 * The consent flow: authorize (a workspace asks for the provider's consent page) and callback (the
 * provider sends the browser back with a code). The `state` of each flow is random, stored only as
 * its SHA-256 with the workspace that started it and the PKCE verifier, lives ten minutes and is
 * deleted by the first callback that names it — a replayed, forged or expired callback finds
 * nothing and changes nothing.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { AppError, NotFoundError } from '../http/errors.js';
import { TokenUnavailableError } from '../mail/errors.js';
import { decryptSecret, encryptSecret } from '../secrets/secrets.js';
import type { MailboxesService } from '../mailboxes/mailboxes.service.js';
import type { OAuthClient } from './oauth.client.js';
import type { AuthorizeBody, CallbackQuery, OAuthProviderId } from './oauth.schemas.js';

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

  return {
    providers: () => client.configured(),

    async authorize(
      workspaceId: string,
      provider: OAuthProviderId,
      body: NonNullable<AuthorizeBody>,
      /** The browser session starting the flow, if any: only it may finish the flow. */
      sessionId?: string,
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
      const row = await db.deleteFrom('oauth_states').where('id', '=', id).returningAll().executeTakeFirst();
      const now = clock.now();
      if (!row || Date.parse(row.expires_at) <= now.getTime()) throw new InvalidStateError();
      // A flow started in a browser session is finished by that browser only: a consent link
      // handed to someone else cannot connect a mailbox to the starter's workspace.
      if (row.session_id !== null && row.session_id !== sessionId) throw new InvalidStateError();
      const settings = providerOrThrow(row.provider);
      const back = row.mailbox_id ? `/mailboxes/${encodeURIComponent(row.mailbox_id)}` : '/mailboxes/new';
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
        if (!tokens.email) {
          throw new TokenUnavailableError(
            `${settings.name} did not say which address signed in (the "email" scope is missing)`,
            true,
          );
        }
        const mailbox = await mailboxes.connectOAuth(row.workspace_id, {
          oauthProvider: row.provider,
          mailboxProvider: settings.mailboxProvider,
          email: tokens.email,
          imap: settings.imap,
          smtp: settings.smtp,
          tokens: { ...tokens, refreshToken: tokens.refreshToken },
          ...(row.mailbox_id ? { mailboxId: row.mailbox_id } : {}),
        });
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

export type OAuthService = ReturnType<typeof createOAuthService>;
