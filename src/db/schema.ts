import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { InteractionType, Placement } from '../interactions/interactions.schemas.js';
import type { ConnectionType, MailboxStatus, ProviderId } from '../mailboxes/mailboxes.schemas.js';
import type { OAuthProviderId } from '../oauth/oauth.schemas.js';
import type { Role } from '../http/access.js';
import type { TemplateType } from '../templates/templates.schemas.js';
import type { DmarcRecordsTable, DmarcReportsTable, DmarcSetAsideTable, DmarcSourcesTable } from './schema-dmarc.js';
import type { FeedTables } from './schema-feeds.js';
import type { PeerMessageColumns, PeerStandInColumns, PeerTables, PeerWorkspaceColumns } from './schema-peers.js';

/*
 * The whole database, one interface per table. Timestamps are ISO-8601 UTC strings and calendar
 * days `YYYY-MM-DD` strings in both dialects, so they compare correctly as text; booleans are 0/1.
 */

export interface WorkspacesTable extends PeerWorkspaceColumns {
  id: string;
  name: string;
  created_at: string;
  /** The person who made it (counted against their cap); null when made by the CLI, a key or before migration 031. */
  created_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** Where a person's reply to warmup mail is left: `file` (the Warmup folder) or `inbox`. */
  human_replies: ColumnType<string, string | undefined, string>;
  /** When an owner or admin put the overview's onboarding checklist away (migration 039); null while it shows. */
  onboarding_dismissed_at: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A reply a person wrote to warmup mail, kept for the mailbox's owner (engine/owner-mail.ts). */
export interface HumanRepliesTable {
  id: string;
  workspace_id: string;
  /** The mailbox in whose folders the reply was found (it sent the warmup message answered). */
  mailbox_id: string;
  /** The reply's Message-ID, or a key made of its sender, date and subject when it has none. */
  reply_key: string;
  answers_message_id: string;
  thread_id: string | null;
  pool_mailbox_id: string | null;
  from_name: string;
  from_email: string;
  subject: string;
  /** Its Date header, when readable. */
  written_at: string | null;
  excerpt: string;
  /** Where it is now: the Warmup folder, or the folder it was found in. */
  folder: string;
  found_at: string;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  /** SHA-256 of the key, hex. The key itself is shown once and never stored. */
  key_hash: string;
  created_at: string;
  /** The first characters of the key, to recognise it by; null for keys older than migration 004. */
  prefix: string | null;
  /** Updated at most once a minute per key, so authentication is not a write per request. */
  last_used_at: string | null;
  /** `bootstrap`: made from WARMUP_API_KEY and replaced when it changes; `issued`: every other key. */
  origin: ColumnType<ApiKeyOrigin, ApiKeyOrigin | undefined, ApiKeyOrigin>;
  /** What the key may do in its workspace (never `owner`); keys older than migration 013 are `admin`. */
  role: ColumnType<Role, Role | undefined, Role>;
  /**
   * The person who made it (for a key made with a key: that key's maker); null for bootstrap and
   * CLI keys and keys older than migration 031. Their removal revokes it, their demotion caps it.
   */
  created_by: ColumnType<string | null, string | null | undefined, string | null>;
}

export type ApiKeyOrigin = 'bootstrap' | 'issued';

export interface TemplatesTable {
  id: string;
  workspace_id: string;
  name: string;
  type: TemplateType;
  language: string;
  subject: string;
  body: string;
  /** JSON array of the variable names subject and body use, sorted. */
  variables: string;
  created_at: string;
  updated_at: string;
}

export interface MailboxesTable extends PeerStandInColumns {
  id: string;
  workspace_id: string;
  email: string;
  /** Lower-cased email: addresses are unique per workspace, compared case-insensitively. */
  email_normalized: string;
  name: string | null;
  provider: ProviderId;
  connection_type: ConnectionType;
  /** `peer`: a stand-in for a peer installation's address (migration 045): a partner only, never synced or sent from. */
  status: MailboxStatus | 'peer';
  /** JSON {host, port, secure, username, tls?} — never a secret. */
  imap: string;
  smtp: string;
  /** AES-256-GCM ciphertext of the app password (see secrets/secrets.ts). */
  password_encrypted: string;
  /** JSON warmup settings. */
  warmup: string;
  reputation: Generated<number>;
  warmup_day: Generated<number>;
  daily_target: Generated<number>;
  /** Health guard: 1, or 0.5 while spam placement is high. */
  volume_factor: Generated<number>;
  /** Consecutive permanent SMTP failures (a refused login…); 3 put the mailbox in `error`. See mailboxes/mailbox-state.ts. */
  failure_count: Generated<number>;
  last_sync_at: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  /** The reader skips the mailbox until then: its sync interval, or backoff after a failed sync. */
  next_sync_at: string | null;
  /** The last local day the planner planned for this mailbox. */
  last_plan_day: string | null;
  /** Consecutive permanent IMAP failures (SMTP's are failure_count); 3 put the mailbox in `error`. */
  sync_failures: Generated<number>;
  /** Consecutive transient SMTP failures (server down or slow): they only back off, see next_send_at. */
  send_retries: Generated<number>;
  /** Consecutive transient IMAP failures: they only back off, see next_sync_at. */
  sync_retries: Generated<number>;
  /** Backoff after a failed send: the sender holds the mailbox's mail until then. */
  next_send_at: string | null;
  /** When a round trip proved its SMTP sends as its address and its IMAP receives it; null: not in the pool. */
  proven_at: string | null;
  /** Why the mailbox is not proven yet (the last round trip's failure, or that none ran yet). */
  proof_note: string | null;
  /** When the engine tries the round trip of an unproven mailbox again. */
  next_proof_at: string | null;
  /** Round trips that failed in a row; spaces the engine's retries out. */
  proof_attempts: Generated<number>;
  /** The ramp's target of the last planned day, before the pool cut it; null before the first plan. */
  ramp_target: number | null;
  /** Why the last plan holds fewer sends than `ramp_target`: `pool_too_small`, or null. */
  plan_limited_by: string | null;
  /** New threads the pool carried for it on its last planned day, up to `ramp_target` (pool-capacity.ts); null before. */
  plan_capacity: number | null;
  /** More mailboxes on new domains that would carry `ramp_target` on its last planned day (pool-capacity.ts); null when carried or out of reach. */
  plan_lift: number | null;
  /** When it entered `error` (the engine or the health guard stopped it); null while it works. See mailbox-state.ts. */
  stopped_at: string | null;
  /** `google`, `microsoft` or `generic` for a mailbox that signs in with OAuth (connection_type `oauth2`). */
  oauth_provider: OAuthProviderId | null;
  /** AES-256-GCM ciphertexts (bound to the mailbox id) of its OAuth tokens; never returned. */
  refresh_token_encrypted: string | null;
  access_token_encrypted: string | null;
  /** When the stored access token stops working (the provider's expires_in). */
  access_token_expires_at: string | null;
  /** When an automatic reply of this mailbox to warmup mail was last seen; while recent it receives no warmup mail. */
  auto_reply_at: string | null;
  /** When old warmup mail was last removed from its Warmup folder. */
  warmup_folder_pruned_at: string | null;
  /** When its folders were last searched for answers (a person's or automatic) to its warmup mail. */
  answers_scanned_at: string | null;
  /** `dns` while the DNS rule (checks/) keeps it paused, so it resumes by itself once fixed; null otherwise. See mailbox-state.ts. */
  paused_for: 'dns' | null;
  /** The selector (s=) of its domain's DKIM key, which the DKIM check reads. */
  dkim_selector: string | null;
  /** `user` (given, kept) or `mail` (learned from the DKIM-Signature of its warmup mail as a peer found it). */
  dkim_selector_source: 'user' | 'mail' | null;
  /** When it last became active again (resumed, reconnected out of `error`); null: active since created. */
  active_since: string | null;
  /** When its next sync is due (migration 023): soon after mail is sent to it, else a periodic check. See engine/reader.ts. */
  sync_due_at: Generated<string>;
  /** The worker whose sync claim holds the mailbox, and until when (a dead worker's claim runs out then). */
  sync_owner: string | null;
  sync_claimed_until: string | null;
  /** When reputation is scored again: once a day, or at once when its evidence changed. */
  reputation_due_at: Generated<string>;
  /** When the health guard judges it again: once a day, or at once when its evidence changed. */
  health_due_at: Generated<string>;
  /** The address its IMAP client last connected to (migration 032): the mail server it lives on, for the pool's trust rule. */
  imap_address: string | null;
  /** When it is next due for planning (migration 028): the start of its next local day, or at once after a settings change. */
  plan_due_at: Generated<string>;
}

/** One started OAuth consent flow, until its callback (once) or its expiry. */
/** A sign-in through the operator's OpenID Connect provider, from its start to its callback. */
export interface OidcSignInsTable {
  /** SHA-256 (hex) of the `state` parameter. */
  id: string;
  /** SHA-256 (hex) of the cookie the starting browser got: the callback must carry it. */
  browser_hash: string;
  code_verifier_encrypted: string;
  nonce: string;
  /** SHA-256 (hex) of the invite link token the flow accepts, if it started from an invite. */
  invite_token_hash: string | null;
  created_at: string;
  expires_at: string;
}

export interface OAuthStatesTable {
  /** SHA-256 (hex) of the `state` parameter. */
  id: string;
  workspace_id: string;
  provider: OAuthProviderId;
  mailbox_id: string | null;
  code_verifier_encrypted: string;
  created_at: string;
  expires_at: string;
  /** The browser session that started the flow: its callback must come from that session. Null for an API key. */
  session_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A consent of an API-started flow, waiting for a signed-in member to confirm it (ten minutes, once). */
export interface OAuthConfirmationsTable {
  /** SHA-256 (hex) of the id in the confirmation link. */
  id: string;
  workspace_id: string;
  provider: OAuthProviderId;
  mailbox_id: string | null;
  /** The address the provider reported for the account that consented. */
  email: string;
  /** The issued tokens as JSON, AES-256-GCM bound to the row. */
  tokens_encrypted: string;
  created_at: string;
  expires_at: string;
}

/** One warmup email, from plan to delivery: planned sends are the rows with status `planned`. */
export interface WarmupMessagesTable extends PeerMessageColumns {
  id: string;
  /** RFC 5322 Message-ID with angle brackets, on the sender's domain. */
  message_id: string;
  thread_id: string;
  sender_mailbox_id: string;
  recipient_mailbox_id: string;
  kind: string;
  /** 1 for the message that opens a thread, 2 for its reply, ... */
  turn: number;
  parent_message_id: string | null;
  subject: string | null;
  body_text: string | null;
  body_html: string | null;
  template_id: string | null;
  /** The sender's local calendar day the send was planned for. */
  plan_day: string;
  due_at: string;
  /** planned | sent | failed | bounced | lost | expired (never sent: overdue while a mailbox was paused) */
  status: string;
  attempts: Generated<number>;
  lease_owner: string | null;
  lease_expires_at: string | null;
  sent_at: string | null;
  found_at: string | null;
  placement: Placement | null;
  last_error: string | null;
  created_at: string;
  /** When the recipient will act on it (open, flag, reply, move); set when the reader finds it. */
  engage_after: string | null;
  /** When the recipient finished with it (moved into the Warmup folder). */
  engaged_at: string | null;
  /** When the recipient moved it out of spam. */
  rescued_at: string | null;
  /**
   * The recipient's plan for it, set when it is found (see engine/habits.ts): when it takes it out
   * of spam, opens, flags, answers and files it. Null: a step it does not take.
   */
  rescue_due_at: string | null;
  open_due_at: string | null;
  flag_due_at: string | null;
  reply_due_at: string | null;
  file_due_at: string | null;
  /** Gmail's tab when it was found in a Gmail INBOX (primary, promotions, updates, social, forums). */
  gmail_category: string | null;
  /** When the recipient took it from its tab to Primary and Gmail showed the change. */
  promoted_at: string | null;
}

export interface MailboxPlansTable {
  mailbox_id: string;
  day: string;
  warmup_day: number;
  target: number;
  planned: number;
  /** New threads the pool carried for it that day, up to `target`; null on plans made before it was kept. */
  capacity: number | null;
  created_at: string;
}

/** New threads reserved for a recipient on one of its local days (parallel planning shares its inbound cap). */
export interface PlanInboundTable {
  day: string;
  mailbox_id: string;
  received: number;
}

export interface InteractionsTable {
  id: string;
  workspace_id: string;
  mailbox_id: string;
  type: InteractionType;
  counterpart_mailbox_id: string | null;
  counterpart_email: string;
  counterpart_workspace_id: string | null;
  subject: string | null;
  message_id: string;
  thread_id: string | null;
  placement: Placement | null;
  occurred_at: string;
  day: string;
}

/**
 * Daily rollup per mailbox, written in the same transaction as the interaction it counts.
 * `sent`/`received` count the mailbox's own traffic; placement, engagement and bounce columns
 * count what happened to the mail it sent (deliverability belongs to the sender).
 */
export interface DailyStatsTable {
  mailbox_id: string;
  workspace_id: string;
  day: string;
  sent: Generated<number>;
  received: Generated<number>;
  inbox: Generated<number>;
  spam: Generated<number>;
  promotions: Generated<number>;
  other: Generated<number>;
  rescued: Generated<number>;
  opened: Generated<number>;
  flagged: Generated<number>;
  replied: Generated<number>;
  bounced: Generated<number>;
  failed: Generated<number>;
  lost: Generated<number>;
  /** Of the mail sent, taken by a Gmail recipient from its tab to Primary (migration 027). */
  promoted_to_primary: Generated<number>;
  /** Where the mail this mailbox received was filed (receiving side; see migration 003). */
  received_inbox: Generated<number>;
  received_spam: Generated<number>;
  received_promotions: Generated<number>;
  received_other: Generated<number>;
  reputation: number | null;
}

/** One workspace's sums of one finished UTC day of `daily_stats` (migration 015; stats/workspace-rollup.ts). */
export interface WorkspaceDailyStatsTable {
  workspace_id: string;
  day: string;
  sent: Generated<number>;
  received: Generated<number>;
  inbox: Generated<number>;
  spam: Generated<number>;
  promotions: Generated<number>;
  other: Generated<number>;
  rescued: Generated<number>;
  opened: Generated<number>;
  flagged: Generated<number>;
  replied: Generated<number>;
  bounced: Generated<number>;
  promoted_to_primary: Generated<number>;
  /** Sum and count of the scores recorded that day, for the day's mean. */
  reputation_sum: Generated<number>;
  reputation_count: Generated<number>;
}

/**
 * A mailbox's placement counters summed from its first day through `day`, a row every folded day
 * from its first on (migration 024): a range's totals are the row at its end minus the row before it.
 */
export interface PlacementRunningTotalsTable {
  mailbox_id: string;
  workspace_id: string;
  day: string;
  inbox: Generated<number>;
  spam: Generated<number>;
  promotions: Generated<number>;
  other: Generated<number>;
  received_inbox: Generated<number>;
  received_spam: Generated<number>;
  received_promotions: Generated<number>;
  received_other: Generated<number>;
}

/** How far a workspace's rollup has got: `through_day` is its last day folded. */
export interface StatsFoldsTable {
  workspace_id: string;
  through_day: string;
}

/** Time-limited claims on named work (`plan:<bucket>`, `send:<mailboxId>`, …): the scale-out lock. Syncs are claimed on the mailbox row instead (`sync_owner`). */
export interface LeasesTable {
  key: string;
  owner: string;
  expires_at: string;
}

/** A URL a workspace has events delivered to (see webhooks/). */
export interface WebhookEndpointsTable {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  /** JSON array of the event types delivered to it. */
  events: string;
  /** AES-256-GCM ciphertext of the `whsec_…` signing secret (as mailbox passwords). */
  secret_encrypted: string;
  /** 1 or 0. */
  enabled: Generated<number>;
  /** standard (signed JSON) | slack | teams | email (the workspace's email alert; its url and secret are empty). */
  kind: Generated<string>;
  created_at: string;
  updated_at: string;
}

/** The outbox: one row per event, written where it happened. */
export interface WebhookEventsTable {
  id: string;
  workspace_id: string;
  type: string;
  /** The JSON body as sent: `{type, timestamp, data}`. */
  payload: string;
  /** Makes an event that several workers may notice (a daily one) exist once; null for the rest. */
  dedupe_key: string | null;
  created_at: string;
}

/** One event to one endpoint: retried with backoff until a 2xx or the last attempt. */
export interface WebhookDeliveriesTable {
  /** Sent as `webhook-id`: the same on every attempt, so a receiver can drop a second copy. */
  id: string;
  event_id: string;
  endpoint_id: string;
  workspace_id: string;
  /** pending | delivered | failed */
  status: string;
  attempts: Generated<number>;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  last_error: string | null;
  delivered_at: string | null;
  created_at: string;
}

/** An email alert's recipient whose server took it (migration 041): a retry skips them. */
export interface AlertMailRecipientsTable {
  delivery_id: string;
  address: string;
  sent_at: string;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  attempted_at: string;
  /** The receiver's HTTP status; null when there was no answer (refused, timed out, blocked host). */
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** The latest result of one DNS check of a mailbox's domain (see checks/). */
export interface MailboxChecksTable {
  mailbox_id: string;
  /** mx | spf | dmarc | dkim */
  check: string;
  /** pass | fail | unreachable | skipped */
  status: string;
  detail: string;
  fix: string | null;
  checked_at: string;
  /** When the check started failing, unbroken by a pass (an unreachable DNS server neither starts nor ends it). */
  failing_since: string | null;
}

/** An address a mailbox's mail was seen sent from (engine/sender-evidence.ts), for the blocklist checks. */
export interface MailboxSendingIpsTable {
  mailbox_id: string;
  ip: string;
  first_seen_at: string;
  last_seen_at: string;
}

/** The latest answer of one blocklist about a mailbox's domain or one of its sending addresses (checks/blocklists.ts). */
export interface BlocklistResultsTable {
  mailbox_id: string;
  /** The list as shown (never a DQS key). */
  zone: string;
  /** The address or domain asked about. */
  subject: string;
  /** ip | domain */
  kind: string;
  /** listed | clear | unreachable */
  status: string;
  detail: string;
  delist_url: string | null;
  /** When it was first seen listed, unbroken by a clear answer (an unanswered one leaves it). */
  listed_since: string | null;
  checked_at: string;
}

/** A receiver's verdict as stored (verdicts/receiver-verdict.ts); null where it said nothing. */
export interface VerdictColumns {
  authserv_id: string | null;
  spf: string | null;
  dkim: string | null;
  dmarc: string | null;
  arc: string | null;
  scl: number | null;
  bcl: number | null;
  spam_score: number | null;
}

/** What the receiving provider thought of one warmup email it received (see verdicts/receiver-verdict.ts). */
export interface ReceiverVerdictsTable extends VerdictColumns {
  warmup_message_id: string;
  sender_mailbox_id: string;
  recipient_mailbox_id: string;
  /** The receiving mailbox's provider when the message was found (gmail, outlook, yahoo, …). */
  receiver_provider: string;
  /** message-id, original-message-id or thread. */
  identified_by: string;
  placement: string;
  found_at: string;
}

/** How far the reader scanned a mailbox's folder for delivery reports: each is downloaded once. */
export interface MailScanMarksTable {
  mailbox_id: string;
  /** The folder's path on the server. */
  folder: string;
  /** UIDVALIDITY as text (it may exceed 2^53); a new one starts the folder over. */
  uid_validity: string;
  /** Everything at or below this UID was downloaded already. */
  last_uid: ColumnType<number | string, number, number>;
  updated_at: string;
}

export interface UsersTable {
  id: string;
  email: string;
  /** Lower-cased email: one account per address, compared case-insensitively. */
  email_normalized: string;
  name: string;
  /** scrypt hash with its parameters and salt (accounts/passwords.ts); never the password. */
  password_hash: string;
  created_at: string;
  updated_at: string;
}

export interface MembershipsTable {
  user_id: string;
  workspace_id: string;
  role: Role;
  created_at: string;
}

export interface SessionsTable {
  id: string;
  /** SHA-256 of the cookie's token, hex: a copy of the table signs no one in. */
  token_hash: string;
  user_id: string;
  /** The workspace the session works in; null when its user belongs to none. */
  workspace_id: string | null;
  /** Sent back in X-CSRF-Token on every state-changing request the cookie authenticates. */
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

export interface InvitesTable {
  id: string;
  workspace_id: string;
  /** SHA-256 of the link's token, hex. */
  token_hash: string;
  role: Role;
  /** Who it is for, as the inviter wrote it: when set, only that address (case-insensitive) may accept it. */
  email: string | null;
  created_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: string | null;
}

/** Failed sign-ins of one key (`account:<email>`, `address:<ip>`) in a fixed window, shared by every API process. */
export interface SignInFailuresTable {
  key: string;
  failures: number;
  /** When the window ends: the key may try again, and the row is pruned. */
  reset_at: string;
}

/** One row (id 1) once the first owner exists: the first-run setup is over. */
export interface InstallationTable {
  id: number;
  owner_user_id: string | null;
  set_up_at: string;
}

/** A placement test of a user's own copy (src/placement-tests). */
export interface PlacementTestsTable {
  id: string;
  workspace_id: string;
  sender_mailbox_id: string;
  subject: string;
  text_body: string;
  html_body: string;
  /** `queued` → `sending` → `waiting` (copies out, looked for) → `completed`; or `failed`. */
  status: 'queued' | 'sending' | 'waiting' | 'completed' | 'failed';
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
  completed_at: string | null;
}

/** One copy of a placement test, to one seed mailbox, identified by its own Message-ID. */
/** The receiver's verdict on the copy found (verdicts/receiver-verdict.ts); null where it said nothing. */
export interface PlacementTestCopiesTable extends VerdictColumns {
  id: string;
  test_id: string;
  sender_mailbox_id: string;
  seed_mailbox_id: string;
  message_id: string;
  /** The seed mailbox's provider when the test was made. */
  provider: string;
  /** inbox | promotions | spam | other when found, `missing` when given up; null while looked for. */
  placement: string | null;
  folder: string | null;
  sent_at: string | null;
  found_at: string | null;
}

/** A receiver found filing most senders' mail into spam (engine/receiver-filtering.ts), while it is one. */
export interface ReceiverFilteringTable {
  mailbox_id: string;
  /** When this episode began. */
  since: string;
  junked_senders: number;
  senders: number;
  updated_at: string;
}

export interface Database extends FeedTables, PeerTables {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  templates: TemplatesTable;
  mailboxes: MailboxesTable;
  warmup_messages: WarmupMessagesTable;
  human_replies: HumanRepliesTable;
  mailbox_plans: MailboxPlansTable;
  plan_inbound: PlanInboundTable;
  interactions: InteractionsTable;
  daily_stats: DailyStatsTable;
  workspace_daily_stats: WorkspaceDailyStatsTable;
  stats_folds: StatsFoldsTable;
  placement_running_totals: PlacementRunningTotalsTable;
  leases: LeasesTable;
  oauth_states: OAuthStatesTable;
  oauth_confirmations: OAuthConfirmationsTable;
  oidc_sign_ins: OidcSignInsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  alert_mail_recipients: AlertMailRecipientsTable;
  mailbox_checks: MailboxChecksTable;
  mail_scan_marks: MailScanMarksTable;
  mailbox_sending_ips: MailboxSendingIpsTable;
  blocklist_results: BlocklistResultsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  invites: InvitesTable;
  installation: InstallationTable;
  sign_in_failures: SignInFailuresTable;
  receiver_verdicts: ReceiverVerdictsTable;
  placement_tests: PlacementTestsTable;
  placement_test_copies: PlacementTestCopiesTable;
  receiver_filtering: ReceiverFilteringTable;
  dmarc_sources: DmarcSourcesTable;
  dmarc_reports: DmarcReportsTable;
  dmarc_records: DmarcRecordsTable;
  dmarc_set_aside: DmarcSetAsideTable;
}

export type TemplateRow = Selectable<TemplatesTable>;
export type NewTemplateRow = Insertable<TemplatesTable>;
export type TemplateRowUpdate = Updateable<TemplatesTable>;
export type MailboxRow = Selectable<MailboxesTable>;
export type NewMailboxRow = Insertable<MailboxesTable>;
export type MailboxRowUpdate = Updateable<MailboxesTable>;
export type WarmupMessageRow = Selectable<WarmupMessagesTable>;
export type HumanReplyRow = Selectable<HumanRepliesTable>;
export type InteractionRow = Selectable<InteractionsTable>;
export type DailyStatsRow = Selectable<DailyStatsTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
export type PlacementTestRow = Selectable<PlacementTestsTable>;
export type PlacementTestCopyRow = Selectable<PlacementTestCopiesTable>;
export type NewPlacementTestCopyRow = Insertable<PlacementTestCopiesTable>;
