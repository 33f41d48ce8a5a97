import { Type, type Static, type TInteger, type TObject, type TSchema } from '@sinclair/typebox';
import { MailboxStatus, PoolLine, WARMUP_STATES, WarmupStateKind } from '../mailboxes/mailboxes.schemas.js';
import { MAX_RANGE_DAYS, PERIODS } from './period.js';

/*
 * Statistics are counted for the sender (deliverability belongs to the mail that was sent), read
 * from the daily rollups only, and every day is a UTC calendar day.
 */

/** A calendar day; `format: date` rejects impossible days such as 2026-02-30 as well as malformed ones. */
const day = (description = 'Calendar day YYYY-MM-DD (UTC)') => Type.String({ format: 'date', description });
const Day = day();

const percent = (description = 'Percentage 0..100, one decimal; 0 when the denominator is 0') =>
  Type.Number({ minimum: 0, maximum: 100, description });
const Percent = percent();

const score = (description = 'Score 0..100, or null when none is known') =>
  Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()], { description });
const Score = score();

const PERIOD_RULES =
  `Period: \`period\` = ${PERIODS.join(' | ')} (default 30d: the last N days ending today, UTC), or \`startDate\` and \`endDate\` ` +
  `together (start ≤ end, end at most ${MAX_RANGE_DAYS} days after start), which win over \`period\`.`;

const REPUTATION_RULE =
  '`reputation` of a day is the mean (rounded) of the selected mailboxes that have a score that day; a day without any score ' +
  'carries the last known score forward (also from before the range); null when no score is known yet, and for days after today.';

export const PeriodQueryShape = {
  period: Type.Optional(
    Type.Unsafe<(typeof PERIODS)[number]>({
      type: 'string',
      enum: [...PERIODS],
      description: 'Last N days ending today (default 30d)',
    }),
  ),
  startDate: Type.Optional(day('First day of the range; needs endDate; wins over period')),
  endDate: Type.Optional(day(`Last day of the range; needs startDate; at most ${MAX_RANGE_DAYS} days after it`)),
};

const MailboxFilterShape = {
  mailboxId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'Narrows to one mailbox of the workspace (404 if it is not one)',
    }),
  ),
};

export const StatsQuery = Type.Object({ ...PeriodQueryShape, ...MailboxFilterShape }, { additionalProperties: false });
export type StatsQuery = Static<typeof StatsQuery>;

export const PeriodQuery = Type.Object(PeriodQueryShape, { additionalProperties: false });
export type PeriodQuery = Static<typeof PeriodQuery>;

/** Without a period the dashboard answers exactly the seed's object; with one it adds the headline figures. */
export const DashboardQuery = Type.Object(PeriodQueryShape, { additionalProperties: false });
export type DashboardQuery = Static<typeof DashboardQuery>;

export const EXPORT_FORMATS = ['csv', 'json', 'pdf'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_TABLES = ['mailboxes', 'domains'] as const;
export type ExportTable = (typeof EXPORT_TABLES)[number];

export const ExportQuery = Type.Object(
  {
    format: Type.Unsafe<ExportFormat>({ type: 'string', enum: [...EXPORT_FORMATS], description: 'csv, json or pdf' }),
    table: Type.Optional(
      Type.Unsafe<ExportTable>({
        type: 'string',
        enum: [...EXPORT_TABLES],
        description:
          'csv only: `mailboxes` (default), one row per mailbox per day; `domains`, one row per domain with what the providers said of it (json and pdf carry both)',
      }),
    ),
    ...PeriodQueryShape,
    ...MailboxFilterShape,
  },
  { additionalProperties: false },
);
export type ExportQuery = Static<typeof ExportQuery>;

export const DailySummaryQuery = Type.Object(
  { date: Type.Optional(day('The day to summarise (default today, UTC)')) },
  { additionalProperties: false },
);
export type DailySummaryQuery = Static<typeof DailySummaryQuery>;

const count = (description: string) => Type.Integer({ minimum: 0, description });

export const Totals = Type.Object({
  sent: count('Warmup emails the mailboxes sent'),
  received: count('Warmup emails that reached the mailboxes'),
  inbox: count('Of the mail sent, found by the peers in the inbox'),
  spam: count('... in spam'),
  promotions: count('... in a promotions tab'),
  other: count('... in any other folder'),
  rescued: count('Of the mail sent, moved out of spam by the peers'),
  opened: count('Of the mail sent, opened by the peers'),
  flagged: count('Of the mail sent, flagged by the peers'),
  replied: count('Of the mail sent, replied to by the peers'),
  bounced: count('Of the mail sent, bounced'),
  promotedToPrimary: count(
    'Of the mail sent, taken by Gmail recipients from a tab (Promotions, Updates, Social, Forums) to Primary, counted when Gmail showed the move',
  ),
});
export type Totals = Static<typeof Totals>;
/** The counters of Totals, in its order: what the statistics sum, and the workspace rollup keeps (interactions/workspace-rollup.ts). */
export const TOTAL_COLUMNS = Object.keys(Totals.properties) as Array<keyof Totals>;

export const Rates = Type.Object(
  {
    inboxRate: Percent,
    spamRate: Percent,
    openRate: Percent,
    replyRate: Percent,
    bounceRate: percent('bounced / sent, percent'),
  },
  { description: 'inbox, spam, open and reply rates are over the mail found: inbox + spam + promotions + other' },
);
export type Rates = Static<typeof Rates>;

/** The counts of one day's rollup, in the order the daily series and the summary show them (the CSV's is EXPORT_COLUMNS). */
export const DAY_COUNT_COLUMNS = [
  'sent',
  'received',
  'inbox',
  'spam',
  'rescued',
  'opened',
  'replied',
  'promotedToPrimary',
] as const satisfies ReadonlyArray<keyof Totals>;
const DayCountsShape = Object.fromEntries(DAY_COUNT_COLUMNS.map((column) => [column, Type.Integer()])) as Record<
  (typeof DAY_COUNT_COLUMNS)[number],
  TInteger
>;
export type DayCounts = Static<TObject<typeof DayCountsShape>>;

export const DailyRow = Type.Object({
  date: Day,
  ...DayCountsShape,
  reputation: Score,
});
export type DailyRow = Static<typeof DailyRow>;

const Daily = Type.Array(DailyRow, {
  description: `Every day of the range, oldest first, empty days as zeros. ${REPUTATION_RULE}`,
});

const RangeShape = {
  startDate: Day,
  endDate: Day,
};

const nullablePercent = (description: string) =>
  Type.Union([Percent, Type.Null()], { description: `${description}; null when no mail was found in the period` });

export const HeadlinePeriod = Type.Object(
  {
    ...RangeShape,
    sent: count('Warmup emails the mailboxes sent in the period'),
    inboxRate: nullablePercent('Of the mail found by the peers, the share in the inbox'),
    spamRate: nullablePercent('Of the mail found by the peers, the share in spam'),
    reputation: score('The mean score on the last day of the period (carried forward); null when none is known'),
  },
  { additionalProperties: false },
);
export type HeadlinePeriod = Static<typeof HeadlinePeriod>;

const change = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${description}; null when either side is null` });

export const Headline = Type.Object(
  {
    current: HeadlinePeriod,
    /** The same number of days immediately before the current period. */
    previous: HeadlinePeriod,
    change: Type.Object(
      {
        sent: Type.Union([Type.Number(), Type.Null()], {
          description:
            'Percent change of sent against the previous period, one decimal; null when the previous sent none',
        }),
        inboxRate: change('Percentage points, one decimal: current minus previous'),
        spamRate: change('Percentage points, one decimal: current minus previous'),
        reputation: change('Score points: current minus previous'),
      },
      { additionalProperties: false },
    ),
  },
  {
    additionalProperties: false,
    description: 'Inbox rate, spam rate, sent and reputation of the period, against the period before it',
  },
);
export type Headline = Static<typeof Headline>;

export const DashboardStats = Type.Object({
  stats: Type.Object(
    {
      totalMailboxes: Type.Integer(),
      activeMailboxes: Type.Integer({ description: 'Mailboxes whose status is `active`, held back or not' }),
      warmingMailboxes: Type.Integer({
        description:
          'Mailboxes warming up as their ramp wants: state `on_track` or `waiting` (not held, stopped, paused or joining)',
      }),
      states: Type.Object(
        Object.fromEntries(WARMUP_STATES.map((kind) => [kind, Type.Integer()])) as Record<
          (typeof WARMUP_STATES)[number],
          TInteger
        >,
        { description: "The workspace's mailboxes by their state (`outlook.state.kind` of each mailbox)" },
      ),
      pool: Type.Union([PoolLine, Type.Null()]),
      avgReputation: Type.Integer({ description: 'Whole-number mean reputation of the active mailboxes; 0 when none' }),
      todaySent: Type.Integer({ description: 'Sent today (UTC) by the workspace' }),
      todayReceived: Type.Integer({ description: 'Received today (UTC) by the workspace' }),
      // Only when a period is asked for (`period` or `startDate`/`endDate`): the bare call stays the seed's object.
      headline: Type.Optional(Headline),
    },
    { additionalProperties: false },
  ),
});
export type DashboardStats = Static<typeof DashboardStats>['stats'];

export const Analytics = Type.Object({
  ...RangeShape,
  mailboxId: Type.Union([Type.String(), Type.Null()], {
    description: 'The mailbox the figures are narrowed to, or null for the whole workspace',
  }),
  totals: Totals,
  rates: Rates,
  daily: Daily,
});
export type Analytics = Static<typeof Analytics>;
export const AnalyticsEnvelope = Type.Object({ analytics: Analytics });

export const Reputation = Type.Object({
  ...RangeShape,
  mailboxId: Type.Union([Type.String(), Type.Null()]),
  current: score('The score on endDate (the last history point); null when none is known'),
  change: Type.Union([Type.Integer(), Type.Null()], {
    description: 'current minus the first known score of the range; null when current is null',
  }),
  history: Type.Array(Type.Object({ date: Day, score: Score }), {
    description: `Every day of the range, oldest first. ${REPUTATION_RULE.replace('`reputation`', 'The score')}`,
  }),
});
export type Reputation = Static<typeof Reputation>;
export const ReputationEnvelope = Type.Object({ reputation: Reputation });

const PlacementCountsShape = {
  total: Type.Integer({ description: 'inbox + spam + promotions + other' }),
  inbox: Type.Integer(),
  spam: Type.Integer(),
  promotions: Type.Integer(),
  other: Type.Integer(),
};

export const Placement = Type.Object({
  ...RangeShape,
  ...PlacementCountsShape,
  inboxRate: Percent,
  spamRate: Percent,
  byProvider: Type.Array(Type.Object({ provider: Type.String(), ...PlacementCountsShape, inboxRate: Percent }), {
    description:
      "By the receiving mailbox's provider (where e.g. Gmail put the mail): counted on the receiving side, from where the workspace's " +
      'mailboxes of that provider found the warmup mail they received. In an installation with one workspace that is exactly where ' +
      "each provider put the workspace's mail; with mailboxId, the one row of that mailbox's provider describes the mail it received. " +
      'Providers without any mail are left out; most mail first.',
  }),
  byMailbox: Type.Array(
    Type.Object({
      mailboxId: Type.String(),
      email: Type.String(),
      total: Type.Integer(),
      inbox: Type.Integer(),
      spam: Type.Integer(),
      inboxRate: Percent,
    }),
    { description: 'By sender: where the peers found the mail each mailbox sent. Every selected mailbox, by email.' },
  ),
});
export type Placement = Static<typeof Placement>;
export const PlacementEnvelope = Type.Object({ placement: Placement });

export const Engagement = Type.Object(
  {
    ...RangeShape,
    received: Type.Integer({
      description:
        'Messages of the selected mailboxes that the peers received (found: inbox + spam + promotions + other)',
    }),
    opened: Type.Integer(),
    flagged: Type.Integer(),
    replied: Type.Integer(),
    rescued: Type.Integer(),
    openRate: percent('opened / received'),
    replyRate: percent('replied / received'),
    rescueRate: percent('rescued / spam: the share of the mail found in spam that was moved out of it'),
    promotedToPrimary: Type.Integer({
      description: 'Moved by Gmail recipients from a tab (Promotions, Updates, Social, Forums) to Primary',
    }),
    promotedToPrimaryRate: percent(
      'promotedToPrimary / promotions: the share of the mail found in a promotions tab or folder that was moved to Primary',
    ),
  },
  { description: 'What the peers did with the mail the selected mailboxes sent (sender side).' },
);
export type Engagement = Static<typeof Engagement>;
export const EngagementEnvelope = Type.Object({ engagement: Engagement });

/** Columns added later go last, so a spreadsheet or script that reads them by position keeps working. */
export const EXPORT_COLUMNS = [
  'date',
  'mailboxId',
  'email',
  'sent',
  'received',
  'inbox',
  'spam',
  'rescued',
  'opened',
  'replied',
  'reputation',
  'promotedToPrimary',
  'state',
] as const;

export const ExportRow = Type.Object({
  date: Day,
  mailboxId: Type.String(),
  email: Type.String(),
  ...DayCountsShape,
  reputation: score("The mailbox's score that day, carried forward from its last score; null when it has none yet"),
  state: Type.Unsafe<(typeof WARMUP_STATES)[number]>({
    ...WarmupStateKind,
    description: "The mailbox's state now (its `outlook.state.kind`), on each of its rows: states have no history",
  }),
});
export type ExportRow = Static<typeof ExportRow>;

/** The columns of `table=domains`, in the order of ProviderDomainRow. */
export const PROVIDER_DOMAIN_COLUMNS = [
  'domain',
  'dmarcMessages',
  'dmarcAlignedShare',
  'unalignedSources',
  'gmailSpamRate',
  'gmailDay',
  'gmailCompliance',
  'sndsRedDays',
  'sndsYellowDays',
  'sndsGreenDays',
  'held',
  'holdReason',
] as const;

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ProviderDomainRow = Type.Object(
  {
    domain: Type.String(),
    dmarcMessages: count("Messages in the domain's name that its DMARC aggregate reports counted over the range"),
    dmarcAlignedShare: nullable(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'Of them, the share passing DMARC (SPF or DKIM aligned); null without reports',
      }),
    ),
    unalignedSources: count(
      'Sending addresses (of its 200 largest) with messages that passed neither SPF nor DKIM aligned',
    ),
    gmailSpamRate: nullable(
      Type.Number({
        minimum: 0,
        description: "Gmail Postmaster Tools' latest user-reported spam rate of the range, a fraction",
      }),
    ),
    gmailDay: nullable(Day),
    gmailCompliance: nullable(
      Type.String({ description: "Postmaster Tools' compliance verdict that day, as Google words it" }),
    ),
    sndsRedDays: count("Days of the range on which Microsoft SNDS rated one of the domain's addresses red"),
    sndsYellowDays: count('... yellow'),
    sndsGreenDays: count('... green'),
    held: Type.Boolean({
      description: "Whether the providers' feeds hold the domain's volume now (holds have no history)",
    }),
    holdReason: nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type ProviderDomainRow = Static<typeof ProviderDomainRow>;

export const ExportDocument = Type.Object({
  export: Type.Object({
    ...RangeShape,
    rows: Type.Array(ExportRow, {
      description: 'One row per mailbox per day of the range (empty days included), by date, then email',
    }),
    domains: Type.Array(ProviderDomainRow, {
      description:
        "What the providers said of each domain (of the one mailbox's, with `mailboxId`): its mailboxes' and those its DMARC reports, Postmaster days or a hold name; at most 200, by name",
    }),
  }),
});

export const DailySummary = Type.Object({
  date: Day,
  ...DayCountsShape,
  activeMailboxes: Type.Integer({ description: 'Mailboxes active now (status has no history)' }),
  pausedMailboxes: Type.Integer(),
  errorMailboxes: Type.Integer(),
  reputationChange: Type.Integer({
    description:
      "How the scores in `mailboxes` moved that day: the mean, over the mailboxes scored that day, of each one's score minus its score before (the day before, else its last earlier one, else 50, where every mailbox starts), rounded; 0 when no mailbox was scored that day",
  }),
  mailboxes: Type.Array(
    Type.Object({
      mailboxId: Type.String(),
      email: Type.String(),
      status: MailboxStatus,
      sent: Type.Integer(),
      received: Type.Integer(),
      inbox: Type.Integer(),
      spam: Type.Integer(),
      replied: Type.Integer(),
      promotedToPrimary: Type.Integer(),
      reputation: score("The mailbox's score that day, carried forward; null when it has none yet"),
    }),
    { description: 'Every mailbox of the workspace, by email' },
  ),
});
export type DailySummary = Static<typeof DailySummary>;
export const DailySummaryEnvelope = Type.Object({ summary: DailySummary });

export const MailboxStats = Type.Object({
  mailboxId: Type.String(),
  status: MailboxStatus,
  reputation: Type.Integer({ description: 'Current score 0..100' }),
  warmupDay: Type.Integer(),
  dailyTarget: Type.Integer(),
  todaySent: Type.Integer({ description: 'Sent today (UTC)' }),
  todayReceived: Type.Integer({ description: 'Received today (UTC)' }),
  totals: Totals,
  rates: Rates,
  daily: Daily,
});
export type MailboxStats = Static<typeof MailboxStats>;
export const MailboxStatsEnvelope = Type.Object({ stats: MailboxStats });

export const PERIOD_DESCRIPTION = PERIOD_RULES;
