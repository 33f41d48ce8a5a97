// The inbox map per receiving provider (GET /api/stats/placement, byProvider): where Gmail, Outlook,
// Yahoo and the other servers of the pool filed the warmup mail their mailboxes received.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { PERIODS, PROVIDER_NAMES, formatPercent, periodLabel, type Period } from '../format.js';
import { useResource } from '../hooks.js';
import { Card, ErrorBox, Loading, Segmented } from './ui.js';

export function ProviderMap() {
  const [period, setPeriod] = useState<Period>('30d');
  const placement = useResource(() => api.placement({ period }), [period]);
  const rows = placement.data?.byProvider ?? [];
  return (
    <Card
      title="Placement by receiving provider"
      subtitle="Where each provider's mailboxes filed the warmup mail they received. On Gmail, the Promotions, Updates, Social and Forums tabs count as promotions, and Primary as inbox. Outlook's Focused and Other both count as inbox: IMAP cannot tell them apart."
      actions={<Segmented label="Period" options={PERIODS} value={period} onChange={setPeriod} />}
      bodyClass={rows.length > 0 ? 'flush' : undefined}
    >
      {placement.error ? (
        <ErrorBox error={placement.error} onRetry={placement.reload} title="Could not load the placement" />
      ) : !placement.data ? (
        <Loading label="Loading the placement" rows={3} />
      ) : rows.length === 0 ? (
        <p class="muted">No warmup mail was found in the last {periodLabel(period)}.</p>
      ) : (
        <table class="table responsive-table">
          <caption class="visually-hidden">Placement by receiving provider</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Found</th>
              <th scope="col">Inbox</th>
              <th scope="col">Spam</th>
              <th scope="col">Promotions</th>
              <th scope="col">Other</th>
              <th scope="col">Inbox rate</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => (
              <tr key={p.provider} data-testid="provider-row">
                <td data-label="Provider">{PROVIDER_NAMES[p.provider] ?? p.provider}</td>
                <td data-label="Found">{p.total}</td>
                <td data-label="Inbox">{p.inbox}</td>
                <td data-label="Spam">{p.spam}</td>
                <td data-label="Promotions">{p.promotions}</td>
                <td data-label="Other">{p.other}</td>
                <td data-label="Inbox rate">{formatPercent(p.inboxRate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}
