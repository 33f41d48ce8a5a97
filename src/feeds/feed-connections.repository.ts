// A workspace's connection to a feed, as stored: below the feeds' module, so that the OAuth flow that
// ends in a Postmaster connection (oauth/oauth.service.ts) stores it the same way the routes do.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export type FeedName = 'snds' | 'postmaster';

/** The scope Gmail Postmaster Tools v2 reads with (developers.google.com/workspace/gmail/postmaster). */
export const POSTMASTER_SCOPE = 'https://www.googleapis.com/auth/postmaster.traffic.readonly';

/** The context a feed's secret is bound to: a stored secret moved to another workspace or feed does not decrypt. */
export function feedSecretContext(workspaceId: string, feed: FeedName): string {
  return `feed:${workspaceId}:${feed}`;
}

/** Stores a connection; a new key or grant is fetched afresh (its error and day cleared). */
export async function saveConnection(
  db: Kysely<Database>,
  row: { workspaceId: string; feed: FeedName; secretEncrypted: string; domains: string[] | null; at: string },
): Promise<void> {
  const values = {
    secret_encrypted: row.secretEncrypted,
    domains: row.domains === null ? null : JSON.stringify(row.domains),
    checked_at: null,
    last_error: null,
    fetched_day: null,
    updated_at: row.at,
  };
  await db
    .insertInto('feed_connections')
    .values({ workspace_id: row.workspaceId, feed: row.feed, ...values })
    .onConflict((oc) => oc.columns(['workspace_id', 'feed']).doUpdateSet(values))
    .execute();
}
