// The overview's headline figures as Plausible shows them: the value of the period, then an arrow
// and its change against the period before, coloured by whether the change is good (a falling spam
// rate is); no change is said in words, not as "±0".
import type { DashboardStats } from '../api.js';
import { formatNumber, formatPercent } from '../format.js';
import { Skeleton } from './ui.js';

type Headline = NonNullable<DashboardStats['headline']>;

interface Figure {
  label: string;
  value: string;
  /** The change, in the figure's unit; null when the period before has nothing to compare with. */
  change: number | null;
  unit: '%' | ' pts' | '';
  /** True when a rise is good news (inbox rate), false when it is bad (spam rate). */
  riseIsGood: boolean;
}

function figuresOf(headline: Headline): Figure[] {
  const { current, change } = headline;
  return [
    {
      label: 'Inbox rate',
      value: formatPercent(current.inboxRate),
      change: change.inboxRate,
      unit: ' pts',
      riseIsGood: true,
    },
    {
      label: 'Spam rate',
      value: formatPercent(current.spamRate),
      change: change.spamRate,
      unit: ' pts',
      riseIsGood: false,
    },
    { label: 'Sent', value: formatNumber(current.sent), change: change.sent, unit: '%', riseIsGood: true },
    {
      label: 'Reputation',
      value: current.reputation === null ? '–' : String(current.reputation),
      change: change.reputation,
      unit: '',
      riseIsGood: true,
    },
  ];
}

function Change({ figure }: { figure: Figure }) {
  const { change, unit, riseIsGood } = figure;
  if (change === null) return <span class="delta delta-none">nothing to compare with</span>;
  if (change === 0) return <span class="delta delta-flat">no change</span>;
  const good = change > 0 === riseIsGood;
  const size = Number.isInteger(Math.abs(change)) ? Math.abs(change) : Math.abs(change).toFixed(1);
  return (
    <span class={`delta ${good ? 'delta-good' : 'delta-bad'}`}>
      <span aria-hidden="true">{change > 0 ? '↑' : '↓'}</span>
      <span class="visually-hidden">{change > 0 ? 'up' : 'down'}</span> {size}
      {unit}
    </span>
  );
}

/** The four headline figures of the period against the one before it. */
export function HeadlineFigures({ headline, periodLabel }: { headline: Headline | undefined; periodLabel: string }) {
  return (
    <section class="headline-figures" aria-label={`Last ${periodLabel} against the ${periodLabel} before`}>
      {(headline ? figuresOf(headline) : null)?.map((figure) => (
        <div class="headline-figure-card" key={figure.label} data-testid={`headline-${figure.label}`}>
          <div class="stat-label">{figure.label}</div>
          <div class="headline-figure-value">{figure.value}</div>
          <Change figure={figure} />
        </div>
      )) ??
        [0, 1, 2, 3].map((n) => (
          <div class="headline-figure-card" key={n}>
            <Skeleton height={48} />
          </div>
        ))}
      <p class="headline-compare muted">Change against the {periodLabel} before</p>
    </section>
  );
}
