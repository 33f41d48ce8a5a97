import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * Removes OAuth rows past their expiry: started consents nobody finished, and finished consents
 * nobody confirmed. A flow already refuses them by their timestamp; they are removed as well
 * because an unconfirmed consent holds the provider's tokens (encrypted), which no one may use any
 * more and which should not stay at rest until the next flow of some workspace happens to clear them.
 */
export async function removeExpiredOAuthRows(db: Kysely<Database>, now: Date): Promise<{ removed: number }> {
  const cutoff = now.toISOString();
  const confirmations = await db.deleteFrom('oauth_confirmations').where('expires_at', '<', cutoff).executeTakeFirst();
  const states = await db.deleteFrom('oauth_states').where('expires_at', '<', cutoff).executeTakeFirst();
  return { removed: Number(confirmations.numDeletedRows) + Number(states.numDeletedRows) };
}
