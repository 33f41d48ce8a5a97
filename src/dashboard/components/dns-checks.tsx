// The DNS checks of a mailbox's domain on its page: each check with what was found and, when it
// does not pass, what to change in plain words (run when the page opens and on demand); then the
// blocklists of the daily run: each listing with since when and where to ask for removal. The DKIM
// check's selector is given in a form here, so no fix ever sends a person to the API.
import { useEffect, useState } from 'preact/hooks';
import type { BlocklistListing, DnsCheck, MailboxChecks } from '../api.js';
import { api } from '../api.js';
import { formatDateTime, formatDay } from '../format.js';
import { useResource } from '../hooks.js';
import { TextField } from './fields.js';
import { Badge, Button, Card, ErrorBox, Loading, errorMessage } from './ui.js';

// the route's own rule (checks.schemas.ts), told in words before the request is sent
const SELECTOR = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** What is wrong with a typed selector, in plain words; undefined when it is fine. */
export function selectorProblem(selector: string): string | undefined {
  if (selector === '')
    return 'Enter the selector: the s= value of a DKIM-Signature in mail you sent, such as "google" or "s1".';
  if (selector.length > 63) return 'A selector is at most 63 characters long.';
  if (/_domainkey/i.test(selector))
    return 'Give only the selector, without the "._domainkey" part: for s1._domainkey.example.com, type s1.';
  if (!SELECTOR.test(selector))
    return 'A selector has only letters, digits, dots, hyphens and underscores, and starts with a letter or digit (no spaces).';
  return undefined;
}

function DkimSelectorForm({
  mailboxId,
  current,
  onSaved,
}: {
  mailboxId: string;
  current: MailboxChecks['dkimSelector'];
  onSaved: () => void;
}) {
  const [value, setValue] = useState(current.source === 'user' ? (current.selector ?? '') : '');
  const [error, setError] = useState<string | undefined>(undefined);
  const [saving, setSaving] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const selector = value.trim();
    const problem = selectorProblem(selector);
    setError(problem);
    if (problem) return;
    setSaving(true);
    try {
      await api.setDkimSelector(mailboxId, selector);
      onSaved();
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setSaving(false);
    }
  };
  const known =
    current.selector === null
      ? 'No selector is known yet.'
      : current.source === 'user'
        ? `The checks use the selector you gave: ${current.selector}.`
        : `The checks use ${current.selector}, learned from this mailbox's mail.`;
  return (
    <form class="dkim-selector-form" onSubmit={submit} noValidate>
      <TextField
        label="DKIM selector"
        name="dkimSelector"
        value={value}
        onValue={setValue}
        error={error}
        hint={`${known} Give your domain's own selector when your provider signs with another domain.`}
        autoComplete="off"
        spellcheck={false}
      />
      <Button type="submit" size="sm" loading={saving}>
        Save selector
      </Button>
    </form>
  );
}

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
  const shown = result !== undefined;
  // The mailbox list's DNS column and the overview's DNS line link to #dns: the page drew the card
  // after its own data came, so the browser found no such element when it loaded; scroll to it now,
  // and again once the checks are in, which makes the card taller.
  useEffect(() => {
    if (window.location.hash === '#dns') document.getElementById('dns')?.scrollIntoView();
  }, [mailboxId, shown]);
  return (
    <Card
      id="dns"
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
      {result && <DkimSelectorForm mailboxId={mailboxId} current={result.dkimSelector} onSaved={checks.reload} />}
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
