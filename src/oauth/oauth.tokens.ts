/*
 * The access tokens of OAuth mailboxes. Refresh and access tokens are stored like passwords
 * (AES-256-GCM, bound to the mailbox and to their column) and never leave the server. An access
 * token is renewed a few minutes before it expires, and at once when a mail server refused it; a
 * refresh token the provider no longer accepts stops the mailbox with a `lastError` that asks for
 * a reconnect (through mailbox-state.ts, like every state change), while a provider that cannot be
 * reached is a temporary failure the engine retries.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, MailboxRowUpdate } from '../db/schema.js';
import { TokenUnavailableError } from '../mail/errors.js';
import { decryptSecret, encryptSecret, SecretDecryptionError } from '../secrets/secrets.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';
import type { IssuedTokens, OAuthClient } from './oauth.client.js';

/** An access token closer than this to its expiry is renewed before a login. */
export const REFRESH_MARGIN_MS = 5 * 60_000;

const refreshContext = (mailboxId: string) => `${mailboxId}:oauth-refresh`;
const accessContext = (mailboxId: string) => `${mailboxId}:oauth-access`;

/** The token columns of a mailbox for freshly issued tokens (the refresh token only when one came). */
export function tokenColumns(secretKey: Buffer, mailboxId: string, tokens: IssuedTokens): MailboxRowUpdate {
  return {
    access_token_encrypted: encryptSecret(secretKey, tokens.accessToken, accessContext(mailboxId)),
    access_token_expires_at: tokens.expiresAt.toISOString(),
    ...(tokens.refreshToken
      ? { refresh_token_encrypted: encryptSecret(secretKey, tokens.refreshToken, refreshContext(mailboxId)) }
      : {}),
  };
}

const UNREADABLE =
  'the stored sign-in cannot be decrypted with this secret key (WARMUP_SECRET_KEY or secret.key changed): reconnect the mailbox';

export function createOAuthTokens({
  db,
  clock,
  secretKey,
  client,
}: {
  db: Kysely<Database>;
  clock: Clock;
  secretKey: Buffer;
  client: Pick<OAuthClient, 'refresh' | 'revoke'>;
}) {
  async function stop(mailboxId: string, lastError: string): Promise<void> {
    await applyMailboxEvent(db, mailboxId, { type: 'stopped', lastError }, { at: clock.now() });
  }

  async function tokenRow(mailboxId: string) {
    return db
      .selectFrom('mailboxes')
      .select(['id', 'oauth_provider', 'refresh_token_encrypted', 'access_token_encrypted', 'access_token_expires_at'])
      .where('id', '=', mailboxId)
      .executeTakeFirst();
  }

  async function accessToken(mailboxId: string, renew: boolean, raced = false): Promise<string> {
    const row = await tokenRow(mailboxId);
    if (!row || row.oauth_provider === null || row.refresh_token_encrypted === null) {
      throw new TokenUnavailableError('this mailbox has no OAuth sign-in: reconnect it', true);
    }
    const now = clock.now();
    try {
      const expiresAt = row.access_token_expires_at === null ? 0 : Date.parse(row.access_token_expires_at);
      if (!renew && row.access_token_encrypted !== null && expiresAt - now.getTime() > REFRESH_MARGIN_MS) {
        return decryptSecret(secretKey, row.access_token_encrypted, accessContext(row.id));
      }
      const refreshToken = decryptSecret(secretKey, row.refresh_token_encrypted, refreshContext(row.id));
      let tokens: IssuedTokens;
      try {
        tokens = await client.refresh(row.oauth_provider, refreshToken, now);
      } catch (error) {
        if (error instanceof TokenUnavailableError && error.revoked) {
          // Another worker may have just swapped a rotating refresh token: then its new one is good.
          const current = await tokenRow(mailboxId);
          if (!raced && current && current.refresh_token_encrypted !== row.refresh_token_encrypted) {
            return accessToken(mailboxId, false, true);
          }
          await stop(mailboxId, error.message);
        }
        throw error;
      }
      // compare-and-set on the refresh token: a concurrent refresh that rotated it wins
      await db
        .updateTable('mailboxes')
        .set(tokenColumns(secretKey, row.id, tokens))
        .where('id', '=', row.id)
        .where('refresh_token_encrypted', '=', row.refresh_token_encrypted)
        .execute();
      return tokens.accessToken;
    } catch (error) {
      if (!(error instanceof SecretDecryptionError)) throw error;
      await stop(mailboxId, UNREADABLE);
      throw new TokenUnavailableError(UNREADABLE, true);
    }
  }

  return {
    /** A valid access token of an OAuth mailbox; `renew` after a server refused the last one. */
    accessToken: (mailboxId: string, renew: boolean) => accessToken(mailboxId, renew),

    /**
     * Read before a mailbox is deleted: revokes its refresh token at the provider afterwards. A
     * provider that cannot be reached changes nothing for the deletion.
     */
    async revocationOf(mailboxId: string): Promise<(() => Promise<void>) | undefined> {
      const row = await tokenRow(mailboxId);
      if (!row || row.oauth_provider === null || row.refresh_token_encrypted === null) return undefined;
      let refreshToken: string;
      try {
        refreshToken = decryptSecret(secretKey, row.refresh_token_encrypted, refreshContext(row.id));
      } catch {
        return undefined;
      }
      const provider = row.oauth_provider;
      return () => client.revoke(provider, refreshToken);
    },
  };
}

export type OAuthTokens = ReturnType<typeof createOAuthTokens>;
