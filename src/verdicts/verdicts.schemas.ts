import { Type, type Static } from '@sinclair/typebox';

const Counts = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
  description:
    'How many emails got each result (`pass`, `fail`, `softfail`, `none`…; `unknown`: the receiver said nothing)',
});

export const ProviderVerdicts = Type.Object({
  provider: Type.String({ description: "The receiving mailboxes' provider (gmail, outlook, yahoo, …, custom)" }),
  total: Type.Integer({ minimum: 0, description: 'Emails of this mailbox found at that provider' }),
  inbox: Type.Integer({ minimum: 0 }),
  spam: Type.Integer({ minimum: 0 }),
  promotions: Type.Integer({ minimum: 0 }),
  other: Type.Integer({ minimum: 0 }),
  inboxRate: Type.Number({ minimum: 0, maximum: 100 }),
  spf: Counts,
  dkim: Counts,
  dmarc: Counts,
  averageSpamScore: Type.Union([Type.Number(), Type.Null()], {
    description: 'Mean X-Spam-Status score, where one was given',
  }),
  averageScl: Type.Union([Type.Number(), Type.Null()], { description: "Microsoft's mean spam confidence level (SCL)" }),
  averageBcl: Type.Union([Type.Number(), Type.Null()], { description: "Microsoft's mean bulk complaint level (BCL)" }),
  summary: Type.String({ description: 'In words, e.g. "Gmail: SPF pass, DKIM pass, DMARC pass, 96 % inbox"' }),
});
export type ProviderVerdicts = Static<typeof ProviderVerdicts>;

export const VerdictProblem = Type.Object({
  code: Type.Union([Type.Literal('spf_fail'), Type.Literal('dkim_fail'), Type.Literal('dmarc_fail')]),
  providers: Type.Array(Type.String(), { description: 'The receiving providers that saw it' }),
  failed: Type.Integer({ minimum: 1, description: 'Emails that failed it' }),
  message: Type.String(),
  fix: Type.String({ description: 'What to change, in plain words' }),
});
export type VerdictProblem = Static<typeof VerdictProblem>;

export const MailboxVerdicts = Type.Object({
  mailboxId: Type.String(),
  startDate: Type.String({ format: 'date' }),
  endDate: Type.String({ format: 'date' }),
  total: Type.Integer({ minimum: 0, description: 'Emails of this mailbox found by their receivers in the period' }),
  byProvider: Type.Array(ProviderVerdicts),
  problems: Type.Array(VerdictProblem),
});
export type MailboxVerdicts = Static<typeof MailboxVerdicts>;

export const MailboxVerdictsEnvelope = Type.Object({ verdicts: MailboxVerdicts });
