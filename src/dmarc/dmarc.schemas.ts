import { Type, type Static } from '@sinclair/typebox';
import { IsoDate } from '../http/common.schemas.js';

export const DmarcSourceBody = Type.Object(
  {
    mailboxId: Type.String({ minLength: 1, maxLength: 100, description: "One of the workspace's mailboxes" }),
    folder: Type.String({
      minLength: 1,
      maxLength: 200,
      // a folder name: no control characters (a CR or LF would be a second IMAP command)
      pattern: '^[^\\x00-\\x1f\\x7f]+$',
      description: 'The folder the `rua` reports are delivered to (e.g. `INBOX` or `DMARC`)',
    }),
  },
  { additionalProperties: false },
);
export type DmarcSourceBody = Static<typeof DmarcSourceBody>;

export const DmarcSource = Type.Object({
  mailboxId: Type.String(),
  folder: Type.String(),
  checkedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the folder was last read',
  }),
  lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last read failed' }),
});
export type DmarcSource = Static<typeof DmarcSource>;

export const DmarcSourceEnvelope = Type.Object({
  source: Type.Union([DmarcSource, Type.Null()], { description: 'Null until an owner or admin names one' }),
});

const Dispositions = Type.Object(
  {
    none: Type.Integer({ minimum: 0 }),
    quarantine: Type.Integer({ minimum: 0 }),
    reject: Type.Integer({ minimum: 0 }),
  },
  { description: 'Messages by the disposition the receivers applied' },
);

/** What a set of report rows adds up to. */
const Figures = {
  messages: Type.Integer({ minimum: 0, description: 'Messages the reports count' }),
  dmarcPass: Type.Integer({ minimum: 0, description: 'Messages with SPF or DKIM passing aligned' }),
  spfAlignedPass: Type.Integer({ minimum: 0 }),
  dkimAlignedPass: Type.Integer({ minimum: 0 }),
  dispositions: Dispositions,
};

export const DmarcDomainSummary = Type.Object({
  domain: Type.String(),
  ...Figures,
  alignedShare: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description: 'dmarcPass / messages; null without messages',
  }),
  sources: Type.Integer({ minimum: 0, description: 'Distinct sending addresses' }),
  reports: Type.Integer({ minimum: 0 }),
  lastReportAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const SetAsideReason = Type.Object({
  code: Type.String({ description: '`oversized`, `damaged`, `doctype`, `not_a_report`…' }),
  count: Type.Integer({ minimum: 0 }),
  latest: Type.String({ description: 'The latest reason in words' }),
});

export const DmarcDomains = Type.Object({
  /** The window the figures cover. */
  from: IsoDate,
  to: IsoDate,
  domains: Type.Array(DmarcDomainSummary),
  setAside: Type.Object(
    { count: Type.Integer({ minimum: 0 }), reasons: Type.Array(SetAsideReason) },
    { description: 'Report messages of the same 30 days that could not be read, by reason' },
  ),
});
export type DmarcDomains = Static<typeof DmarcDomains>;

export const DmarcDomainParams = Type.Object(
  { domain: Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' }) },
  { additionalProperties: false },
);

export const DmarcDomainDetail = Type.Object({
  domain: Type.String(),
  from: IsoDate,
  to: IsoDate,
  days: Type.Array(Type.Object({ day: IsoDate, ...Figures, reports: Type.Integer({ minimum: 0 }) })),
  sources: Type.Array(
    Type.Object({
      ip: Type.String(),
      name: Type.Union([Type.String(), Type.Null()], { description: 'Its reverse name, when known' }),
      ...Figures,
    }),
    { description: 'At most 200, the most messages first' },
  ),
});
export type DmarcDomainDetail = Static<typeof DmarcDomainDetail>;
