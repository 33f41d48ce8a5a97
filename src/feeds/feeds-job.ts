// The `feeds` job: once a day per workspace and feed, fetch what the provider reports and store it
// (a day fetched again replaces its rows: stored once), then make the workspace's mailboxes due for
// the health guard, which judges them with the new signals (engine/provider-signals.ts). A feed
// that cannot be fetched keeps its error for the domain page and is tried again on the next run;
// it changes no signal. One worker runs it at a time (the job's lease).
import type { Kysely } from 'kysely';
import { addDays, utcDay } from '../calendar.js';
import type { Database } from '../db/schema.js';
import type { MailPolicy } from '../mail/policy.js';
import { decryptSecret } from '../secrets/secrets.js';
import { feedSecretContext } from './feed-connections.repository.js';
import { FeedFetchError } from './feed-http.js';
import {
  listDueConnections,
  makeHealthDue,
  markFetched,
  removeOldFeedRows,
  savePostmasterDay,
  saveSndsDays,
  setAside,
  type ConnectionRow,
} from './feeds.repository.js';
import type { FeedName } from './feeds.schemas.js';
import { fetchPostmaster } from './postmaster-feed.js';
import { fetchSnds } from './snds-feed.js';

export const FEED_TIMEOUT_MS = 30_000;
/** Days feed rows are kept: the rules read the last 7, the domain page the last 30. */
export const FEED_RETENTION_DAYS = 90;

export interface FeedSettings {
  sndsUrl: string;
  postmasterUrl: string;
  /** The whole of one request, body included (default FEED_TIMEOUT_MS). */
  timeoutMs?: number;
}

export interface FeedJobDeps {
  db: Kysely<Database>;
  secretKey: Buffer;
  policy: MailPolicy;
  settings: FeedSettings;
  /** A Google access token for a stored refresh token (the installation's Google OAuth app). */
  googleAccessToken(refreshToken: string, now: Date): Promise<string>;
}

export interface FeedsSummary {
  /** Connections fetched (each is one workspace's feed of the day). */
  fetched: number;
  failed: number;
  /** SNDS rows and Postmaster days stored. */
  stored: number;
  setAside: number;
}

function reasonOf(error: unknown): string {
  // only our own words: a library's message could carry the URL, and the URL carries the SNDS key
  return error instanceof FeedFetchError ? error.message : 'the feed could not be read';
}

async function fetchOne(deps: FeedJobDeps, connection: ConnectionRow, at: Date, signal?: AbortSignal) {
  const feed = connection.feed as FeedName;
  const secret = decryptSecret(
    deps.secretKey,
    connection.secret_encrypted ?? '',
    feedSecretContext(connection.workspace_id, feed),
  );
  const limits = { policy: deps.policy, timeoutMs: deps.settings.timeoutMs ?? FEED_TIMEOUT_MS, signal };
  const fetchedAt = at.toISOString();
  if (feed === 'snds') {
    const parsed = await fetchSnds({ baseUrl: deps.settings.sndsUrl, key: secret }, limits);
    await deps.db.transaction().execute(async (trx) => {
      await saveSndsDays(trx, connection.workspace_id, parsed.rows, fetchedAt);
      for (const row of parsed.setAside.slice(0, 100))
        await setAside(trx, { workspaceId: connection.workspace_id, feed, rowText: row.line, reason: row.reason, at });
    });
    return { stored: parsed.rows.length, setAside: parsed.setAside.length };
  }
  const accessToken = await deps.googleAccessToken(secret, at).catch(() => {
    throw new FeedFetchError('Google did not renew the Postmaster Tools access: connect it again');
  });
  const domains = JSON.parse(connection.domains ?? '[]') as string[];
  let stored = 0;
  for (const domain of domains) {
    const answer = await fetchPostmaster(
      { baseUrl: deps.settings.postmasterUrl, accessToken, domain, today: utcDay(at) },
      limits,
    );
    for (const day of answer.days) {
      await savePostmasterDay(deps.db, {
        workspaceId: connection.workspace_id,
        domain,
        day: day.day,
        spamRate: day.spamRate,
        compliance: answer.compliance,
        at: fetchedAt,
      });
      stored += 1;
    }
  }
  return { stored, setAside: 0 };
}

export async function fetchProviderFeeds(
  deps: FeedJobDeps,
  { now, signal }: { now: Date; signal?: AbortSignal },
): Promise<FeedsSummary> {
  const day = utcDay(now);
  const summary: FeedsSummary = { fetched: 0, failed: 0, stored: 0, setAside: 0 };
  await removeOldFeedRows(deps.db, addDays(day, -FEED_RETENTION_DAYS));
  for (const connection of await listDueConnections(deps.db, day)) {
    if (signal?.aborted) break;
    try {
      const result = await fetchOne(deps, connection, now, signal);
      await markFetched(deps.db, connection, { day, at: now.toISOString(), error: null });
      await makeHealthDue(deps.db, connection.workspace_id, now.toISOString());
      summary.fetched += 1;
      summary.stored += result.stored;
      summary.setAside += result.setAside;
    } catch (error) {
      await markFetched(deps.db, connection, { day, at: now.toISOString(), error: reasonOf(error) });
      summary.failed += 1;
    }
  }
  return summary;
}
