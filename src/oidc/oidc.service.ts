/*
 * Signing in through the operator's OpenID Connect provider. A flow starts in a browser, which gets
 * a random cookie; the flow's row holds the SHA-256 of its `state` and of that cookie, the PKCE
 * verifier (encrypted) and the nonce, lives ten minutes and is deleted by the first callback that
 * names it. So a callback works once, and only in the browser that started it: a forged, replayed
 * or handed-over answer finds nothing to finish. The person is the one whose verified address the
 * provider names; an address no account uses gets an account only through an invite.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { hashToken } from '../http/auth.js';
import { AppError, NotFoundError } from '../http/errors.js';
import { decryptSecret, encryptSecret } from '../secrets/secrets.js';
import type { AccountsService, NewSession } from '../accounts/accounts.service.js';
import { OidcProviderError, type OidcClient } from './oidc.client.js';

/** How long a person has between the start of a sign-in and the provider's answer. */
export const OIDC_FLOW_TTL_MS = 10 * 60_000;

/** Refused sign-ins: the message says why, for the sign-in page to show. */
export class OidcSignInError extends AppError {
  constructor(code: string, message: string) {
    super(400, code, message);
  }
}

const stateInvalid = () =>
  new OidcSignInError(
    'oidc_state_invalid',
    'this sign-in answer is unknown, already used, expired or from another browser: start the sign-in again',
  );

export function createOidcSignIn({
  db,
  clock,
  secretKey,
  client,
  accounts,
}: {
  db: Kysely<Database>;
  clock: Clock;
  secretKey: Buffer;
  /** Undefined when the operator set no provider. */
  client: OidcClient | undefined;
  accounts: Pick<AccountsService, 'previewInvite' | 'signInVerifiedEmail' | 'acceptInviteVerifiedEmail'>;
}) {
  function configured(): OidcClient {
    if (!client) {
      throw new NotFoundError(
        'sign-in through an OpenID Connect provider is not set up on this server (WARMUP_OIDC_*)',
      );
    }
    return client;
  }

  return {
    info: () => ({ enabled: client !== undefined, name: client?.name ?? null }),

    /**
     * A new flow: where to send the browser, and the cookie value that binds the flow to it. With
     * an invite token the flow accepts that invite (checked now and again at the end).
     */
    async start(inviteToken?: string): Promise<{ authorizationUrl: string; browserToken: string; expiresAt: string }> {
      const oidc = configured();
      if (inviteToken !== undefined) await accounts.previewInvite(inviteToken);
      const now = clock.now();
      // flows nobody finished are of no use to anyone
      await db.deleteFrom('oidc_sign_ins').where('expires_at', '<', now.toISOString()).execute();
      const flow = oidc.newFlowSecrets();
      let authorizationUrl: string;
      try {
        authorizationUrl = await oidc.authorizationUrl(flow);
      } catch (error) {
        if (error instanceof OidcProviderError) throw new AppError(502, 'oidc_provider_unavailable', error.message);
        throw error;
      }
      const id = hashToken(flow.state);
      const browserToken = randomBytes(32).toString('base64url');
      const expiresAt = new Date(now.getTime() + OIDC_FLOW_TTL_MS).toISOString();
      await db
        .insertInto('oidc_sign_ins')
        .values({
          id,
          browser_hash: hashToken(browserToken),
          code_verifier_encrypted: encryptSecret(secretKey, flow.codeVerifier, id),
          nonce: flow.nonce,
          invite_token_hash: inviteToken === undefined ? null : hashToken(inviteToken),
          created_at: now.toISOString(),
          expires_at: expiresAt,
        })
        .execute();
      return { authorizationUrl, browserToken, expiresAt };
    },

    /**
     * The provider's answer: the flow is consumed first (so it works once), checked against the
     * browser's cookie, then the code is traded for the person's verified address and a session.
     */
    async finish(
      query: { state?: string; error?: string },
      rawQuery: string,
      browserToken: string | undefined,
    ): Promise<NewSession> {
      const oidc = configured();
      if (!query.state) throw stateInvalid();
      const id = hashToken(query.state);
      const row = await db.deleteFrom('oidc_sign_ins').where('id', '=', id).returningAll().executeTakeFirst();
      if (!row || Date.parse(row.expires_at) <= clock.now().getTime()) throw stateInvalid();
      if (browserToken === undefined || hashToken(browserToken) !== row.browser_hash) throw stateInvalid();
      if (query.error !== undefined) {
        const reason = query.error === 'access_denied' ? 'access was not granted' : query.error;
        throw new OidcSignInError('oidc_refused', `${oidc.name} sign-in was not completed: ${reason}`);
      }
      let identity;
      try {
        identity = await oidc.identify(rawQuery, {
          state: query.state,
          nonce: row.nonce,
          codeVerifier: decryptSecret(secretKey, row.code_verifier_encrypted, id),
        });
      } catch (error) {
        if (error instanceof OidcProviderError) throw new OidcSignInError('oidc_failed', error.message);
        throw error;
      }
      if (!identity.email) {
        throw new OidcSignInError(
          'oidc_email_missing',
          `${oidc.name} did not say which email address signed in (the "email" scope was not granted)`,
        );
      }
      if (!identity.emailVerified) {
        throw new OidcSignInError(
          'oidc_email_unverified',
          `${oidc.name} has not verified the address ${identity.email}: verify it there, or sign in with your password`,
        );
      }
      if (row.invite_token_hash !== null) {
        return accounts.acceptInviteVerifiedEmail(row.invite_token_hash, {
          email: identity.email,
          ...(identity.name ? { name: identity.name } : {}),
        });
      }
      return accounts.signInVerifiedEmail(identity.email);
    },
  };
}

export type OidcSignIn = ReturnType<typeof createOidcSignIn>;
