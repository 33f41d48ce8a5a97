// The DNS checks of a mailbox's domain on its page: each check with what was found and, when it
// does not pass, what to change in plain words. Run when the page opens and on demand.
import type { DnsCheck } from '../api.js';
import { api } from '../api.js';
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
    </Card>
  );
}
