import { useState } from 'preact/hooks';
import type { PeriodQuery } from '../api.js';
import { api } from '../api.js';
import { ProviderMap } from '../components/provider-map.js';
import { IconDownload } from '../components/icons.js';
import { toast } from '../components/toasts.js';
import {
  Button,
  Card,
  EmptyState,
  ErrorBox,
  Link,
  Loading,
  PageHeader,
  Segmented,
  StatCard,
  StatusBadge,
} from '../components/ui.js';
import { TextField } from '../components/fields.js';
import { daysAgoUtc, formatDay, formatNumber, formatSigned, todayUtc } from '../format.js';
import { useResource, useTitle } from '../hooks.js';

type Choice = '7d' | '30d' | '90d' | 'custom';
type Format = 'csv' | 'json' | 'pdf';

const CHOICES: Array<{ value: Choice; label: string }> = [
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: '90d', label: '90 days' },
  { value: 'custom', label: 'Custom' },
];

const FORMATS: Array<{ format: Format; label: string; description: string }> = [
  { format: 'csv', label: 'CSV', description: 'One row per mailbox per day, for spreadsheets' },
  { format: 'json', label: 'JSON', description: 'The same rows, for scripts' },
  { format: 'pdf', label: 'PDF', description: 'A report with totals, a chart and a table' },
];

function ExportCard() {
  const [choice, setChoice] = useState<Choice>('30d');
  const [startDate, setStartDate] = useState(daysAgoUtc(29));
  const [endDate, setEndDate] = useState(todayUtc());
  const [busy, setBusy] = useState<Format>();
  const [error, setError] = useState<unknown>();
  const rangeProblem =
    choice === 'custom' && (!startDate || !endDate || startDate > endDate)
      ? 'The start must be on or before the end.'
      : undefined;

  async function download(format: Format) {
    if (rangeProblem) return;
    const period: PeriodQuery = choice === 'custom' ? { startDate, endDate } : { period: choice };
    setBusy(format);
    setError(undefined);
    try {
      const name = await api.downloadExport(format, period);
      toast(`Downloaded ${name}`);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(undefined);
    }
  }

  return (
    <Card title="Export statistics" subtitle="Daily figures for every mailbox, for the period you choose">
      <div class="export-period">
        <Segmented label="Export period" options={CHOICES} value={choice} onChange={setChoice} />
        {choice === 'custom' && (
          <div class="form-grid range-grid">
            <TextField
              label="From"
              type="date"
              name="startDate"
              value={startDate}
              max={endDate || undefined}
              onValue={setStartDate}
            />
            <TextField
              label="To"
              type="date"
              name="endDate"
              value={endDate}
              min={startDate || undefined}
              max={todayUtc()}
              onValue={setEndDate}
              error={rangeProblem}
            />
          </div>
        )}
      </div>
      <ul class="export-list">
        {FORMATS.map((item) => (
          <li key={item.format} class="export-item">
            <div>
              <strong>{item.label}</strong>
              <span class="muted">{item.description}</span>
            </div>
            <Button
              icon={<IconDownload size={16} />}
              loading={busy === item.format}
              disabled={busy !== undefined || rangeProblem !== undefined}
              onClick={() => download(item.format)}
            >
              Download {item.label}
            </Button>
          </li>
        ))}
      </ul>
      <div aria-live="assertive">{error !== undefined && <ErrorBox error={error} title="The export failed" />}</div>
    </Card>
  );
}

/** The summary table's right-aligned figures, after the mailbox and its status. */
const NUMBER_COLUMNS = ['Sent', 'Received', 'Inbox', 'Spam', 'Replied', 'Reputation'];

function SummaryCard() {
  const [date, setDate] = useState(todayUtc());
  const summary = useResource(() => api.dailySummary(date || undefined), [date]);
  const s = summary.data;
  return (
    <Card
      title="Daily summary"
      subtitle={s ? formatDay(s.date) : 'One day across the workspace'}
      actions={
        <TextField
          class="compact-field"
          label="Day"
          type="date"
          name="summaryDate"
          value={date}
          max={todayUtc()}
          onValue={setDate}
        />
      }
    >
      {summary.error ? (
        <ErrorBox error={summary.error} onRetry={summary.reload} title="Could not load the summary" />
      ) : !s ? (
        <Loading label="Loading the summary" rows={4} />
      ) : (
        <div class={summary.loading ? 'is-refreshing' : ''}>
          <section class="stats-grid stats-grid-4" aria-label="The day's figures">
            <StatCard label="Sent" value={formatNumber(s.sent)} hint={`${formatNumber(s.received)} received`} />
            <StatCard
              label="Inbox"
              value={formatNumber(s.inbox)}
              tone={s.inbox > 0 ? 'good' : undefined}
              hint={`${formatNumber(s.spam)} in spam`}
            />
            <StatCard
              label="Rescued"
              value={formatNumber(s.rescued)}
              hint={`${formatNumber(s.opened)} opened, ${formatNumber(s.replied)} replied`}
            />
            <StatCard
              label="Reputation change"
              value={s.reputationChange === 0 ? 'No change' : formatSigned(s.reputationChange)}
              tone={s.reputationChange > 0 ? 'good' : s.reputationChange < 0 ? 'bad' : undefined}
              hint={`${s.activeMailboxes} active · ${s.pausedMailboxes} paused · ${s.errorMailboxes} stopped`}
            />
          </section>
          {s.mailboxes.length === 0 ? (
            <EmptyState title="No mailboxes on this day" />
          ) : (
            <div class="table-wrap">
              <table class="table responsive-table summary-table">
                <caption class="visually-hidden">Mailboxes on {formatDay(s.date)}</caption>
                <thead>
                  <tr>
                    <th scope="col">Mailbox</th>
                    <th scope="col">Status</th>
                    {NUMBER_COLUMNS.map((heading) => (
                      <th key={heading} scope="col" class="num">
                        {heading}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {s.mailboxes.map((m) => (
                    <tr key={m.mailboxId}>
                      <td class="cell-primary">
                        <Link to={`/mailboxes/${encodeURIComponent(m.mailboxId)}`} class="row-title">
                          {m.email}
                        </Link>
                      </td>
                      <td data-label="Status">
                        <StatusBadge status={m.status} />
                      </td>
                      <td data-label="Sent" class="num">
                        {m.sent}
                      </td>
                      <td data-label="Received" class="num">
                        {m.received}
                      </td>
                      <td data-label="Inbox" class="num">
                        {m.inbox}
                      </td>
                      <td data-label="Spam" class={`num ${m.spam > 0 ? 'tone-bad' : ''}`}>
                        {m.spam}
                      </td>
                      <td data-label="Replied" class="num">
                        {m.replied}
                      </td>
                      <td data-label="Reputation" class="num">
                        {m.reputation ?? '–'}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
    </Card>
  );
}

export function ReportsPage() {
  useTitle('Reports');
  return (
    <>
      <PageHeader title="Reports" subtitle="Download your deliverability data, or look back at a single day" />
      <div class="stack">
        <ExportCard />
        <ProviderMap />
        <SummaryCard />
      </div>
    </>
  );
}
