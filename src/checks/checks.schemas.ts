import { Type, type Static } from '@sinclair/typebox';

export const DnsCheck = Type.Object({
  check: Type.Union([Type.Literal('mx'), Type.Literal('spf'), Type.Literal('dmarc'), Type.Literal('dkim')]),
  status: Type.Union(
    [Type.Literal('pass'), Type.Literal('fail'), Type.Literal('unreachable'), Type.Literal('skipped')],
    { description: '`unreachable`: the DNS server did not answer, nothing is known; `skipped`: not enough to check' },
  ),
  detail: Type.String({ description: 'What was found' }),
  fix: Type.Union([Type.String(), Type.Null()], { description: 'What to change, in plain words; null when it passes' }),
});
export type DnsCheck = Static<typeof DnsCheck>;

export const MailboxChecks = Type.Object({
  domain: Type.String(),
  checkedAt: Type.String({ format: 'date-time' }),
  checks: Type.Array(DnsCheck),
});
export type MailboxChecks = Static<typeof MailboxChecks>;

export const MailboxChecksQuery = Type.Object(
  {
    dkimSelector: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62})$', description: "The DKIM key's selector (s=)" }),
    ),
  },
  { additionalProperties: false },
);
export type MailboxChecksQuery = Static<typeof MailboxChecksQuery>;
