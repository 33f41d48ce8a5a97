import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { IsoDate, Pagination, PaginationQuery } from '../http/common.schemas.js';
import { INTERACTION_TYPES, PLACEMENTS } from '../interactions/interactions.schemas.js';
import { OAUTH_PROVIDERS } from '../oauth/oauth.schemas.js';

// A plain `enum` (not a union of literals) so a wrong value answers "must be one of ...".
function StringEnum<T extends string>(values: readonly T[], options: { description?: string } = {}) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

export const MAILBOX_STATUSES = ['active', 'paused', 'error'] as const;
export const MailboxStatus = StringEnum(MAILBOX_STATUSES, {
  description:
    '`active`: warmup running; `paused`: stopped by the user; `error`: the engine could not log in or send (see `lastError`)',
});
export type MailboxStatus = Static<typeof MailboxStatus>;

/**
 * A mailbox's status as a workspace sees it. A stand-in for a peer's address (status `peer`,
 * peers/peer-mail.ts) lives in its peer's own workspace, which has no members, so no workspace
 * meets one; were it to, it reads as paused, never as active.
 */
export function viewedStatus(status: MailboxStatus | 'peer'): MailboxStatus {
  return status === 'peer' ? 'paused' : status;
}

/** The providers with a preset (providers.ts); `custom` names its servers itself. */
export const KNOWN_PROVIDERS = ['gmail', 'outlook', 'yahoo', 'zoho', 'icloud', 'fastmail'] as const;
export type KnownProvider = (typeof KNOWN_PROVIDERS)[number];

export const PROVIDER_IDS = [...KNOWN_PROVIDERS, 'custom'] as const;

export const ProviderId = StringEnum(PROVIDER_IDS, {
  description:
    'A known provider fills `imap` and `smtp` from its preset (see GET /api/mailboxes/providers); `custom` needs both',
});
export type ProviderId = Static<typeof ProviderId>;

export const CONNECTION_TYPES = ['imap', 'oauth2'] as const;
export const ConnectionType = StringEnum(CONNECTION_TYPES, {
  description:
    '`imap`: IMAP for reading, SMTP for sending, signing in with an app password; `oauth2`: the same servers, signing in with OAuth 2.0 tokens (XOAUTH2), connected through /api/oauth',
});
export type ConnectionType = Static<typeof ConnectionType>;

/** What a client may create directly: OAuth mailboxes come from the consent flow only. */
const CreatableConnectionType = StringEnum(['imap'] as const, {
  description:
    '`imap`: IMAP for reading, SMTP for sending, signing in with an app password. Mailboxes that sign in with OAuth are connected through POST /api/oauth/{provider}/authorize',
});

const Tls = Type.Object(
  {
    rejectUnauthorized: Type.Optional(
      Type.Boolean({
        description:
          'certificates are always checked: only true is accepted. For a private CA the operator sets WARMUP_MAIL_CA_FILE',
      }),
    ),
  },
  { additionalProperties: false },
);

/** One server of a mailbox (IMAP or SMTP) as stored and returned: never a secret. */
export const ServerSettings = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253, pattern: '^\\S+$' }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    secure: Type.Boolean({
      description: 'true: implicit TLS (993/465); false: STARTTLS when the server offers it (143/587)',
    }),
    username: Type.String({ minLength: 1, maxLength: 320, description: 'Login name; default: the mailbox address' }),
    tls: Type.Optional(Tls),
  },
  { additionalProperties: false },
);
export type ServerSettings = Static<typeof ServerSettings>;

export const ServerSettingsInput = Type.Partial(ServerSettings, {
  additionalProperties: false,
  description:
    '`custom` needs `host`, `port` and `secure`; with a known provider any of them overrides the preset. `username` defaults to the address.',
});
export type ServerSettingsInput = Static<typeof ServerSettingsInput>;

const ClockTime = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 24-hour' });

const SendWindow = Type.Object(
  { start: ClockTime, end: ClockTime },
  {
    additionalProperties: false,
    description: "Sends happen between start and end (start < end) in the mailbox's time zone",
  },
);

const warmupShape = {
  startVolume: Type.Integer({
    minimum: 1,
    maximum: 500,
    description: 'Emails on day 1; at most dailyLimit. Default 2',
  }),
  rampUpIncrement: Type.Integer({ minimum: 0, maximum: 100, description: 'Added each warmup day. Default 2' }),
  dailyLimit: Type.Integer({ minimum: 1, maximum: 500, description: 'The ramp stops here. Default 40' }),
  replyRate: Type.Number({
    minimum: 0,
    maximum: 100,
    description: 'Percentage of received warmup emails answered. Default 30',
  }),
  sendWindow: SendWindow,
  timezone: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'IANA time zone name (`Europe/Berlin`). Default UTC',
  }),
  weekdaysOnly: Type.Boolean({ description: 'No sends on Saturday and Sunday. Default false' }),
  language: Type.String({
    pattern: '^[a-z]{2}$',
    description: 'ISO 639-1 code of the templates it sends, falling back to English. Default en',
  }),
};

export const WarmupSettings = Type.Object(warmupShape, { additionalProperties: false });
export type WarmupSettings = Static<typeof WarmupSettings>;

export const WarmupSettingsInput = Type.Partial(
  Type.Object({ ...warmupShape, sendWindow: Type.Partial(SendWindow, { additionalProperties: false }) }),
  {
    additionalProperties: false,
    description:
      'Any subset; on create it is merged over the defaults, on update over the current settings (sendWindow too)',
  },
);
export type WarmupSettingsInput = Static<typeof WarmupSettingsInput>;

const MailboxName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '\\S',
  description: "Sender's display name; fills {sender_name} / {recipient_name}",
});

const Password = Type.String({
  minLength: 1,
  maxLength: 500,
  description: 'App password; spaces are removed (pasted Gmail app passwords). Encrypted at rest, never returned',
});

export const CreateMailboxBody = Type.Object(
  {
    email: Type.String({
      format: 'email',
      maxLength: 254,
      description: 'Unique per workspace, compared case-insensitively',
    }),
    password: Password,
    provider: ProviderId,
    connectionType: CreatableConnectionType,
    name: Type.Optional(MailboxName),
    imap: Type.Optional(ServerSettingsInput),
    smtp: Type.Optional(ServerSettingsInput),
    warmup: Type.Optional(WarmupSettingsInput),
    verify: Type.Optional(
      Type.Boolean({
        description:
          'Log in to IMAP and SMTP before saving (default true); a rejection is a 422 and nothing is stored. Then a test message from the address to itself must arrive before the mailbox joins the pool (see `pool`). false stores it unchecked and out of the pool until the engine proves it.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateMailboxBody = Static<typeof CreateMailboxBody>;

export const UpdateMailboxBody = Type.Object(
  {
    name: Type.Optional(Nullable(MailboxName)),
    password: Type.Optional(Password),
    imap: Type.Optional(ServerSettingsInput),
    smtp: Type.Optional(ServerSettingsInput),
    warmup: Type.Optional(WarmupSettingsInput),
    provider: Type.Optional(ProviderId),
  },
  {
    additionalProperties: false,
    description:
      'The address is fixed. A change of password, imap, smtp or provider logs in again before it is saved (422 keeps the old settings) and moves an `error` mailbox back to `active`. A new provider starts from its preset; `custom` then needs imap and smtp.',
  },
);
export type UpdateMailboxBody = Static<typeof UpdateMailboxBody>;

export const PoolMembership = Type.Object(
  {
    member: Type.Boolean({
      description: 'Sends warmup mail to the other mailboxes of the installation and receives theirs',
    }),
    provenAt: Nullable(
      Type.String({
        format: 'date-time',
        description:
          "When a round trip proved that its SMTP server sends as its address and its IMAP server receives that address's mail",
      }),
    ),
    reason: Nullable(
      Type.String({ description: 'Why it is not a member, e.g. "not proven yet: …"; null for a member' }),
    ),
  },
  {
    description:
      'Only proven, active mailboxes take part in the pool. A mailbox is proven after its credentials were verified and a test message it sent to itself arrived; one connected with `verify: false` is stored but stays out until the engine (or a resume) proves it.',
  },
);
export type PoolMembership = Static<typeof PoolMembership>;

export const ATTENTION_KINDS = [
  'stopped',
  'stopped_by_guard',
  'slowed_by_guard',
  'spam_rate',
  'bounces',
  'pool_too_small',
  'not_in_pool',
  'auto_reply',
  'paused_for_dns',
  'receiver_filtering',
  'provider_hold',
  'provider_warning',
] as const;

export const Attention = Type.Object({
  kind: StringEnum(ATTENTION_KINDS, {
    description:
      "`stopped`: in error (lastError); `stopped_by_guard`/`slowed_by_guard`: the health guard stopped it or halved its volume; `spam_rate`: over 10 % of its mail found in spam in 7 days (at least 5 found); `bounces`: any bounce in 7 days; `pool_too_small`: the pool cannot carry its ramp, so it sends less than its ramp asks (a young pair's first days, which also plan less, are not a hold); `not_in_pool`: active but not proven; `auto_reply`: it answers warmup mail automatically (out of office), so it receives none for now; `paused_for_dns`: its SPF or DMARC failed for the sustained period (WARMUP_DNS_PAUSE_HOURS), so warmup paused until they pass again (it then resumes by itself); `receiver_filtering`: its own filter files most senders' warmup mail into spam while other receivers find it in the inbox (the culprit rule), so its placements no longer count against the senders: add an allow rule for the pool's addresses; `provider_hold`: a provider's own feed (Gmail Postmaster Tools, Microsoft SNDS) reports a problem for its domain, so warmup holds its volume until it clears; `provider_warning`: Gmail Postmaster Tools' latest compliance status of its domain is `needs_work` (nothing is held, but it is not ready for campaigns)",
  }),
  message: Type.String({ description: 'What happened and what to do, in one or two sentences' }),
});
export type Attention = Static<typeof Attention>;

export const WARMUP_STATES = [
  'on_track',
  'waiting',
  'held_by_pool',
  'held_by_spam',
  'joining',
  'paused',
  'stopped',
] as const;

export const WarmupStateKind = StringEnum(WARMUP_STATES);

export const WarmupState = Type.Object(
  {
    kind: StringEnum(WARMUP_STATES, {
      description:
        'What is true of its warmup today, the first that applies: `stopped`: in error, the engine, the health guard or its servers stopped it (`since`, `reason`); `paused`: by its owner or by the DNS rule; `joining`: active but not proven yet, so not in the pool; `held_by_spam`: the health guard slowed it, or over 10 % of its mail found in 7 days (at least 5 found) is in spam; `held_by_pool`: the pool carries less than its ramp wants (`pool`); `waiting`: on track, its send window not open yet (outside its hours, a weekend with weekdaysOnly); `on_track`: warming up as its ramp wants',
    }),
    label: Type.String({ description: 'The state in two or three words, e.g. "Held back by the pool"' }),
    tone: StringEnum(['good', 'neutral', 'warn', 'bad'], {
      description:
        '`good`: on track or waiting; `neutral`: paused or joining; `warn`: held back; `bad`: stopped or spam',
    }),
    reason: Type.String({ description: 'Why, and what to do, in one or two sentences' }),
    since: Nullable(
      Type.String({
        format: 'date-time',
        description: 'When it stopped (`stopped`, and a stopped mailbox paused since)',
      }),
    ),
    pool: Nullable(
      Type.Object(
        {
          carries: Type.Integer({ description: 'New threads a day the pool carried for it on its last planned day' }),
          wants: Type.Integer({ description: 'New threads a day its ramp wanted that day' }),
          moreDomains: Nullable(
            Type.Integer({
              description:
                'More mailboxes, each on a domain of its own, that would carry all its ramp wants (the capacity model); null: more than 50',
            }),
          ),
        },
        { description: 'Set for `held_by_pool`: what the pool carries and what would lift it' },
      ),
    ),
  },
  {
    description:
      'The one definition of where a mailbox stands, which the API, the dashboard, the CSV and the PDF export all show',
  },
);
export type WarmupState = Static<typeof WarmupState>;

export const PoolLine = Type.Object(
  {
    members: Type.Integer({ description: 'Active mailboxes of the workspace in the pool with a plan' }),
    carries: Type.Integer({
      description: 'New threads a day the pool carries per mailbox (the median of their last plans)',
    }),
    wants: Type.Object(
      { min: Type.Integer(), max: Type.Integer() },
      { description: 'New threads a day their ramps want, least and most' },
    ),
    held: Type.Integer({
      description: 'Mailboxes the pool holds back (state `held_by_pool` unless a worse state applies)',
    }),
    moreDomains: Nullable(
      Type.Integer({
        description:
          'More mailboxes, each on a domain of its own, that would carry every ramp (the capacity model); 0 when none is held; null: more than 50',
      }),
    ),
    text: Type.String({
      description:
        'The same in a sentence, e.g. "Your pool carries about 6 emails a day per mailbox; your ramps want 17–19: connect mailboxes on 4 more domains, or lower the daily limit to 6."',
    }),
  },
  { description: "What the workspace's pool carries, from the capacity model of the last plans; null before any plan" },
);
export type PoolLine = Static<typeof PoolLine>;

export const MailboxOutlook = Type.Object(
  {
    summary: Type.String({
      description: 'What the mailbox does next and when, e.g. "Next send at 09:12 Europe/Berlin (3 of 6 today)"',
    }),
    nextSendAt: Nullable(Type.String({ format: 'date-time', description: 'Its next planned send' })),
    rampTarget: Nullable(
      Type.Integer({ description: "The ramp's target for the last planned day, before the pool cut it" }),
    ),
    limitedBy: Nullable(
      StringEnum(['pool_too_small'], {
        description: 'Why dailyTarget is below rampTarget, when the pool is the cause',
      }),
    ),
    limitReason: Nullable(Type.String({ description: 'The same in words, with what to do' })),
    readyForCampaigns: Type.Boolean({
      description:
        'Active and in the pool, 14 or more warmup days, reputation 80 or more, at least 10 of its emails found in 7 days with 10 % or less in spam, no bounce, nothing needing attention',
    }),
    readiness: Type.String({ description: 'Why it is ready, or what it still needs' }),
    attention: Type.Array(Attention, {
      description: 'Every documented threshold it crosses (empty when none): the "Needs attention" list',
    }),
    state: WarmupState,
  },
  { description: 'A plain-language status: what the mailbox does next, why it sends less, whether it is ready' },
);
export type MailboxOutlook = Static<typeof MailboxOutlook>;
export const AutoReplyState = Type.Object(
  {
    lastSeenAt: Type.String({
      format: 'date-time',
      description: 'When the last automatic reply (out of office, vacation) of this mailbox to warmup mail was seen',
    }),
    receivesAgainAt: Type.String({
      format: 'date-time',
      description: 'When it receives warmup mail again if no further automatic reply is seen (3 days after the last)',
    }),
    reason: Type.String({ description: 'What the owner is told, in a sentence' }),
  },
  {
    description:
      'Set while the mailbox answers warmup mail automatically: it then receives no warmup mail (it still sends), until no automatic reply was seen for 3 days or its owner resumes it (POST …/resume). Its automatic replies are filed into the Warmup folder of the mailbox that received them. null otherwise.',
  },
);
export type AutoReplyState = Static<typeof AutoReplyState>;

export const Mailbox = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Nullable(Type.String()),
  provider: ProviderId,
  connectionType: ConnectionType,
  oauthProvider: Nullable(
    StringEnum(OAUTH_PROVIDERS, {
      description: 'The OAuth provider a `oauth2` mailbox signs in with; null for an app password',
    }),
  ),
  status: MailboxStatus,
  imap: ServerSettings,
  smtp: ServerSettings,
  warmup: WarmupSettings,
  reputation: Type.Integer({ minimum: 0, maximum: 100 }),
  warmupDay: Type.Integer({ description: 'Active warmup days so far' }),
  dailyTarget: Type.Integer({ description: "Today's planned sends" }),
  lastSyncAt: Nullable(Type.String({ format: 'date-time' })),
  lastError: Nullable(Type.String()),
  pool: PoolMembership,
  outlook: MailboxOutlook,
  autoReply: Nullable(AutoReplyState),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type Mailbox = Static<typeof Mailbox>;

export const MailboxEnvelope = Type.Object({ mailbox: Mailbox });

export const MailboxListQuery = Type.Object(
  {
    ...PaginationQuery,
    status: Type.Optional(MailboxStatus),
    provider: Type.Optional(ProviderId),
    q: Type.Optional(
      Type.String({ maxLength: 200, description: 'Case-insensitive substring of the address or the name' }),
    ),
  },
  { additionalProperties: false },
);
export type MailboxListQuery = Static<typeof MailboxListQuery>;

export const MailboxList = Type.Object({ mailboxes: Type.Array(Mailbox), pagination: Pagination });

const ServerPreset = Type.Object({ host: Type.String(), port: Type.Integer(), secure: Type.Boolean() });

export const ProviderPreset = Type.Object({
  id: StringEnum(KNOWN_PROVIDERS),
  name: Type.String(),
  imap: ServerPreset,
  smtp: ServerPreset,
  appPasswordRequired: Type.Boolean({
    description: 'The provider refuses the account password over IMAP/SMTP: make an app password',
  }),
  passwordLogin: Type.Boolean({
    description:
      'The provider still lets a password (or app password) log in over IMAP and SMTP; false: connect with OAuth (`oauthProvider`)',
  }),
  oauthProvider: Nullable(
    StringEnum(OAUTH_PROVIDERS, {
      description:
        'Connect with this OAuth provider instead of a password (POST /api/oauth/{provider}/authorize), when the operator set it up (GET /api/oauth/providers)',
    }),
  ),
  helpUrl: Type.String({ description: "The provider's instructions for app passwords and IMAP access" }),
  notes: Type.String(),
});
export type ProviderPreset = Static<typeof ProviderPreset>;

export const ProviderList = Type.Object({
  providers: Type.Array(ProviderPreset, { description: 'Every provider but `custom`, which has no preset' }),
});

export const InteractionType = StringEnum(INTERACTION_TYPES);

export const Interaction = Type.Object({
  id: Type.String(),
  mailboxId: Type.String(),
  type: InteractionType,
  counterpart: Type.String({
    description: "The other mailbox's address; masked (`j***@example.com`) when it belongs to another workspace",
  }),
  subject: Nullable(Type.String()),
  messageId: Type.String(),
  threadId: Nullable(Type.String()),
  placement: Nullable(StringEnum(PLACEMENTS, { description: 'Where a received email was found' })),
  occurredAt: Type.String({ format: 'date-time' }),
});
export type Interaction = Static<typeof Interaction>;

export const InteractionListQuery = Type.Object(
  {
    ...PaginationQuery,
    type: Type.Optional(InteractionType),
    startDate: Type.Optional(IsoDate),
    endDate: Type.Optional(IsoDate),
  },
  { additionalProperties: false, description: 'startDate and endDate are UTC days, both inclusive, start <= end' },
);
export type InteractionListQuery = Static<typeof InteractionListQuery>;

export const InteractionList = Type.Object({ interactions: Type.Array(Interaction), pagination: Pagination });

export const HumanReply = Type.Object(
  {
    id: Type.String(),
    mailboxId: Type.String(),
    from: Type.Object({
      name: Type.String({ description: "The sender's name as their mail client wrote it ('' when none)" }),
      email: Type.String(),
    }),
    subject: Type.String(),
    date: Nullable(Type.String({ format: 'date-time', description: 'The Date the person wrote, when readable' })),
    excerpt: Type.String({
      description:
        'What they wrote, as plain text: the start of the text part (at most 2,000 characters), without the text it quotes',
    }),
    folder: Type.String({ description: 'Where it is now: the `Warmup` folder, or the folder it was left in' }),
    answersMessageId: Type.String({ description: 'The Message-ID of the warmup email it answers' }),
    foundAt: Type.String({ format: 'date-time', description: 'When warmup found it (and ended its thread)' }),
  },
  {
    description:
      "A reply a person wrote to this mailbox's warmup mail. It is left unread; warmup writes nothing more in that thread.",
  },
);
export type HumanReply = Static<typeof HumanReply>;

export const HumanReplyListQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
export type HumanReplyListQuery = Static<typeof HumanReplyListQuery>;

export const HumanReplyList = Type.Object({ replies: Type.Array(HumanReply), pagination: Pagination });

export const IMPORT_RESULTS = ['created', 'exists', 'failed'] as const;

export const ImportRowResult = Type.Object({
  line: Type.Integer({ description: 'Line of the file (the header is line 1)' }),
  email: Nullable(Type.String()),
  result: StringEnum(IMPORT_RESULTS, {
    description:
      '`created`: connected now; `exists`: the address is already connected in this workspace (or earlier in the file); `failed`: see `error`',
  }),
  mailboxId: Nullable(Type.String({ description: 'The new mailbox of a `created` row' })),
  error: Nullable(
    Type.String({ description: 'Why the row failed, naming its columns or quoting the server; never a password' }),
  ),
});
export type ImportRowResult = Static<typeof ImportRowResult>;

export const MailboxImport = Type.Object({
  total: Type.Integer({ description: 'Data rows in the file' }),
  created: Type.Integer(),
  existing: Type.Integer(),
  failed: Type.Integer(),
  rows: Type.Array(ImportRowResult, { description: 'One per data row, in file order' }),
});
export type MailboxImport = Static<typeof MailboxImport>;

export const MailboxImportEnvelope = Type.Object({ import: MailboxImport });
