import { Editable } from '../components/editable.js';
import { useState } from 'preact/hooks';
import type { Analytics, DashboardStats, Mailbox, Reputation } from '../api.js';
import { api } from '../api.js';
import { COLORS, Chart, scoreRange } from '../components/chart.js';
import { DnsLine } from '../components/dns-status.js';
import { HeadlineFigures } from '../components/headline.js';
import { OnboardingChecklist, checklistShown } from '../components/onboarding-checklist.js';
import { IconAlert, IconCheck, IconMailbox, IconPlus, IconTrendDown } from '../components/icons.js';
import {
  Card,
  EmptyState,
  ErrorBox,
  Link,
  Loading,
  PageHeader,
  Segmented,
  StatCard,
  ReputationLegend,
  reputationTone,
} from '../components/ui.js';
import { PERIODS, countNoun, formatNumber, formatPercent, formatSigned, periodLabel, type Period } from '../format.js';
import { useResource, useTitle, type Resource } from '../hooks.js';

interface AttentionItem {
  mailboxId: string;
  email: string;
  kind: Mailbox['outlook']['attention'][number]['kind'];
  detail: string;
}

/** The attention list of every mailbox, as the API defines it (the same list its detail page shows). */
async function loadAttention(): Promise<{ total: number; items: AttentionItem[] }> {
  const list = await api.mailboxes({ limit: 100 });
  const items = list.mailboxes.flatMap((m: Mailbox) =>
    m.outlook.attention.map((a) => ({ mailboxId: m.id, email: m.email, kind: a.kind, detail: a.message })),
  );
  return { total: list.pagination.total, items };
}

/** What keeps the others from warming up, by the server's states: "2 held back, 1 stopped". */
function heldHint(s: DashboardStats): string {
  const held = s.states.held_by_pool + s.states.held_by_spam;
  const parts = [
    held > 0 && `${held} held back`,
    s.states.stopped > 0 && `${s.states.stopped} stopped`,
    s.states.paused > 0 && `${s.states.paused} paused`,
    s.states.joining > 0 && `${s.states.joining} joining`,
  ].filter((part): part is string => typeof part === 'string');
  return parts.length > 0 ? parts.join(', ') : 'on track now';
}

/** A chart card of the selected period, with the state of the resource it shows. */
type PeriodCardProps<T> = { period: Period } & Resource<T>;

function ReputationCard({ period, data, error, loading, reload }: PeriodCardProps<Reputation>) {
  const label = periodLabel(period);
  return (
    <Card
      title="Reputation"
      subtitle={`Average score of your mailboxes, last ${label}`}
      class="span-2"
      actions={
        data &&
        data.current !== null && (
          <div class="headline-figure">
            <span class={`headline-value tone-${reputationTone(data.current)}`}>{data.current}</span>
            {data.change !== null && (
              <span class={`change ${data.change > 0 ? 'up' : data.change < 0 ? 'down' : ''}`}>
                {formatSigned(data.change)}
              </span>
            )}
          </div>
        )
      }
    >
      {error ? (
        <ErrorBox error={error} onRetry={reload} title="Could not load the reputation history" />
      ) : !data ? (
        <Loading label="Loading the reputation chart" rows={4} />
      ) : (
        <div class={loading ? 'is-refreshing' : ''}>
          <Chart
            dates={data.history.map((h) => h.date)}
            series={[
              { label: 'Reputation', color: COLORS.primary, kind: 'area', values: data.history.map((h) => h.score) },
            ]}
            yRange={scoreRange(data.history.map((h) => h.score))}
            label={
              data.current === null
                ? `No reputation score yet for the last ${label}.`
                : `Reputation over the last ${label}: now ${data.current}, ${formatSigned(data.change ?? 0)} over the period.`
            }
          />
          <ReputationLegend />
        </div>
      )}
    </Card>
  );
}

function PlacementCard({ period, data, error, loading, reload }: PeriodCardProps<Analytics>) {
  const label = periodLabel(period);
  return (
    <Card title="Inbox vs spam" subtitle={`Where your warmup mail landed, by day, last ${label}`} class="span-3">
      {error ? (
        <ErrorBox error={error} onRetry={reload} title="Could not load the placement chart" />
      ) : !data ? (
        <Loading label="Loading the placement chart" rows={4} />
      ) : (
        <div class={`placement ${loading ? 'is-refreshing' : ''}`}>
          <dl class="figures">
            <div>
              <dt>Inbox rate</dt>
              <dd>{formatPercent(data.rates.inboxRate)}</dd>
            </div>
            <div>
              <dt>Spam rate</dt>
              <dd class={data.rates.spamRate > 10 ? 'tone-bad' : ''}>{formatPercent(data.rates.spamRate)}</dd>
            </div>
            <div>
              <dt>Rescued from spam</dt>
              <dd>{formatNumber(data.totals.rescued)}</dd>
            </div>
            <div>
              <dt>Moved to Primary (Gmail)</dt>
              <dd>{formatNumber(data.totals.promotedToPrimary)}</dd>
            </div>
            <div>
              <dt>Sent</dt>
              <dd>{formatNumber(data.totals.sent)}</dd>
            </div>
            <div>
              <dt>Reply rate</dt>
              <dd>{formatPercent(data.rates.replyRate)}</dd>
            </div>
          </dl>
          <Chart
            dates={data.daily.map((d) => d.date)}
            stacked
            series={[
              { label: 'Inbox', color: COLORS.inbox, kind: 'bars', values: data.daily.map((d) => d.inbox) },
              { label: 'Spam', color: COLORS.spam, kind: 'bars', values: data.daily.map((d) => d.spam) },
            ]}
            label={`Placement over the last ${label}: ${data.totals.inbox} in the inbox, ${data.totals.spam} in spam; inbox rate ${formatPercent(data.rates.inboxRate)}.`}
          />
        </div>
      )}
    </Card>
  );
}

const STOPPING = new Set<AttentionItem['kind']>(['stopped', 'stopped_by_guard']);

type Attention = Resource<{ total: number; items: AttentionItem[] }>;

/**
 * "Stopped: <address> — <why, and what to do>", above the fold beside the pool and DNS lines: the
 * attention card lies below the charts' row, out of a laptop's first screen.
 */
function StoppedLine({ items }: { items: AttentionItem[] }) {
  const stopped = items.filter((item) => STOPPING.has(item.kind));
  const first = stopped[0];
  if (!first) return null;
  const more = stopped.length - 1;
  return (
    <p class="pool-line pool-line-bad" data-testid="stopped-line">
      <strong>Stopped:</strong> {first.email} — {first.detail}{' '}
      <Link to={`/mailboxes/${encodeURIComponent(first.mailboxId)}`}>Open {first.email}</Link>
      {more > 0 && `, and ${countNoun(more, 'more mailboxes')} stopped: see Needs attention below.`}
    </p>
  );
}

function AttentionCard({ attention }: { attention: Attention }) {
  const data = attention.data;
  return (
    <Card
      title="Needs attention"
      subtitle="Stopped or slowed, spam over 10 %, bounces, a pool too small, not in the pool"
      class="span-1 attention-card"
    >
      {attention.error ? (
        <ErrorBox error={attention.error} onRetry={attention.reload} title="Could not check your mailboxes" />
      ) : !data ? (
        <Loading label="Checking your mailboxes" rows={3} />
      ) : data.total === 0 ? (
        <p class="muted">Nothing to check yet: no mailbox is connected.</p>
      ) : data.items.length === 0 ? (
        <div class="all-good">
          <span class="all-good-icon">
            <IconCheck size={20} />
          </span>
          <div>
            <strong>
              {data.total === 1 ? 'Your mailbox is' : `All ${data.total} mailboxes are`} within every threshold
            </strong>
            <p>No error, no spam over 10 %, no bounce this week, and the pool is large enough.</p>
          </div>
        </div>
      ) : (
        <ul class="attention-list">
          {data.items.map((item) => (
            <li
              key={`${item.kind}-${item.mailboxId}`}
              class={`attention-item attention-${STOPPING.has(item.kind) ? 'error' : 'falling'}`}
            >
              <span class="attention-icon">
                {STOPPING.has(item.kind) ? <IconAlert size={16} /> : <IconTrendDown size={16} />}
              </span>
              <div>
                <Link to={`/mailboxes/${encodeURIComponent(item.mailboxId)}`} class="attention-email">
                  {item.email}
                </Link>
                <p>{item.detail}</p>
              </div>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

export function OverviewPage() {
  useTitle('Overview');
  const [period, setPeriod] = useState<Period>('30d');
  const stats = useResource(() => api.dashboard(), []);
  const reputation = useResource(() => api.reputation({ period }), [period]);
  const analytics = useResource(() => api.analytics({ period }), [period]);
  const headline = useResource(() => api.dashboard({ period }), [period]);
  const onboarding = useResource(() => api.onboarding(), []);
  const dns = useResource(() => api.mailboxDnsStatus(), []);
  const attention = useResource(loadAttention, []);
  const s = stats.data;
  const noMailboxes = s !== undefined && s.totalMailboxes === 0;
  const spamHeld = s?.states.held_by_spam ?? 0;

  return (
    <>
      <PageHeader
        title="Overview"
        subtitle="How your mailboxes are warming up"
        actions={
          <>
            <Segmented label="Period" options={PERIODS} value={period} onChange={setPeriod} />
            <Editable>
              <Link to="/mailboxes/new" class="btn btn-primary">
                <IconPlus size={18} />
                <span>Add mailbox</span>
              </Link>
            </Editable>
          </>
        }
      />
      {stats.error ? (
        <ErrorBox error={stats.error} onRetry={stats.reload} title="Could not load the dashboard figures" />
      ) : noMailboxes ? null : (
        <section class="stats-grid" aria-label="Today at a glance">
          <StatCard
            label="Mailboxes"
            loading={!s}
            value={formatNumber(s?.totalMailboxes)}
            hint={s && `${s.totalMailboxes - s.activeMailboxes} not warming`}
          />
          <StatCard label="Warming up" loading={!s} value={formatNumber(s?.warmingMailboxes)} hint={s && heldHint(s)} />
          <StatCard
            label="Avg reputation"
            loading={!s}
            value={s && s.activeMailboxes > 0 ? s.avgReputation : '–'}
            tone={s && s.activeMailboxes > 0 ? (spamHeld > 0 ? 'bad' : reputationTone(s.avgReputation)) : undefined}
            hint={
              s && s.activeMailboxes > 0
                ? spamHeld > 0
                  ? `of 100, but ${countNoun(spamHeld, 'mailboxes')} held back by spam`
                  : 'of 100, active mailboxes'
                : 'no active mailbox yet'
            }
          />
          <StatCard label="Sent today" loading={!s} value={formatNumber(s?.todaySent)} hint="warmup emails" />
          <StatCard
            label="Received today"
            loading={!s}
            value={formatNumber(s?.todayReceived)}
            hint="from the warmup network"
          />
        </section>
      )}
      {s?.pool && (
        <p class={`pool-line ${s.pool.held > 0 ? 'pool-line-held' : ''}`} data-testid="pool-line">
          {s.pool.text}
        </p>
      )}
      {attention.data && <StoppedLine items={attention.data.items} />}
      {dns.data && <DnsLine statuses={dns.data} />}
      <OnboardingChecklist onboarding={onboarding} />
      {noMailboxes && (onboarding.error || (onboarding.data && !checklistShown(onboarding.data))) && (
        <Card class="onboarding">
          <EmptyState
            icon={<IconMailbox size={28} />}
            title="Connect your first mailbox"
            level={2}
            action={
              <Editable>
                <Link to="/mailboxes/new" class="btn btn-primary">
                  <IconPlus size={18} />
                  <span>Add mailbox</span>
                </Link>
              </Editable>
            }
          >
            Warmup sends a few real emails a day between your mailboxes, rescues them from spam and replies, so
            providers learn to trust your address. Start with two or more mailboxes on different domains.
          </EmptyState>
        </Card>
      )}
      {!noMailboxes && !headline.error && (
        <HeadlineFigures headline={headline.data?.headline} periodLabel={periodLabel(period)} />
      )}
      {!noMailboxes && (
        <div class="grid-3">
          <ReputationCard period={period} {...reputation} />
          <AttentionCard attention={attention} />
          <PlacementCard period={period} {...analytics} />
        </div>
      )}
    </>
  );
}
