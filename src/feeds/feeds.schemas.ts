import { Type, type Static } from '@sinclair/typebox';
import { IsoDate } from '../http/common.schemas.js';

export const FEEDS = ['snds', 'postmaster'] as const;
export type FeedName = (typeof FEEDS)[number];

export const SndsConnectionBody = Type.Object(
  {
    key: Type.String({
      minLength: 8,
      maxLength: 100,
      pattern: '^[A-Za-z0-9-]+$',
      description: 'The SNDS "automated data access" key (a GUID) from the SNDS page of the addresses',
    }),
  },
  { additionalProperties: false },
);
export type SndsConnectionBody = Static<typeof SndsConnectionBody>;

const DomainName = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' });

export const PostmasterConnectionBody = Type.Object(
  {
    refreshToken: Type.String({
      minLength: 10,
      maxLength: 2000,
      pattern: '^[\\x21-\\x7e]+$',
      description:
        "A refresh token issued by the installation's Google OAuth app with the scope `https://www.googleapis.com/auth/postmaster.traffic.readonly`",
    }),
    domains: Type.Array(DomainName, {
      minItems: 1,
      maxItems: 50,
      uniqueItems: true,
      description: 'The domains verified in Postmaster Tools to fetch daily',
    }),
  },
  { additionalProperties: false },
);
export type PostmasterConnectionBody = Static<typeof PostmasterConnectionBody>;

export const PostmasterAuthorizeBody = Type.Object(
  { domains: PostmasterConnectionBody.properties.domains },
  { additionalProperties: false },
);
export type PostmasterAuthorizeBody = Static<typeof PostmasterAuthorizeBody>;

const NullableTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const FeedConnection = Type.Object({
  feed: Type.Union([Type.Literal('snds'), Type.Literal('postmaster')]),
  configured: Type.Literal(true, { description: 'The key or grant is stored (encrypted); it is never returned' }),
  domains: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'Postmaster: the domains fetched' }),
  checkedAt: Type.Union([NullableTime], { description: 'When the feed was last fetched' }),
  fetchedDay: Type.Union([IsoDate, Type.Null()], { description: 'The UTC day of the last fetch that worked' }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the last fetch failed; a failed fetch never slows anything',
  }),
  setAside: Type.Object(
    {
      count: Type.Integer({ minimum: 0 }),
      latestReason: Type.Union([Type.String(), Type.Null()]),
    },
    { description: 'Rows of the last 30 days that could not be read (SNDS lines), and the latest reason' },
  ),
});
export type FeedConnection = Static<typeof FeedConnection>;

export const FeedConnectionEnvelope = Type.Object({
  connection: Type.Union([FeedConnection, Type.Null()], { description: 'Null until an owner or admin connects it' }),
});

export const FeedDomainParams = Type.Object({ domain: DomainName }, { additionalProperties: false });

export const ProviderVerdicts = Type.Object({
  domain: Type.String(),
  hold: Type.Union(
    [
      Type.Object({
        signal: Type.String({ description: '`gmail_spam_rate` or `snds_red`' }),
        day: IsoDate,
        reason: Type.String(),
        since: Type.String({ format: 'date-time' }),
      }),
      Type.Null(),
    ],
    { description: "Set while the providers' feeds hold this domain's volume" },
  ),
  gmail: Type.Array(
    Type.Object({
      day: IsoDate,
      spamRate: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'A fraction: 0.004 is 0.4 %' }),
      compliance: Type.Union([Type.String(), Type.Null()]),
    }),
    { description: 'Postmaster Tools days of the last 30 days, newest first' },
  ),
  snds: Type.Array(
    Type.Object({
      ip: Type.String(),
      day: IsoDate,
      filterResult: Type.String({ description: '`green`, `yellow` or `red`' }),
      complaintRate: Type.String(),
      trapHits: Type.Integer({ minimum: 0 }),
      messageRecipients: Type.Integer({ minimum: 0 }),
    }),
    { description: "SNDS days of the last 30 days of the addresses the domain's mail left from, newest first" },
  ),
  feeds: Type.Object({
    snds: Type.Union([FeedConnection, Type.Null()]),
    postmaster: Type.Union([FeedConnection, Type.Null()]),
  }),
});
export type ProviderVerdicts = Static<typeof ProviderVerdicts>;
