import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatDay, formatNumber } from '../format.js';

export interface ChartSeries {
  label: string;
  color: string;
  values: Array<number | null>;
  /** `area` is a line with a soft fill under it. */
  kind?: 'line' | 'area' | 'bars';
  format?: (value: number) => string;
}

export interface ChartProps {
  /** Calendar days (`YYYY-MM-DD`, UTC), one per point. */
  dates: string[];
  series: ChartSeries[];
  /** What the chart shows, for screen readers (the chart itself is a canvas). */
  label: string;
  height?: number;
  /** Fixed y range, e.g. [0, 100] for scores. */
  yRange?: [number, number];
  /** Bars stack on each other in series order (first at the bottom). */
  stacked?: boolean;
}

const AXIS = {
  stroke: '#667085',
  font: '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  grid: '#eef0f4',
};
const DAY = 86_400;

function toSeconds(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) / 1000;
}

const shortDay = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

/** A 0..100 score axis that starts a little below the lowest score, so changes stay visible. */
export function scoreRange(values: Array<number | null>): [number, number] {
  const known = values.filter((v): v is number => v !== null);
  if (known.length === 0) return [0, 100];
  return [Math.max(0, Math.floor((Math.min(...known) - 10) / 10) * 10), 100];
}

function alpha(hex: string, opacity: number): string {
  const value = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(value >> 16) & 255}, ${(value >> 8) & 255}, ${value & 255}, ${opacity})`;
}

/** A hover card with the day and every series' value, in the order the legend shows them. */
function tooltipPlugin(dates: string[], series: ChartSeries[]): uPlot.Plugin {
  let tip: HTMLDivElement;
  return {
    hooks: {
      init: (u) => {
        tip = document.createElement('div');
        tip.className = 'chart-tooltip';
        tip.hidden = true;
        u.over.append(tip);
      },
      setCursor: (u) => {
        const index = u.cursor.idx;
        const left = u.cursor.left ?? -1;
        if (index === null || index === undefined || left < 0) {
          tip.hidden = true;
          return;
        }
        tip.replaceChildren();
        const title = document.createElement('div');
        title.className = 'chart-tooltip-title';
        title.textContent = formatDay(dates[index] ?? '');
        tip.append(title);
        for (const s of series) {
          const row = document.createElement('div');
          row.className = 'chart-tooltip-row';
          const swatch = document.createElement('span');
          swatch.className = 'swatch';
          swatch.style.background = s.color;
          const name = document.createElement('span');
          name.textContent = s.label;
          const value = document.createElement('strong');
          const raw = s.values[index];
          value.textContent = raw === null || raw === undefined ? '–' : (s.format ?? formatNumber)(raw);
          row.append(swatch, name, value);
          tip.append(row);
        }
        tip.hidden = false;
        const width = u.over.clientWidth;
        const tipWidth = tip.offsetWidth;
        const x = left + 14 + tipWidth > width ? left - tipWidth - 14 : left + 14;
        tip.style.left = `${Math.max(0, x)}px`;
        tip.style.top = '8px';
      },
    },
  };
}

function buildOptions(props: ChartProps, width: number): uPlot.Options {
  const { series, dates, height = 240, yRange, stacked } = props;
  const hasBars = series.some((s) => s.kind === 'bars');
  // Stacked bars are drawn as running totals, tallest first, so each shorter one sits in front.
  const drawn = stacked ? [...series].reverse() : series;
  const barWidth = dates.length > 45 ? 0.8 : 0.6;
  return {
    width,
    height,
    padding: [12, 18, 0, 0],
    legend: { show: false },
    cursor: { drag: { x: false, y: false }, points: { size: 7 } },
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
    scales: {
      x: { time: true, range: hasBars ? (_u, min, max) => [min - DAY / 2, max + DAY / 2] : undefined },
      y: yRange
        ? { range: () => yRange }
        : { range: (_u, _min, max) => [0, Math.max(4, Math.ceil((max * 1.15) / 2) * 2)] },
    },
    axes: [
      {
        stroke: AXIS.stroke,
        font: AXIS.font,
        grid: { show: false },
        ticks: { show: false },
        space: 64,
        size: 34,
        values: (_u, splits) => splits.map((seconds) => shortDay.format(new Date(seconds * 1000))),
      },
      {
        stroke: AXIS.stroke,
        font: AXIS.font,
        grid: { stroke: AXIS.grid, width: 1 },
        ticks: { show: false },
        size: 40,
        space: 36,
      },
    ],
    series: [
      {},
      ...drawn.map((s): uPlot.Series => ({
        label: s.label,
        stroke: s.kind === 'bars' ? undefined : s.color,
        width: s.kind === 'bars' ? 0 : 2,
        fill: s.kind === 'bars' ? s.color : s.kind === 'area' ? alpha(s.color, 0.1) : undefined,
        paths: s.kind === 'bars' ? uPlot.paths.bars!({ size: [barWidth, 28], gap: 1 }) : undefined,
        // a line needs two days to be drawn: a day standing alone is drawn as a dot
        points: {
          show: s.kind !== 'bars' && s.values.some((v, i) => isLone(s.values, i) && v !== null),
          size: 8,
          fill: s.color,
          filter: (_u, _seriesIdx, show) =>
            show ? s.values.flatMap((_v, i) => (isLone(s.values, i) ? [i] : [])) : null,
        },
        spanGaps: true,
      })),
    ],
    plugins: [tooltipPlugin(dates, series)],
  };
}

/** A value with no neighbour to draw a line to. */
function isLone(values: Array<number | null>, i: number): boolean {
  const known = (j: number) => values[j] !== null && values[j] !== undefined;
  if (!known(i)) return false;
  const before = values.slice(0, i).some((_v, j) => known(j));
  const after = values.slice(i + 1).some((_v, j) => known(i + 1 + j));
  return !before && !after;
}

function buildData(props: ChartProps): uPlot.AlignedData {
  const xs = props.dates.map(toSeconds);
  if (!props.stacked) return [xs, ...props.series.map((s) => s.values)];
  const totals: number[][] = [];
  let running = props.dates.map(() => 0);
  for (const s of props.series) {
    running = running.map((sum, i) => sum + (s.values[i] ?? 0));
    totals.push(running);
  }
  return [xs, ...totals.reverse()];
}

/** A responsive uPlot chart over calendar days, with a legend and a hover card. */
export function Chart(props: ChartProps) {
  const holder = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  // Callers build their series inline; redraw when what is drawn changes, not on every render.
  const drawnKey = JSON.stringify([
    props.dates,
    props.series.map((s) => [s.label, s.color, s.kind, s.values]),
    props.yRange,
    props.stacked,
    props.height,
  ]);

  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    plot.current?.destroy();
    plot.current = new uPlot(buildOptions(props, element.clientWidth || 600), buildData(props), element);
    const observer = new ResizeObserver(() => {
      const width = element.clientWidth;
      if (plot.current && width > 0 && width !== plot.current.width)
        plot.current.setSize({ width, height: props.height ?? 240 });
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [drawnKey]);

  return (
    <figure class="chart">
      <div class="chart-legend" aria-hidden="true">
        {props.series.map((s) => (
          <span key={s.label} class="legend-item">
            <span class={`swatch ${s.kind === 'bars' ? '' : 'swatch-line'}`} style={{ background: s.color }} />
            {s.label}
          </span>
        ))}
      </div>
      <div
        ref={holder}
        class="chart-canvas"
        role="img"
        aria-label={props.label}
        style={{ minHeight: `${props.height ?? 240}px` }}
      />
      {/* the hover card is for a mouse; the same figures for the keyboard and screen readers */}
      <details class="chart-data">
        <summary>Show the figures</summary>
        <div class="table-wrap" tabIndex={0} role="region" aria-label={`${props.label} As a table`}>
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Day</th>
                {props.series.map((s) => (
                  <th key={s.label} scope="col" class="num">
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {props.dates.map((date, i) => (
                <tr key={date}>
                  <th scope="row">{formatDay(date)}</th>
                  {props.series.map((s) => {
                    const value = s.values[i];
                    return (
                      <td key={s.label} class="num">
                        {value === null || value === undefined ? '–' : (s.format ?? formatNumber)(value)}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

export const COLORS = {
  primary: '#3b5bdb',
  secondary: '#91a7ff',
  inbox: '#12b76a',
  spam: '#f04438',
  amber: '#f79009',
};
