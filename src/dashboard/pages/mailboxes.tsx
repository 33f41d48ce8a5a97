import { useState } from 'preact/hooks';
import type { Mailbox, MailboxDnsStatus } from '../api.js';
import { api } from '../api.js';
import { DnsStatusBadge } from '../components/dns-status.js';
import { IconMailbox, IconPlus } from '../components/icons.js';
import { Editable } from '../components/editable.js';
import { MailboxActions } from '../components/mailbox-actions.js';
import { ACTIONS_COLUMN, PagedTable } from '../components/paged-table.js';
import {
  Card,
  EmptyState,
  Link,
  PageHeader,
  Progress,
  ReputationLegend,
  ReputationMeter,
  Skeleton,
  StateBadge,
} from '../components/ui.js';
import { FilterSelect, SearchInput } from '../components/fields.js';
import { PROVIDER_NAMES, countNoun, formatNumber, relativeTime } from '../format.js';
import { useDebounced, useResource, useTitle, type Resource } from '../hooks.js';

const STATUS_FILTERS = [
  { value: '', label: 'All statuses' },
  { value: 'active', label: 'Warming up' },
  { value: 'paused', label: 'Paused' },
  { value: 'error', label: 'Needs attention' },
];

/** Today's sends against the day's target; the count comes from the mailbox's own stats. */
function TodayVolume({ mailbox }: { mailbox: Mailbox }) {
  const stats = useResource(() => api.mailboxStats(mailbox.id, { period: '7d' }), [mailbox.id, mailbox.updatedAt]);
  if (stats.error)
    return (
      <span class="muted" title={stats.error.message}>
        –
      </span>
    );
  if (!stats.data) return <Skeleton height={12} width="70px" />;
  const sent = stats.data.todaySent;
  const target = mailbox.status === 'active' ? mailbox.dailyTarget : 0;
  return (
    <span class="volume">
      <span class="volume-figures">
        <strong>{formatNumber(sent)}</strong>
        <span class="muted"> / {target > 0 ? formatNumber(target) : '–'}</span>
      </span>
      <Progress
        value={sent}
        max={Math.max(target, sent, 1)}
        label={`${sent} of ${countNoun(target, 'emails')} sent today`}
      />
    </span>
  );
}

/** The mailbox's DNS status, from the one request of the whole list. */
function DnsCell({ mailboxId, statuses }: { mailboxId: string; statuses: Resource<MailboxDnsStatus[]> }) {
  if (statuses.error)
    return (
      <span class="muted" title={statuses.error.message}>
        –
      </span>
    );
  if (!statuses.data) return <Skeleton height={12} width="70px" />;
  const status = statuses.data.find((s) => s.mailboxId === mailboxId);
  // a mailbox connected since the statuses were read has not been checked yet
  return status ? <DnsStatusBadge status={status} /> : <span class="muted">Not checked yet</span>;
}

function MailboxRow({
  mailbox,
  dns,
  onChanged,
  onDeleted,
}: {
  mailbox: Mailbox;
  dns: Resource<MailboxDnsStatus[]>;
  onChanged: (m: Mailbox) => void;
  onDeleted: () => void;
}) {
  const href = `/mailboxes/${encodeURIComponent(mailbox.id)}`;
  const state = mailbox.outlook.state;
  return (
    <tr>
      <td class="cell-primary">
        <Link to={href} class="row-title">
          {mailbox.email}
        </Link>
        <span class="row-sub">
          {mailbox.name ? `${mailbox.name} · ` : ''}
          {PROVIDER_NAMES[mailbox.provider] ?? mailbox.provider}
        </span>
      </td>
      <td data-label="Status">
        <div class="cell-stack">
          <StateBadge state={state} />
          {state.kind === 'stopped' && (
            <span class="row-error" title={state.reason}>
              {state.since ? `Since ${relativeTime(state.since)}: ` : ''}
              {state.reason}
            </span>
          )}
          {state.kind === 'joining' && (
            <span class="row-sub" title={mailbox.pool.reason ?? undefined}>
              Not in the pool yet
            </span>
          )}
        </div>
      </td>
      <td data-label="DNS">
        <DnsCell mailboxId={mailbox.id} statuses={dns} />
      </td>
      <td data-label="Reputation">
        {state.kind === 'stopped' ? (
          <div class="cell-stack is-stale">
            <ReputationMeter score={mailbox.reputation} />
            <span class="row-sub">before it stopped</span>
          </div>
        ) : (
          <ReputationMeter score={mailbox.reputation} />
        )}
      </td>
      <td data-label="Sent today">
        <TodayVolume mailbox={mailbox} />
      </td>
      <td data-label="Warmup">
        <div class="cell-stack">
          <span>{mailbox.warmupDay > 0 ? `Day ${mailbox.warmupDay}` : 'Starting'}</span>
          <span class="row-sub outlook-line">
            {state.kind === 'held_by_pool' || state.kind === 'held_by_spam' ? state.reason : mailbox.outlook.summary}
          </span>
          <span class="row-sub">synced {relativeTime(mailbox.lastSyncAt)}</span>
        </div>
      </td>
      <td class="cell-actions">
        <MailboxActions mailbox={mailbox} compact onChanged={onChanged} onDeleted={onDeleted} />
      </td>
    </tr>
  );
}

export function MailboxesPage() {
  useTitle('Mailboxes');
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState('');
  const [search, setSearch] = useState('');
  const q = useDebounced(search.trim(), 300);
  const list = useResource(
    () => api.mailboxes({ page, limit: 20, status: status || undefined, q: q || undefined }),
    [page, status, q],
  );
  const dns = useResource(() => api.mailboxDnsStatus(), []);
  const filtered = status !== '' || q !== '';

  function replace(updated: Mailbox) {
    if (!list.data) return;
    list.set({ ...list.data, mailboxes: list.data.mailboxes.map((m) => (m.id === updated.id ? updated : m)) });
  }

  return (
    <>
      <PageHeader
        title="Mailboxes"
        subtitle="Every connected mailbox, its health and today's warmup volume"
        actions={
          <Editable>
            <Link to="/mailboxes/new" class="btn btn-primary">
              <IconPlus size={18} />
              <span>Add mailbox</span>
            </Link>
          </Editable>
        }
      />
      <Card bodyClass="flush">
        <div class="toolbar">
          <SearchInput
            id="mailbox-search"
            label="Search mailboxes"
            placeholder="Search by address or name"
            value={search}
            onValue={(text) => {
              setSearch(text);
              setPage(1);
            }}
          />
          <FilterSelect
            label="Status"
            value={status}
            options={STATUS_FILTERS}
            onValue={(value) => {
              setStatus(value);
              setPage(1);
            }}
          />
        </div>
        <PagedTable
          list={list}
          items={(data) => data.mailboxes}
          row={(mailbox) => (
            <MailboxRow key={mailbox.id} mailbox={mailbox} dns={dns} onChanged={replace} onDeleted={list.reload} />
          )}
          columns={['Mailbox', 'Status', 'DNS', 'Reputation', 'Sent today', 'Warmup', ACTIONS_COLUMN]}
          caption="Mailboxes"
          tableClass="table responsive-table mailbox-table"
          noun="mailboxes"
          errorTitle="Could not load your mailboxes"
          loadingLabel="Loading mailboxes"
          onPage={setPage}
          empty={
            filtered ? (
              <EmptyState title="No mailbox matches">Try another search or status.</EmptyState>
            ) : (
              <EmptyState
                icon={<IconMailbox size={28} />}
                title="No mailboxes yet"
                action={
                  <Editable>
                    <Link to="/mailboxes/new" class="btn btn-primary">
                      <IconPlus size={18} />
                      <span>Add mailbox</span>
                    </Link>
                  </Editable>
                }
              >
                Connect a mailbox with an app password; Warmup starts with a couple of emails a day and ramps up from
                there.
              </EmptyState>
            )
          }
        />
        {list.data && list.data.mailboxes.length > 0 && (
          <div class="legend-footer">
            <ReputationLegend />
          </div>
        )}
      </Card>
    </>
  );
}
