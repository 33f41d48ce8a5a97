import type { Kysely } from 'kysely';
import { addDays, utcDay } from '../calendar.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { findHold } from '../engine/provider-signals.repository.js';
import { NotFoundError } from '../http/errors.js';
import { encryptSecret } from '../secrets/secrets.js';
import { feedSecretContext } from './feed-connections.repository.js';
import {
  deleteConnection,
  findConnection,
  makeHealthDue,
  postmasterDays,
  saveConnection,
  setAsideSummary,
  sndsDaysOfDomain,
  type ConnectionRow,
} from './feeds.repository.js';
import type {
  FeedConnection,
  FeedName,
  PostmasterConnectionBody,
  ProviderVerdicts,
  SndsConnectionBody,
} from './feeds.schemas.js';

export interface FeedsServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  secretKey: Buffer;
}

/** The domain page shows this many days of each feed. */
export const VERDICT_DAYS = 30;

function toConnection(row: ConnectionRow, setAside: FeedConnection['setAside']): FeedConnection {
  return {
    feed: row.feed as FeedName,
    configured: true,
    domains: row.domains === null ? null : (JSON.parse(row.domains) as string[]),
    checkedAt: row.checked_at,
    fetchedDay: row.fetched_day,
    lastError: row.last_error,
    setAside,
  };
}

/** A workspace's connections to the providers' feeds (the secrets never leave it), and what they say of a domain. */
export function createFeedsService({ db, clock, secretKey }: FeedsServiceDeps) {
  async function get(workspaceId: string, feed: FeedName): Promise<FeedConnection | null> {
    const row = await findConnection(db, workspaceId, feed);
    if (!row) return null;
    const since = `${addDays(utcDay(clock.now()), -(VERDICT_DAYS - 1))}T00:00:00.000Z`;
    return toConnection(row, await setAsideSummary(db, workspaceId, feed, since));
  }

  async function save(workspaceId: string, feed: FeedName, secret: string, domains: string[] | null) {
    await saveConnection(db, {
      workspaceId,
      feed,
      secretEncrypted: encryptSecret(secretKey, secret, feedSecretContext(workspaceId, feed)),
      domains,
      at: clock.now().toISOString(),
    });
    return (await get(workspaceId, feed))!;
  }

  return {
    get,
    connectSnds: (workspaceId: string, body: SndsConnectionBody) => save(workspaceId, 'snds', body.key, null),
    connectPostmaster: (workspaceId: string, body: PostmasterConnectionBody) =>
      save(workspaceId, 'postmaster', body.refreshToken, [
        ...new Set(body.domains.map((domain) => domain.toLowerCase().replace(/\.$/, ''))),
      ]),
    async disconnect(workspaceId: string, feed: FeedName): Promise<void> {
      if (!(await deleteConnection(db, workspaceId, feed))) throw new NotFoundError(`No ${feed} feed is connected`);
      // a hold the feed caused is lifted on the guard's next run, not a day later
      await makeHealthDue(db, workspaceId, clock.now().toISOString());
    },

    async verdicts(workspaceId: string, domain: string): Promise<ProviderVerdicts> {
      const name = domain.toLowerCase();
      const from = addDays(utcDay(clock.now()), -(VERDICT_DAYS - 1));
      const [hold, gmail, snds, sndsFeed, postmasterFeed] = await Promise.all([
        findHold(db, workspaceId, name),
        postmasterDays(db, workspaceId, name, from),
        sndsDaysOfDomain(db, workspaceId, name, from),
        get(workspaceId, 'snds'),
        get(workspaceId, 'postmaster'),
      ]);
      return {
        domain: name,
        hold: hold ? { signal: hold.signal, day: hold.day, reason: hold.reason, since: hold.since } : null,
        gmail: gmail.map((row) => ({
          day: row.day,
          spamRate: row.spam_rate === null ? null : Number(row.spam_rate),
          compliance: row.compliance,
        })),
        snds: snds.map((row) => ({
          ip: row.ip,
          day: row.day,
          filterResult: row.filter_result,
          complaintRate: row.complaint_rate,
          trapHits: Number(row.trap_hits),
          messageRecipients: Number(row.message_recipients),
        })),
        feeds: { snds: sndsFeed, postmaster: postmasterFeed },
      };
    },
  };
}

export type FeedsService = ReturnType<typeof createFeedsService>;
