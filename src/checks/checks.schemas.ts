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

const SELECTOR_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62})$';

export const DkimSelector = Type.Object({
  selector: Type.Union([Type.String(), Type.Null()], {
    description: "The DKIM key's selector the checks use; null: none known yet",
  }),
  source: Type.Union([Type.Literal('user'), Type.Literal('mail'), Type.Null()], {
    description:
      '`user`: given (kept until changed); `mail`: learned from the `DKIM-Signature` of its warmup mail as its peers found it (follows the provider when it rotates keys)',
  }),
});
export type DkimSelector = Static<typeof DkimSelector>;

export const MailboxChecks = Type.Object({
  domain: Type.String(),
  checkedAt: Type.String({ format: 'date-time' }),
  dkimSelector: DkimSelector,
  checks: Type.Array(DnsCheck),
});
export type MailboxChecks = Static<typeof MailboxChecks>;

export const MailboxChecksQuery = Type.Object(
  {
    dkimSelector: Type.Optional(
      Type.String({
        pattern: SELECTOR_PATTERN,
        description: "The DKIM key's selector (s=) to check this once, instead of the mailbox's",
      }),
    ),
  },
  { additionalProperties: false },
);
export type MailboxChecksQuery = Static<typeof MailboxChecksQuery>;

export const DkimSelectorBody = Type.Object(
  {
    selector: Type.Union([Type.String({ pattern: SELECTOR_PATTERN }), Type.Null()], {
      description: "The selector (s=) of the domain's DKIM key; null forgets it, so the one learned from mail is used",
    }),
  },
  { additionalProperties: false },
);
export type DkimSelectorBody = Static<typeof DkimSelectorBody>;

export const BlocklistListing = Type.Object({
  zone: Type.String({ description: 'The list asked (a Spamhaus DQS key is never shown)' }),
  kind: Type.Union([Type.Literal('ip'), Type.Literal('domain')], {
    description: '`ip`: an address its mail was seen sent from; `domain`: its domain',
  }),
  subject: Type.String({ description: 'The address or domain asked about' }),
  status: Type.Union([Type.Literal('listed'), Type.Literal('clear'), Type.Literal('unreachable')], {
    description: '`unreachable`: the list did not answer, or refused this resolver: nothing is known',
  }),
  detail: Type.String({ description: "The list's answer (its return codes and reason)" }),
  listedSince: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When it was first seen listed, unbroken by a clear answer; null when not listed',
  }),
  delistUrl: Type.Union([Type.String(), Type.Null()], { description: 'Where to ask for removal' }),
  checkedAt: Type.String({ format: 'date-time' }),
});
export type BlocklistListing = Static<typeof BlocklistListing>;

export const MailboxBlocklists = Type.Object({
  blocklists: Type.Array(BlocklistListing, {
    description: 'The latest daily answers, listings first; empty before the first daily run',
  }),
});
export type MailboxBlocklists = Static<typeof MailboxBlocklists>;

export const DnsStatus = Type.Object({
  tone: Type.Union([Type.Literal('ok'), Type.Literal('warn'), Type.Literal('error'), Type.Literal('unknown')], {
    description:
      '`error`: a DNS check fails or a blocklist lists it; `warn`: a check was not answered, so nothing is known of it; `unknown`: not checked yet',
  }),
  label: Type.String({
    description: 'A few words: "DNS ok", "SPF failing", "Listed on 1 blocklist", "Not checked yet"',
  }),
  fix: Type.Union([Type.String(), Type.Null()], {
    description: 'What to change first, in plain words; null when nothing is to be done',
  }),
});
export type DnsStatus = Static<typeof DnsStatus>;

export const MailboxDnsStatus = Type.Object({
  mailboxId: Type.String(),
  email: Type.String(),
  domain: Type.String(),
  checkedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the daily run last checked it; null: not yet',
  }),
  ...DnsStatus.properties,
});
export type MailboxDnsStatus = Static<typeof MailboxDnsStatus>;

export const DnsStatusList = Type.Object({
  mailboxes: Type.Array(MailboxDnsStatus, {
    description: "Every mailbox of the workspace, by address: the latest daily DNS checks' and blocklists' verdict",
  }),
});
export type DnsStatusList = Static<typeof DnsStatusList>;
