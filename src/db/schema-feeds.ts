import type { ColumnType } from 'kysely';

// The providers' own feeds (migration 042): Microsoft SNDS and Gmail Postmaster Tools, and the holds
// the health guard puts on a domain from them. Apart from schema.ts to keep each file short.

/** A workspace's connection to one feed: `snds` (its data access key) or `postmaster` (its Google grant). */
export interface FeedConnectionsTable {
  workspace_id: string;
  /** `snds` or `postmaster`. */
  feed: string;
  /** AES-256-GCM (secrets/) of the SNDS key or the Google refresh token, bound to workspace and feed; never returned. */
  secret_encrypted: string | null;
  /** Postmaster: the JSON list of domains fetched; SNDS: null (the key names its addresses). */
  domains: string | null;
  /** Set by a daily run: when it last fetched, and why that failed (null: it worked). */
  checked_at: string | null;
  last_error: string | null;
  /** The UTC day of the last fetch that worked: the job fetches each day once. */
  fetched_day: string | null;
  updated_at: string;
}

/** One SNDS row: an address's activity on a day, as Microsoft reports it. */
export interface SndsDaysTable {
  workspace_id: string;
  ip: string;
  day: string;
  /** `green`, `yellow` or `red`. */
  filter_result: string;
  /** As published (`< 0.1%`, `0.3%`); its upper bound as a fraction, or null when unreadable. */
  complaint_rate: string;
  complaint_rate_max: number | null;
  trap_hits: number;
  rcpt_commands: number;
  data_commands: number;
  message_recipients: number;
  fetched_at: string;
}

/** One domain's day in Postmaster Tools v2. */
export interface PostmasterDaysTable {
  workspace_id: string;
  domain: string;
  day: string;
  /** The user-reported spam rate as a fraction (0.004 = 0.4 %), or null when Google had none that day. */
  spam_rate: number | null;
  /** The compliance verdict as Google words it, or null. */
  compliance: string | null;
  fetched_at: string;
}

/** A feed row that could not be read, kept with the reason (the row cut to 200 characters). */
export interface FeedSetAsideTable {
  id: string;
  workspace_id: string;
  feed: string;
  row_text: string;
  reason: string;
  found_at: string;
}

/** A domain the health guard holds because of a provider's signal; removed when the signal clears. */
export interface ProviderHoldsTable {
  workspace_id: string;
  domain: string;
  /** `gmail_spam_rate` or `snds_red`. */
  signal: string;
  /** The provider's day the signal is about. */
  day: string;
  reason: string;
  since: string;
  updated_at: ColumnType<string, string, string>;
}

/** An OAuth consent (its oauth_states row, same id) that ends in a Postmaster connection instead of a mailbox. */
export interface FeedOAuthFlowsTable {
  id: string;
  /** JSON list of the domains to fetch. */
  domains: string;
}

/** The feeds' tables, which the Database of schema.ts includes. */
export interface FeedTables {
  feed_connections: FeedConnectionsTable;
  snds_days: SndsDaysTable;
  postmaster_days: PostmasterDaysTable;
  feed_set_aside: FeedSetAsideTable;
  provider_holds: ProviderHoldsTable;
  feed_oauth_flows: FeedOAuthFlowsTable;
}
