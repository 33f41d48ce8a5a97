// A mailbox's DNS and blocklist status as the server words it (GET /api/mailboxes/dns-status): a
// toned badge in the mailbox list, a line on the overview; both link to the mailbox's DNS checks.
import type { MailboxDnsStatus } from '../api.js';
import { countNoun } from '../format.js';
import { Badge, Link } from './ui.js';

const TONES: Record<MailboxDnsStatus['tone'], 'green' | 'amber' | 'red' | 'neutral'> = {
  ok: 'green',
  warn: 'amber',
  error: 'red',
  unknown: 'neutral',
};

/** Where a mailbox's page shows its DNS checks. */
export function dnsHref(mailboxId: string): string {
  return `/mailboxes/${encodeURIComponent(mailboxId)}#dns`;
}

export function DnsStatusBadge({ status }: { status: MailboxDnsStatus }) {
  return (
    <Link to={dnsHref(status.mailboxId)} class="dns-status-link" aria-label={`DNS of ${status.email}: ${status.label}`}>
      <Badge tone={TONES[status.tone]}>{status.label}</Badge>
    </Link>
  );
}

/**
 * "DNS: 2 of 6 mailboxes fail a check — SPF failing on example.com: <fix>", with a link to the first
 * one's DNS checks; nothing while every mailbox passes or is not checked yet.
 */
export function DnsLine({ statuses }: { statuses: MailboxDnsStatus[] }) {
  const failing = statuses.filter((status) => status.tone === 'error');
  const first = failing[0];
  if (!first) return null;
  return (
    <p class="pool-line pool-line-bad" data-testid="dns-line">
      <strong>DNS:</strong> {failing.length} of {countNoun(statuses.length, 'mailboxes')}{' '}
      {failing.length === 1 ? 'fails' : 'fail'} a DNS or blocklist check — {first.label} on {first.domain}
      {first.fix ? `: ${first.fix}` : '.'} <Link to={dnsHref(first.mailboxId)}>See the checks of {first.email}</Link>
    </p>
  );
}
