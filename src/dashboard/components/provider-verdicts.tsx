// What the providers' own feeds (Gmail Postmaster Tools, Microsoft SNDS) say of a domain: the hold
// the health guard keeps on it and why, each feed's latest figures, and a feed that could not be
// fetched (which holds nothing: absence of data is not evidence).
import { useState } from 'preact/hooks';
import { useIsAdmin } from '../access.js';
import type { ProviderVerdicts } from '../api.js';
import { api } from '../api.js';
import { formatDay, formatNumber } from '../format.js';
import { toast } from './toasts.js';
import { Button, Card, Notice, errorMessage } from './ui.js';

/** Sends an admin's browser to Google's consent page for Postmaster Tools, for this domain. */
function ConnectPostmaster({ domain }: { domain: string }) {
  const [busy, setBusy] = useState(false);
  if (!useIsAdmin()) return null;
  return (
    <Button
      size="sm"
      loading={busy}
      onClick={async () => {
        setBusy(true);
        try {
          window.location.assign(await api.authorizePostmaster([domain]));
        } catch (error) {
          toast(`Could not start Google's consent: ${errorMessage(error)}`, 'error');
          setBusy(false);
        }
      }}
    >
      Connect Gmail Postmaster Tools for {domain}
    </Button>
  );
}

const percent = (rate: number | null) => (rate === null ? '–' : `${Number((rate * 100).toFixed(2))} %`);

function FeedErrors({ feeds }: { feeds: ProviderVerdicts['feeds'] }) {
  const failing = [
    { name: 'Microsoft SNDS', feed: feeds.snds },
    { name: 'Gmail Postmaster Tools', feed: feeds.postmaster },
  ].filter(({ feed }) => feed?.lastError);
  if (failing.length === 0) return null;
  return (
    <Notice tone="error" title="A feed could not be fetched">
      <ul class="plain-list">
        {failing.map(({ name, feed }) => (
          <li key={name}>
            {name}: {feed!.lastError}. It holds nothing while it fails; it is tried again within the hour.
          </li>
        ))}
      </ul>
    </Notice>
  );
}

export function ProviderVerdictsCard({ verdicts }: { verdicts: ProviderVerdicts }) {
  const { feeds, gmail, snds, hold } = verdicts;
  if (!feeds.snds && !feeds.postmaster) {
    return (
      <Card title="The providers' verdicts" subtitle="Gmail Postmaster Tools and Microsoft SNDS">
        <p class="muted">
          No provider feed is connected. Connect them under <code>/api/feeds</code> (see the how-to “Provider feeds”) to
          let Gmail's and Microsoft's own figures steer the warmup.
        </p>
      </Card>
    );
  }
  const latestGmail = gmail.find((day) => day.spamRate !== null) ?? gmail[0];
  return (
    <Card title="The providers' verdicts" subtitle="Gmail Postmaster Tools and Microsoft SNDS, the last 30 days">
      <div class="stack">
        {hold ? (
          <Notice tone="warning" title="Warmup holds this domain's volume">
            {hold.reason}
          </Notice>
        ) : (
          <p>No provider reports a problem: the ramp goes on.</p>
        )}
        <FeedErrors feeds={feeds} />
        {!feeds.postmaster && <ConnectPostmaster domain={verdicts.domain} />}
        {feeds.postmaster && (
          <p data-testid="gmail-verdict">
            Gmail:{' '}
            {latestGmail
              ? `spam rate ${percent(latestGmail.spamRate)} on ${formatDay(latestGmail.day)}${latestGmail.compliance ? `, compliance ${latestGmail.compliance.replace('_', ' ')}` : ''}`
              : 'no figures yet (Google reports only domains with enough mail to Gmail)'}
          </p>
        )}
        {feeds.snds && snds.length > 0 && (
          <div class="table-wrap" tabIndex={0} role="region" aria-label={`SNDS: ${verdicts.domain}`}>
            <table class="table responsive-table">
              <caption class="visually-hidden">
                Microsoft SNDS days of the addresses {verdicts.domain} sends from
              </caption>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Address</th>
                  <th scope="col">Filter result</th>
                  <th scope="col">Complaint rate</th>
                  <th scope="col">Trap hits</th>
                  <th scope="col">Recipients</th>
                </tr>
              </thead>
              <tbody>
                {snds.slice(0, 50).map((row) => (
                  <tr key={`${row.day} ${row.ip}`}>
                    <th scope="row">{formatDay(row.day)}</th>
                    <td data-label="Address">{row.ip}</td>
                    <td data-label="Filter result">{row.filterResult}</td>
                    <td data-label="Complaint rate">{row.complaintRate}</td>
                    <td data-label="Trap hits">{formatNumber(row.trapHits)}</td>
                    <td data-label="Recipients">{formatNumber(row.messageRecipients)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {feeds.snds && feeds.snds.setAside.count > 0 && (
          <p class="muted">
            SNDS: {feeds.snds.setAside.count === 1 ? '1 line' : `${formatNumber(feeds.snds.setAside.count)} lines`} of
            the last 30 days could not be read and were set aside (the latest: {feeds.snds.setAside.latestReason}).
          </p>
        )}
        {feeds.snds && snds.length === 0 && (
          <p class="muted">SNDS: no figures for the addresses this domain's DMARC reports name.</p>
        )}
      </div>
    </Card>
  );
}
