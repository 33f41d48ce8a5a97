import type { DmarcDomainDetail } from '../api.js';
import { api } from '../api.js';
import { ALIGNED_LEGEND, AlignedShare, dispositionText } from '../components/dmarc-figures.js';
import { IconRefresh } from '../components/icons.js';
import { ProviderVerdictsCard } from '../components/provider-verdicts.js';
import { Button, Card, EmptyState, Notice, PageHeader, RecordPending } from '../components/ui.js';
import { countNoun, formatDay, formatNumber } from '../format.js';
import { useResource, useTitle } from '../hooks.js';

type Source = DmarcDomainDetail['sources'][number];

const share = (passed: number, messages: number) => (messages > 0 ? passed / messages : null);

/** "192.0.2.7 (mail.example.net)", or the address alone without a reverse name. */
const sourceName = (source: Source) => (source.name ? `${source.ip} (${source.name})` : source.ip);

/**
 * A source some of whose messages in the domain's name passed neither SPF nor DKIM aligned: either
 * a server of the owner's not yet set up, or someone else sending as the domain. Both read the same
 * in a report, so the fix names both.
 */
function Risks({ domain, sources }: { domain: string; sources: Source[] }) {
  const unaligned = sources.filter((source) => source.dmarcPass < source.messages);
  if (unaligned.length === 0) return null;
  return (
    <Notice
      tone="warning"
      title={unaligned.length === 1 ? 'A source sends unaligned' : `${unaligned.length} sources send unaligned`}
    >
      <ul class="plain-list">
        {unaligned.map((source) => (
          <li key={source.ip}>
            A server at {sourceName(source)} sends as {domain} without passing SPF or DKIM aligned (
            {formatNumber(source.messages - source.dmarcPass)} of {countNoun(source.messages, 'messages')}): if it is
            yours, add it to SPF or sign with DKIM; if not, it is someone sending in your name — move your DMARC policy
            to quarantine once your own servers align.
          </li>
        ))}
      </ul>
    </Notice>
  );
}

function DaysTable({ detail }: { detail: DmarcDomainDetail }) {
  return (
    <Card title="Per day" subtitle="The day a report's range begins (UTC); days without reports are left out">
      <div class="table-wrap" tabIndex={0} role="region" aria-label={`Per day: ${detail.domain}`}>
        <table class="table responsive-table">
          <caption class="visually-hidden">Messages and aligned share of {detail.domain}, per day</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Messages</th>
              <th scope="col">Aligned</th>
              <th scope="col">Reports</th>
            </tr>
          </thead>
          <tbody>
            {[...detail.days].reverse().map((day) => (
              <tr key={day.day}>
                <th scope="row">{formatDay(day.day)}</th>
                <td data-label="Messages">{formatNumber(day.messages)}</td>
                <td data-label="Aligned">
                  <AlignedShare share={share(day.dmarcPass, day.messages)} />
                </td>
                <td data-label="Reports">{formatNumber(day.reports)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted">{ALIGNED_LEGEND}.</p>
    </Card>
  );
}

function SourcesTable({ detail }: { detail: DmarcDomainDetail }) {
  return (
    <Card title="Sources" subtitle="The addresses that sent in the domain's name, the most messages first">
      <div class="table-wrap" tabIndex={0} role="region" aria-label={`Sources: ${detail.domain}`}>
        <table class="table responsive-table">
          <caption class="visually-hidden">The sending addresses of {detail.domain} over the last 30 days</caption>
          <thead>
            <tr>
              <th scope="col">Address</th>
              <th scope="col">Reverse name</th>
              <th scope="col">Messages</th>
              <th scope="col">SPF aligned</th>
              <th scope="col">DKIM aligned</th>
              <th scope="col">Aligned</th>
              <th scope="col">Disposition</th>
            </tr>
          </thead>
          <tbody>
            {detail.sources.map((source) => (
              <tr key={source.ip}>
                <th scope="row" class="break-anywhere">
                  {source.ip}
                </th>
                <td data-label="Reverse name" class="break-anywhere">
                  {source.name ?? '–'}
                </td>
                <td data-label="Messages">{formatNumber(source.messages)}</td>
                <td data-label="SPF aligned">{formatNumber(source.spfAlignedPass)}</td>
                <td data-label="DKIM aligned">{formatNumber(source.dkimAlignedPass)}</td>
                <td data-label="Aligned">
                  <AlignedShare share={share(source.dmarcPass, source.messages)} />
                </td>
                <td data-label="Disposition">{dispositionText(source.dispositions)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Card>
  );
}

export function DomainDetailPage({ domain }: { domain: string }) {
  useTitle(domain);
  const detail = useResource(() => api.dmarcDomain(domain), [domain]);
  const verdicts = useResource(() => api.providerVerdicts(domain), [domain]);
  const back = { to: '/domains', label: 'Domains' };

  if (!detail.data)
    return (
      <RecordPending
        title={domain}
        noun="domain"
        back={back}
        error={detail.error}
        onRetry={detail.reload}
        loadingRows={4}
      />
    );
  const data = detail.data;
  return (
    <div class="stack">
      <PageHeader
        title={data.domain}
        back={back}
        subtitle={`DMARC reports of ${formatDay(data.from)} – ${formatDay(data.to)}`}
        actions={
          <Button
            size="sm"
            icon={<IconRefresh size={14} />}
            onClick={() => {
              detail.reload();
              verdicts.reload();
            }}
          >
            Refresh
          </Button>
        }
      />
      {verdicts.data && <ProviderVerdictsCard verdicts={verdicts.data} />}
      {data.days.length === 0 ? (
        <EmptyState title="No reports for this domain in the last 30 days" level={2}>
          Reports arrive a day or two after the domain's DMARC record names the report mailbox in its <code>rua</code>{' '}
          tag.
        </EmptyState>
      ) : (
        <>
          <Risks domain={data.domain} sources={data.sources} />
          <DaysTable detail={data} />
          <SourcesTable detail={data} />
        </>
      )}
    </div>
  );
}
