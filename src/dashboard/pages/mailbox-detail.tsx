import { useState } from 'preact/hooks';
import type { Interaction, InteractionType, Mailbox, MailboxStats } from '../api.js';
import { api } from '../api.js';
import { COLORS, Chart, scoreRange } from '../components/chart.js';
import { DnsChecksCard } from '../components/dns-checks.js';
import { HumanReplies } from '../components/human-replies.js';
import { MailboxActions } from '../components/mailbox-actions.js';
import { PagedTable } from '../components/paged-table.js';
import { ReceiverVerdicts } from '../components/receiver-verdicts.js';
import {
  Badge,
  Card,
  EmptyState,
  ErrorBox,
  Loading,
  Notice,
  PageHeader,
  RecordPending,
  Segmented,
  StatCard,
  StateBadge,
  ReputationLegend,
  reputationTone,
} from '../components/ui.js';
import { FilterSelect } from '../components/fields.js';
import {
  PERIODS,
  PROVIDER_NAMES,
  formatDateTime,
  formatNumber,
  formatPercent,
  languageName,
  periodLabel,
  relativeTime,
  type Period,
} from '../format.js';
import { useResource, useTitle } from '../hooks.js';
import { navigate } from '../router.js';

const TYPE_OPTIONS: Array<{ value: '' | InteractionType; label: string }> = [
  { value: '', label: 'All activity' },
  { value: 'sent', label: 'Sent' },
  { value: 'received', label: 'Received' },
  { value: 'opened', label: 'Opened' },
  { value: 'replied', label: 'Replied' },
  { value: 'rescued', label: 'Rescued from spam' },
  { value: 'flagged', label: 'Flagged' },
  { value: 'bounced', label: 'Bounced' },
  { value: 'failed', label: 'Failed' },
];

const TYPE_TONE: Record<InteractionType, 'neutral' | 'blue' | 'green' | 'red' | 'amber' | 'violet'> = {
  sent: 'blue',
  received: 'violet',
  opened: 'neutral',
  flagged: 'amber',
  rescued: 'green',
  replied: 'green',
  bounced: 'red',
  failed: 'red',
};

function security(server: Mailbox['imap']): string {
  return server.secure ? 'SSL/TLS' : 'STARTTLS';
}

function Charts({ stats, period }: { stats: MailboxStats; period: Period }) {
  const days = stats.daily.map((d) => d.date);
  const label = periodLabel(period);
  return (
    <>
      <Card title="Reputation" subtitle={`Daily score, last ${label}`}>
        <Chart
          dates={days}
          yRange={scoreRange(stats.daily.map((d) => d.reputation))}
          series={[
            { label: 'Reputation', color: COLORS.primary, kind: 'area', values: stats.daily.map((d) => d.reputation) },
          ]}
          label={`Reputation of this mailbox over the last ${label}; now ${stats.reputation}.`}
          height={220}
        />
        <ReputationLegend />
      </Card>
      <Card title="Volume" subtitle={`Warmup emails sent and received, last ${label}`}>
        <Chart
          dates={days}
          series={[
            { label: 'Sent', color: COLORS.primary, kind: 'line', values: stats.daily.map((d) => d.sent) },
            { label: 'Received', color: COLORS.secondary, kind: 'line', values: stats.daily.map((d) => d.received) },
          ]}
          label={`Sent ${stats.totals.sent} and received ${stats.totals.received} warmup emails over the last ${label}.`}
          height={220}
        />
      </Card>
      <Card title="Inbox vs spam" subtitle="Where peers found the mail this mailbox sent">
        <Chart
          dates={days}
          stacked
          series={[
            { label: 'Inbox', color: COLORS.inbox, kind: 'bars', values: stats.daily.map((d) => d.inbox) },
            { label: 'Spam', color: COLORS.spam, kind: 'bars', values: stats.daily.map((d) => d.spam) },
          ]}
          label={`${stats.totals.inbox} found in the inbox and ${stats.totals.spam} in spam over the last ${label}.`}
          height={220}
        />
      </Card>
    </>
  );
}

function InteractionLog({ mailboxId, next }: { mailboxId: string; next: string }) {
  const [type, setType] = useState('');
  const [page, setPage] = useState(1);
  const log = useResource(
    () => api.interactions(mailboxId, { page, limit: 20, type: type || undefined }),
    [mailboxId, page, type],
  );
  return (
    <Card
      title="Activity"
      subtitle="Every warmup email this mailbox sent or received, and what happened to it"
      bodyClass="flush"
      actions={
        <FilterSelect
          label="Activity type"
          value={type}
          options={TYPE_OPTIONS}
          onValue={(value) => {
            setType(value);
            setPage(1);
          }}
        />
      }
    >
      <PagedTable
        list={log}
        items={(data) => data.interactions}
        row={(entry: Interaction) => (
          <tr key={entry.id}>
            <td data-label="When" class="nowrap">
              {formatDateTime(entry.occurredAt)}
            </td>
            <td data-label="Event">
              <Badge tone={TYPE_TONE[entry.type] ?? 'neutral'}>
                {TYPE_OPTIONS.find((t) => t.value === entry.type)?.label ?? entry.type}
              </Badge>
            </td>
            <td data-label="With" class="truncate">
              {entry.counterpart ?? '–'}
            </td>
            <td data-label="Subject" class="truncate subject-cell">
              {entry.subject ?? '–'}
            </td>
            <td data-label="Placement" class={entry.placement ? undefined : 'placement-none'}>
              {entry.placement ? (
                <Badge tone={entry.placement === 'inbox' ? 'green' : entry.placement === 'spam' ? 'red' : 'neutral'}>
                  {entry.placement}
                </Badge>
              ) : (
                <span class="muted">–</span>
              )}
            </td>
          </tr>
        )}
        columns={['When', 'Event', 'With', 'Subject', 'Placement']}
        caption="Activity"
        tableClass="table responsive-table log-table"
        noun="events"
        errorTitle="Could not load the activity"
        loadingLabel="Loading activity"
        onPage={setPage}
        empty={
          <EmptyState title={type ? 'Nothing of this type yet' : 'No activity yet'}>
            {type ? 'Try another activity type.' : next}
          </EmptyState>
        }
      />
    </Card>
  );
}

const SHOWN_ELSEWHERE = new Set(['stopped', 'stopped_by_guard', 'not_in_pool', 'pool_too_small', 'paused_for_dns']);

export function MailboxDetailPage({ id }: { id: string }) {
  const mailbox = useResource(() => api.mailbox(id), [id]);
  const [period, setPeriod] = useState<Period>('30d');
  const stats = useResource(() => api.mailboxStats(id, { period }), [id, period, mailbox.data?.updatedAt]);
  useTitle(mailbox.data?.email ?? 'Mailbox');

  const m = mailbox.data;
  if (!m) {
    return (
      <RecordPending
        title="Mailbox"
        noun="mailbox"
        back={{ to: '/mailboxes', label: 'Mailboxes' }}
        error={mailbox.error}
        onRetry={mailbox.reload}
        loadingRows={4}
      />
    );
  }
  const s = stats.data;
  // stopped, not in the pool and a pool too small have their own notice or line above
  const otherAttention = m.outlook.attention.filter((a) => !SHOWN_ELSEWHERE.has(a.kind));
  const pausedForDns = m.status === 'paused' && m.outlook.attention.some((a) => a.kind === 'paused_for_dns');
  const stopped = m.outlook.state.kind === 'stopped';
  return (
    <>
      <PageHeader
        back={{ to: '/mailboxes', label: 'Mailboxes' }}
        title={<span class="break-anywhere">{m.email}</span>}
        subtitle={
          <span class="subtitle-row">
            <StateBadge state={m.outlook.state} />
            <span>{m.name ?? 'No sender name'}</span>
            <span aria-hidden="true">·</span>
            <span>{PROVIDER_NAMES[m.provider] ?? m.provider}</span>
            <span aria-hidden="true">·</span>
            <span>synced {relativeTime(m.lastSyncAt)}</span>
          </span>
        }
        actions={
          <MailboxActions
            mailbox={m}
            onChanged={mailbox.set}
            onDeleted={() => navigate('/mailboxes', { replace: true })}
          />
        }
      />
      {m.outlook.state.kind === 'stopped' && (
        <Notice
          tone="error"
          title={
            m.outlook.state.since
              ? `Warmup stopped ${relativeTime(m.outlook.state.since)} (${formatDateTime(m.outlook.state.since)})`
              : 'Warmup is stopped for this mailbox'
          }
        >
          <p>{m.outlook.state.reason}</p>
          <p>
            Often the app password was revoked: enter a new one under Warmup settings and warmup starts again. Otherwise
            fix the cause and retry.
          </p>
        </Notice>
      )}
      {m.status === 'paused' && !pausedForDns && (
        <Notice tone="info">Warmup is paused. The ramp-up continues where it stopped when you resume.</Notice>
      )}
      {pausedForDns && (
        <Notice tone="error" title="Warmup is paused until SPF and DMARC pass">
          <p>{m.lastError}</p>
          <p>The DNS checks below say what to change. Warmup resumes by itself within an hour of the fix.</p>
        </Notice>
      )}
      {m.status === 'active' && !m.pool.member && (
        <Notice tone="info" title="Not in the warmup pool yet">
          <p>{m.pool.reason}.</p>
          <p>
            It neither sends nor receives warmup mail until a test message it sends to itself arrives. The engine tries
            again by itself; changing the password or servers tries at once.
          </p>
        </Notice>
      )}

      {m.autoReply && (
        <Notice tone="info" title="Receives no warmup mail while it answers automatically">
          <p>{m.autoReply.reason}</p>
          <p>Its automatic replies were filed into the Warmup folder of the mailboxes that received them.</p>
        </Notice>
      )}
      <HumanReplies mailboxId={m.id} />
      <section class="outlook card" aria-labelledby="outlook-title">
        <h2 id="outlook-title" class="section-title">
          Status
        </h2>
        <p class="outlook-summary" data-testid="outlook-summary">
          {m.outlook.summary}
        </p>
        {(m.outlook.state.kind === 'held_by_pool' || m.outlook.state.kind === 'held_by_spam') && (
          <p class="outlook-limit" data-testid="outlook-state-reason">
            {m.outlook.state.reason}
          </p>
        )}
        {otherAttention.length > 0 && (
          <ul class="outlook-attention" aria-label="Needs attention">
            {otherAttention.map((a) => (
              <li key={a.kind}>{a.message}</li>
            ))}
          </ul>
        )}
        <p class={`outlook-ready ${m.outlook.readyForCampaigns ? 'tone-good' : ''}`} data-testid="outlook-readiness">
          {m.outlook.readiness}
        </p>
      </section>

      <div class="section-bar">
        <h2 class="section-title">Performance</h2>
        <Segmented label="Period" options={PERIODS} value={period} onChange={setPeriod} />
      </div>
      {stats.error ? (
        <ErrorBox error={stats.error} onRetry={stats.reload} title="Could not load the statistics" />
      ) : (
        <div class={stopped ? 'is-stale' : ''}>
          {stopped && (
            <p class="stale-note" data-testid="stale-note">
              Figures from before it stopped
              {m.outlook.state.since ? ` on ${formatDateTime(m.outlook.state.since)}` : ''}: nothing has been sent or
              read since.
            </p>
          )}
          <h3 class="mini-title stats-heading">{stopped ? 'Its warmup before it stopped' : 'Its warmup today'}</h3>
          <section
            class="stats-grid stats-grid-4"
            aria-label={stopped ? 'Mailbox figures from before it stopped' : 'Its warmup today'}
          >
            <StatCard
              label="Reputation"
              loading={!s}
              value={s?.reputation ?? '–'}
              tone={s && !stopped ? reputationTone(s.reputation) : undefined}
              hint={stopped ? 'of 100, before it stopped' : 'of 100'}
            />
            <StatCard
              label="Warmup day"
              loading={!s}
              value={s?.warmupDay ?? '–'}
              hint={`daily limit ${m.warmup.dailyLimit}`}
            />
            <StatCard
              label="Sent today"
              loading={!s}
              value={s ? `${s.todaySent} / ${m.status === 'active' ? s.dailyTarget : '–'}` : '–'}
              hint="of today's target"
            />
            <StatCard label="Received today" loading={!s} value={formatNumber(s?.todayReceived)} hint="from peers" />
          </section>
          {/* Apart from the day's counts: these rates are of the mail it sent, as its peers found and answered it. */}
          <h3 class="mini-title stats-heading">Its mail at the peers, last {periodLabel(period)}</h3>
          <section class="stats-grid stats-grid-2" aria-label="Its mail at the peers">
            <StatCard
              label="Inbox rate"
              loading={!s}
              value={formatPercent(s?.rates.inboxRate)}
              tone={s && !stopped && s.rates.inboxRate >= 90 ? 'good' : undefined}
              hint={`spam ${formatPercent(s?.rates.spamRate)}${stopped ? ', before it stopped' : ''}`}
            />
            <StatCard
              label="Replied to by peers"
              loading={!s}
              value={formatPercent(s?.rates.replyRate)}
              hint={`opened by peers ${formatPercent(s?.rates.openRate)}`}
            />
          </section>
        </div>
      )}
      <div class={`grid-2 detail-grid ${stats.loading && s ? 'is-refreshing' : ''}`}>
        {s ? (
          <Charts stats={s} period={period} />
        ) : (
          !stats.error && (
            <Card title="Charts">
              <Loading label="Loading the charts" rows={5} />
            </Card>
          )
        )}
        <Card title="Connection & settings" class="connection-card">
          <dl class="details-list">
            <div>
              <dt>IMAP</dt>
              <dd>
                <code>
                  {m.imap.host}:{m.imap.port}
                </code>{' '}
                {security(m.imap)}
              </dd>
            </div>
            <div>
              <dt>SMTP</dt>
              <dd>
                <code>
                  {m.smtp.host}:{m.smtp.port}
                </code>{' '}
                {security(m.smtp)}
              </dd>
            </div>
            <div>
              <dt>Ramp-up</dt>
              <dd>
                {m.warmup.startVolume} a day, +{m.warmup.rampUpIncrement} daily, up to {m.warmup.dailyLimit}
              </dd>
            </div>
            <div>
              <dt>Replies</dt>
              <dd>{m.warmup.replyRate}% of received warmup mail</dd>
            </div>
            <div>
              <dt>Send window</dt>
              <dd>
                {m.warmup.sendWindow.start}–{m.warmup.sendWindow.end} {m.warmup.timezone}
                {m.warmup.weekdaysOnly ? ', weekdays' : ''}
              </dd>
            </div>
            <div>
              <dt>Language</dt>
              <dd>{languageName(m.warmup.language)}</dd>
            </div>
            <div>
              <dt>Connected</dt>
              <dd>{formatDateTime(m.createdAt)}</dd>
            </div>
          </dl>
        </Card>
      </div>
      <DnsChecksCard mailboxId={m.id} />
      <ReceiverVerdicts mailboxId={m.id} period={period} />
      <InteractionLog mailboxId={m.id} next={m.outlook.summary} />
    </>
  );
}
