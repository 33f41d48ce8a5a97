import { Type, type Static } from '@sinclair/typebox';
import { Pagination, PaginationQuery } from '../http/common.schemas.js';

/** Copies sent by one test at most: one per seed mailbox. */
export const MAX_PLACEMENT_SEEDS = 10;
/** The user's copy: bounded like a real campaign message, well under the readers' download cap. */
export const MAX_PLACEMENT_SUBJECT_CHARS = 300;
export const MAX_PLACEMENT_BODY_CHARS = 100_000;

export const CreatePlacementTestBody = Type.Object(
  {
    senderMailboxId: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'A mailbox of the workspace: it sends the copies',
    }),
    subject: Type.String({ minLength: 1, maxLength: MAX_PLACEMENT_SUBJECT_CHARS }),
    text: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_PLACEMENT_BODY_CHARS,
        description: 'Plain-text body; made from `html` when left out',
      }),
    ),
    html: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_PLACEMENT_BODY_CHARS,
        description: 'HTML body; made from `text` when left out',
      }),
    ),
    seedCount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PLACEMENT_SEEDS,
        default: MAX_PLACEMENT_SEEDS,
        description: 'How many seed mailboxes at most (fewer when the pool has fewer)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreatePlacementTestBody = Static<typeof CreatePlacementTestBody>;

export const PLACEMENTS = ['inbox', 'promotions', 'spam', 'other', 'missing'] as const;

export const PlacementCounts = Type.Object({
  inbox: Type.Integer(),
  promotions: Type.Integer(),
  spam: Type.Integer(),
  other: Type.Integer(),
  missing: Type.Integer(),
  /** Copies not found yet (nor given up). */
  pending: Type.Integer(),
});
export type PlacementCounts = Static<typeof PlacementCounts>;

const AuthResult = Type.Union([Type.String(), Type.Null()], {
  description: '`pass`, `fail`, `softfail`, `neutral`, `none`, `temperror`, `permerror` or `policy`; null: not said',
});

/** What the receiving side wrote about one copy, from its own Authentication-Results and spam reports only. */
export const CopyVerdict = Type.Object({
  authservId: Type.Union([Type.String(), Type.Null()], {
    description: "The receiver's Authentication-Results that was read ('' for Microsoft's, which names none)",
  }),
  spf: AuthResult,
  dkim: AuthResult,
  dmarc: AuthResult,
  arc: AuthResult,
  scl: Type.Union([Type.Integer(), Type.Null()], { description: "Microsoft's spam confidence level" }),
  bcl: Type.Union([Type.Integer(), Type.Null()], { description: "Microsoft's bulk complaint level" }),
  spamScore: Type.Union([Type.Number(), Type.Null()], { description: 'A SpamAssassin-style score' }),
});

const PassShare = Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], {
  description: 'Percent of the copies found whose receiver gave this result that passed; null: no receiver said',
});

/** The receivers' verdicts on the copies a provider's seeds found. */
export const ProviderCopyVerdicts = Type.Object({
  found: Type.Integer({ minimum: 0, description: 'Copies found (the verdicts are of these)' }),
  spfPass: PassShare,
  dkimPass: PassShare,
  dmarcPass: PassShare,
  averageSpamScore: Type.Union([Type.Number(), Type.Null()], { description: 'Where a spam score was given' }),
  averageScl: Type.Union([Type.Number(), Type.Null()], { description: "Microsoft's mean SCL, where given" }),
});
export type ProviderCopyVerdicts = Static<typeof ProviderCopyVerdicts>;

export const PlacementSeed = Type.Object({
  mailbox: Type.Object({ id: Type.String(), email: Type.String() }),
  provider: Type.String(),
  placement: Type.Union([Type.Null(), Type.String({ enum: [...PLACEMENTS] })], {
    description: 'Where the copy was found; `missing` when not found in time; null while looked for',
  }),
  sentAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  foundAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  verdict: Type.Union([CopyVerdict, Type.Null()], { description: "The receiver's verdict; null until found" }),
});

export const PlacementTestStatus = Type.String({
  enum: ['queued', 'sending', 'waiting', 'completed', 'failed'],
  description:
    '`queued` until the sender may send (its send window and the gap after its last send), `waiting` while the copies are looked for, then `completed`; `failed` when the copies could not be sent',
});

export const PlacementTest = Type.Object({
  id: Type.String(),
  sender: Type.Object({ id: Type.String(), email: Type.String() }),
  subject: Type.String(),
  status: PlacementTestStatus,
  lastError: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  sentAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  totals: PlacementCounts,
  /** Per receiving provider (the seed mailbox's provider). */
  providers: Type.Array(
    Type.Object({ provider: Type.String(), ...PlacementCounts.properties, verdicts: ProviderCopyVerdicts }),
  ),
  seeds: Type.Array(PlacementSeed),
});
export type PlacementTest = Static<typeof PlacementTest>;

export const PlacementTestEnvelope = Type.Object({ placementTest: PlacementTest });

export const PlacementTestListQuery = Type.Object(PaginationQuery, { additionalProperties: false });
export type PlacementTestListQuery = Static<typeof PlacementTestListQuery>;

export const PlacementTestList = Type.Object({ placementTests: Type.Array(PlacementTest), pagination: Pagination });
export type PlacementTestList = Static<typeof PlacementTestList>;
