// The DNS checks of a mailbox's domain on its page: each check with what was found and, when it
// does not pass, what to change in plain words (run when the page opens and on demand); then the
// blocklists of the daily run: each listing with since when and where to ask for removal.
import type { BlocklistListing, DnsCheck } from '../api.js';
import { api } from '../api.js';
import { formatDateTime, formatDay } from '../format.js';
import { useResource } from '../hooks.js';
import { Badge, Button, Card, ErrorBox, Loading } from './ui.js';

const CHECK_NAMES: Record<DnsCheck['check'], string> = {
  mx: 'MX',
  spf: 'SPF',
  dmarc: 'DMARC',
  dkim: 'DKIM',
};

const STATUS: Record<DnsCheck['status'], { label: string; tone: 'green' | 'red' | 'amber' | 'neutral' }> = {
  pass: { label: 'Passes', tone: 'green' },
  fail: { label: 'Fails', tone: 'red' },
  unreachable: { label: 'Not answered', tone: 'amber' },
  skipped: { label: 'Not checked', tone: 'neutral' },
};

export function DnsChecksCard({ mailboxId }: { mailboxId: string }) {
  const checks = useResource(() => api.mailboxChecks(mailboxId), [mailboxId]);
  const result = checks.data;
  return (
    <Card
      title="DNS checks"
      subtitle={result ? `How receivers see ${result.domain}` : 'MX, SPF, DMARC and DKIM of its domain'}
      class="dns-checks-card"
      actions={
        <Button size="sm" loading={checks.loading} onClick={checks.reload}>
          Check again
        </Button>
      }
    >
      {checks.error ? (
        <ErrorBox error={checks.error} onRetry={checks.reload} title="Could not run the DNS checks" />
      ) : !result ? (
        <Loading label="Checking DNS" rows={4} />
      ) : (
        <ul class="dns-checks" aria-label={`DNS checks of ${result.domain}`}>
          {result.checks.map((check) => (
            <li key={check.check} class={`dns-check dns-check-${check.status}`} data-check={check.check}>
              <div class="dns-check-head">
                <strong>{CHECK_NAMES[check.check]}</strong>
                <Badge tone={STATUS[check.status].tone}>{STATUS[check.status].label}</Badge>
              </div>
              <p class="dns-check-detail">{check.detail}</p>
              {check.fix && check.status !== 'pass' && (
                <p class="dns-check-fix">
                  <span class="dns-check-fix-label">How to fix: </span>
                  {check.fix}
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
      <Blocklists mailboxId={mailboxId} />
    </Card>
  );
}

function Blocklists({ mailboxId }: { mailboxId: string }) {
  const blocklists = useResource(() => api.mailboxBlocklists(mailboxId), [mailboxId]);
  const all = blocklists.data;
  if (blocklists.error) {
    return <ErrorBox error={blocklists.error} onRetry={blocklists.reload} title="Could not load the blocklists" />;
  }
  if (!all) return <Loading label="Loading the blocklists" rows={2} />;
  const listed = all.filter((entry) => entry.status === 'listed');
  const lists = new Set(all.map((entry) => entry.zone)).size;
  return (
    <div class="blocklists">
      <h3 class="dns-blocklists-title">Blocklists</h3>
      {all.length === 0 ? (
        <p class="muted">Not checked yet: the blocklists are asked once a day.</p>
      ) : listed.length === 0 ? (
        <p>
          Not listed on any of the {lists} blocklists asked (last asked {formatDateTime(all[0]!.checkedAt)}).
        </p>
      ) : (
        <ul class="dns-checks" aria-label="Blocklist listings">
          {listed.map((entry: BlocklistListing) => (
            <li key={`${entry.zone} ${entry.subject}`} class="dns-check dns-check-fail">
              <div class="dns-check-head">
                <strong class="break-anywhere">{entry.subject}</strong>
                <Badge tone="red">Listed on {entry.zone}</Badge>
              </div>
              <p class="dns-check-detail">
                Listed since {entry.listedSince ? formatDay(entry.listedSince.slice(0, 10)) : 'the last check'}.{' '}
                {entry.detail}
              </p>
              {entry.delistUrl && (
                <p class="dns-check-fix">
                  <span class="dns-check-fix-label">How to fix: </span>
                  stop what got it listed, then ask for removal at{' '}
                  <a href={entry.delistUrl} target="_blank" rel="noopener noreferrer">
                    {entry.delistUrl}
                  </a>
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
