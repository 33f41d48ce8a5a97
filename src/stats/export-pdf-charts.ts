// The two charts of the PDF report, drawn as vector paths: reputation by day, and inbox vs spam.
import type { StatsReport } from './stats.service.js';
import {
  PAGE,
  MARGIN,
  CONTENT_WIDTH,
  COLOR,
  FONT,
  type Doc,
  formatDay,
  formatCount,
  sectionTitle,
} from './export-pdf-layout.js';

/** Axis ticks for counts: a whole step of 1, 2 or 5 times a power of ten, about five of them, from 0 past `value`. */
function countTicks(value: number): number[] {
  const raw = Math.max(1, value / 5);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((f) => f * power).find((candidate) => candidate >= raw)!;
  const top = Math.max(step, Math.ceil(value / step) * step);
  const ticks: number[] = [];
  for (let tick = 0; tick <= top; tick += step) ticks.push(tick);
  return ticks;
}

interface Plot {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Horizontal grid lines with their labels on the left, and date labels under the plot. */
function axes(
  doc: Doc,
  plot: Plot,
  ticks: number[],
  max: number,
  days: string[],
  format: (value: number) => string,
): void {
  doc.lineWidth(0.5);
  for (const tick of ticks) {
    const y = plot.y + plot.height - (tick / max) * plot.height;
    doc
      .moveTo(plot.x, y)
      .lineTo(plot.x + plot.width, y)
      .strokeColor(tick === 0 ? COLOR.faint : COLOR.rule)
      .stroke();
    doc
      .font(FONT.regular)
      .fontSize(7)
      .fillColor(COLOR.muted)
      .text(format(tick), plot.x - 34, y - 3.5, { width: 28, align: 'right', lineBreak: false });
  }
  const labels = Math.min(days.length, 7);
  const step = labels <= 1 ? 1 : (days.length - 1) / (labels - 1);
  const slot = plot.width / days.length;
  for (let i = 0; i < labels; i++) {
    const index = Math.round(i * step);
    const center = plot.x + slot * (index + 0.5);
    const width = 60;
    const left = Math.min(Math.max(center - width / 2, plot.x - 10), plot.x + plot.width - width + 10);
    doc
      .font(FONT.regular)
      .fontSize(7)
      .fillColor(COLOR.muted)
      .text(formatDay(days[index]!, false), left, plot.y + plot.height + 6, {
        width,
        align: 'center',
        lineBreak: false,
      });
  }
}

export function reputationChart(doc: Doc, report: StatsReport, top: number, plotHeight: number): number {
  top = sectionTitle(
    doc,
    'Reputation',
    'Daily score out of 100 (mean of the mailboxes); a day without a new score keeps the last one.',
    top,
  );
  const plot: Plot = { x: MARGIN + 36, y: top + 4, width: CONTENT_WIDTH - 36, height: plotHeight };
  const days = report.daily.map((row) => row.date);
  axes(doc, plot, [0, 25, 50, 75, 100], 100, days, (value) => String(value));
  const slot = plot.width / days.length;
  const point = (index: number, score: number): [number, number] => [
    plot.x + slot * (index + 0.5),
    plot.y + plot.height - (score / 100) * plot.height,
  ];

  // Runs of consecutive known scores: an unknown day breaks the line instead of dropping to zero.
  const runs: Array<Array<[number, number]>> = [];
  let run: Array<[number, number]> = [];
  report.daily.forEach((row, index) => {
    if (row.reputation === null) {
      if (run.length > 0) runs.push(run);
      run = [];
    } else {
      run.push(point(index, row.reputation));
    }
  });
  if (run.length > 0) runs.push(run);

  if (runs.length === 0) {
    doc
      .font(FONT.regular)
      .fontSize(9)
      .fillColor(COLOR.faint)
      .text('No reputation score in this period yet', plot.x, plot.y + plot.height / 2 - 5, {
        width: plot.width,
        align: 'center',
      });
  }
  const baseline = plot.y + plot.height;
  for (const points of runs) {
    const [first] = points;
    const last = points[points.length - 1]!;
    doc.save();
    doc.moveTo(first![0], baseline);
    for (const [x, y] of points) doc.lineTo(x, y);
    doc.lineTo(last[0], baseline).closePath().fillOpacity(0.1).fill(COLOR.accent);
    doc.restore();
    if (points.length === 1) {
      doc.circle(first![0], first![1], 2).fill(COLOR.accent);
      continue;
    }
    doc.moveTo(first![0], first![1]);
    for (const [x, y] of points.slice(1)) doc.lineTo(x, y);
    doc.lineWidth(1.6).lineJoin('round').lineCap('round').strokeColor(COLOR.accent).stroke();
  }
  return plot.y + plot.height + 34;
}

export function placementChart(doc: Doc, report: StatsReport, top: number, plotHeight: number): number {
  top = sectionTitle(doc, 'Inbox vs spam', 'Where the peers found the mail sent each day.', top);
  const legendY = top - 30;
  for (const [index, [label, color]] of (
    [
      ['Inbox', COLOR.inbox],
      ['Spam', COLOR.spam],
    ] as const
  ).entries()) {
    const x = PAGE.width - MARGIN - 110 + index * 58;
    doc.rect(x, legendY + 1, 8, 8).fill(color);
    doc
      .font(FONT.regular)
      .fontSize(8.5)
      .fillColor(COLOR.text)
      .text(label, x + 12, legendY, { lineBreak: false });
  }
  const plot: Plot = { x: MARGIN + 36, y: top + 4, width: CONTENT_WIDTH - 36, height: plotHeight };
  const days = report.daily.map((row) => row.date);
  const ticks = countTicks(Math.max(0, ...report.daily.map((row) => row.inbox + row.spam)));
  const max = ticks[ticks.length - 1]!;
  axes(doc, plot, ticks, max, days, formatCount);
  const slot = plot.width / days.length;
  const barWidth = Math.max(0.6, slot * 0.7);
  const baseline = plot.y + plot.height;
  report.daily.forEach((row, index) => {
    const x = plot.x + slot * index + (slot - barWidth) / 2;
    const inbox = (row.inbox / max) * plot.height;
    const spam = (row.spam / max) * plot.height;
    if (inbox > 0) doc.rect(x, baseline - inbox, barWidth, inbox).fill(COLOR.inbox);
    if (spam > 0) doc.rect(x, baseline - inbox - spam, barWidth, spam).fill(COLOR.spam);
  });
  return plot.y + plot.height + 34;
}
/** A chart's plot height, and what a chart takes around it (its title and date labels). */
export const PLOT_HEIGHT = 130;
export const MIN_PLOT_HEIGHT = 80;
export const CHART_FRAME_HEIGHT = 72;
