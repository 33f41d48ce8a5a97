import type PDFDocument from 'pdfkit';
import { daysBetween } from '../calendar.js';
import type { StatsReport } from './stats.service.js';

/*
 * The PDF report a user sends to a client: title and period, the headline numbers, a reputation
 * line chart and an inbox-vs-spam chart (vector paths, crisp at any zoom), then the per-mailbox
 * table over as many pages as it needs, every page numbered. Only the PDF standard fonts are used,
 * so nothing is embedded and the file stays small.
 */

const PAGE = { width: 595.28, height: 841.89 }; // A4 in points
const MARGIN = 48;
const CONTENT_WIDTH = PAGE.width - 2 * MARGIN;
const FOOTER_Y = PAGE.height - 34;
const BOTTOM = PAGE.height - 60;

const COLOR = {
  text: '#111827',
  muted: '#6b7280',
  faint: '#9ca3af',
  rule: '#e5e7eb',
  panel: '#f9fafb',
  accent: '#2563eb',
  inbox: '#16a34a',
  spam: '#dc2626',
};

const FONT = { regular: 'Helvetica', bold: 'Helvetica-Bold' };
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

type Doc = PDFKit.PDFDocument;

function formatDay(day: string, withYear = true): string {
  const [year, month, date] = day.split('-');
  return `${Number(date)} ${MONTHS[Number(month) - 1]}${withYear ? ` ${year}` : ''}`;
}

function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

/** "1 reply", "3 replies". */
function countOf(value: number, one: string, many: string): string {
  return `${formatCount(value)} ${value === 1 ? one : many}`;
}

function formatPercent(value: number): string {
  return `${value.toFixed(1)}%`;
}

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

/**
 * The text cut to fit `width` in the current font, with an ellipsis. pdfkit would wrap a long
 * word (an email address) onto a second line instead, even with lineBreak off.
 */
function fit(doc: Doc, text: string, width: number): string {
  if (doc.widthOfString(text) <= width) return text;
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (doc.widthOfString(`${text.slice(0, middle)}…`) <= width) low = middle;
    else high = middle - 1;
  }
  return `${text.slice(0, low)}…`;
}

function header(doc: Doc, report: StatsReport): number {
  const days = daysBetween(report.range.startDate, report.range.endDate) + 1;
  doc.rect(0, 0, PAGE.width, 6).fill(COLOR.accent);
  doc.font(FONT.bold).fontSize(9).fillColor(COLOR.accent).text('WARMUP', MARGIN, 34, { characterSpacing: 1.5 });
  doc
    .font(FONT.regular)
    .fontSize(8.5)
    .fillColor(COLOR.muted)
    .text(`Generated ${formatDay(report.generatedAt.slice(0, 10))}`, MARGIN, 35, {
      width: CONTENT_WIDTH,
      align: 'right',
    });
  doc.font(FONT.bold).fontSize(24).fillColor(COLOR.text).text('Deliverability report', MARGIN, 54);
  const scope =
    report.mailboxId === null
      ? report.workspaceName
      : `${report.workspaceName} · ${report.mailboxes[0]?.email ?? report.mailboxId}`;
  const period = `${formatDay(report.range.startDate)} – ${formatDay(report.range.endDate)} (${days} ${days === 1 ? 'day' : 'days'})`;
  doc.font(FONT.regular).fontSize(11).fillColor(COLOR.muted);
  doc.text(`${fit(doc, scope, CONTENT_WIDTH - doc.widthOfString(period) - 30)}   |   ${period}`, MARGIN, 86, {
    width: CONTENT_WIDTH,
    lineBreak: false,
  });
  doc
    .moveTo(MARGIN, 110)
    .lineTo(PAGE.width - MARGIN, 110)
    .lineWidth(0.75)
    .strokeColor(COLOR.rule)
    .stroke();
  return 124;
}

function kpiCards(doc: Doc, report: StatsReport, top: number): number {
  const lastScore = [...report.daily].reverse().find((row) => row.reputation !== null)?.reputation ?? null;
  const { totals, rates } = report;
  const cards: Array<{ label: string; value: string; note: string; color?: string }> = [
    { label: 'Emails sent', value: formatCount(totals.sent), note: `${formatCount(totals.received)} received` },
    {
      label: 'Inbox rate',
      value: formatPercent(rates.inboxRate),
      note: `${formatCount(totals.inbox)} in the inbox`,
      color: COLOR.inbox,
    },
    {
      label: 'Spam rate',
      value: formatPercent(rates.spamRate),
      note: `${formatCount(totals.spam)} in spam, ${formatCount(totals.rescued)} rescued`,
      color: COLOR.spam,
    },
    {
      label: 'Reputation',
      value: lastScore === null ? '–' : `${lastScore}`,
      note: 'score out of 100',
      color: COLOR.accent,
    },
    {
      label: 'Open rate',
      value: formatPercent(rates.openRate),
      note: `${formatCount(totals.opened)} opened, ${formatCount(totals.flagged)} flagged`,
    },
    { label: 'Reply rate', value: formatPercent(rates.replyRate), note: countOf(totals.replied, 'reply', 'replies') },
    { label: 'Bounce rate', value: formatPercent(rates.bounceRate), note: `${formatCount(totals.bounced)} bounced` },
    {
      label: 'Other placement',
      value: formatCount(totals.promotions + totals.other),
      // Gmail's tabs count as promotions; the second line is how many of those its recipients took to Primary
      note: `${formatCount(totals.promotions)} promotions, ${formatCount(totals.other)} other\n${formatCount(totals.promotedToPrimary)} moved to Primary`,
    },
  ];
  const perRow = 4;
  const gap = 10;
  const width = (CONTENT_WIDTH - gap * (perRow - 1)) / perRow;
  const height = 64;
  cards.forEach((card, index) => {
    const x = MARGIN + (index % perRow) * (width + gap);
    const y = top + Math.floor(index / perRow) * (height + gap);
    doc.roundedRect(x, y, width, height, 4).fillAndStroke(COLOR.panel, COLOR.rule);
    if (card.color) doc.rect(x, y + 4, 2.5, height - 8).fill(card.color);
    doc
      .font(FONT.regular)
      .fontSize(8)
      .fillColor(COLOR.muted)
      .text(card.label.toUpperCase(), x + 10, y + 9, { width: width - 16, characterSpacing: 0.4 });
    doc
      .font(FONT.bold)
      .fontSize(17)
      .fillColor(COLOR.text)
      .text(card.value, x + 10, y + 21, { width: width - 16, lineBreak: false });
    // Up to two lines: large counts make the notes long.
    doc
      .font(FONT.regular)
      .fontSize(7.5)
      .fillColor(COLOR.muted)
      .text(card.note, x + 10, y + 42, { width: width - 16, height: 20, ellipsis: true });
  });
  return top + 2 * height + gap + 20;
}

interface Plot {
  x: number;
  y: number;
  width: number;
  height: number;
}

function sectionTitle(doc: Doc, title: string, subtitle: string, top: number): number {
  doc.font(FONT.bold).fontSize(12).fillColor(COLOR.text).text(title, MARGIN, top);
  doc
    .font(FONT.regular)
    .fontSize(8.5)
    .fillColor(COLOR.muted)
    .text(subtitle, MARGIN, top + 16, { width: CONTENT_WIDTH });
  return top + 34;
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

function reputationChart(doc: Doc, report: StatsReport, top: number, plotHeight: number): number {
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

function placementChart(doc: Doc, report: StatsReport, top: number, plotHeight: number): number {
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

interface Column {
  title: string;
  width: number;
  align: 'left' | 'right';
  value: (row: StatsReport['mailboxes'][number]) => string;
}

const COLUMNS: Column[] = [
  { title: 'Mailbox', width: 146, align: 'left', value: (row) => row.email },
  { title: 'Status', width: 44, align: 'left', value: (row) => row.status },
  { title: 'Sent', width: 40, align: 'right', value: (row) => formatCount(row.sent) },
  { title: 'Received', width: 48, align: 'right', value: (row) => formatCount(row.received) },
  { title: 'Inbox', width: 42, align: 'right', value: (row) => formatPercent(row.rates.inboxRate) },
  { title: 'Spam', width: 42, align: 'right', value: (row) => formatPercent(row.rates.spamRate) },
  { title: 'Opened', width: 44, align: 'right', value: (row) => formatCount(row.opened) },
  { title: 'Replied', width: 44, align: 'right', value: (row) => formatCount(row.replied) },
  { title: 'Reputation', width: CONTENT_WIDTH - 450, align: 'right', value: (row) => String(row.reputation) },
];
const ROW_HEIGHT = 17;
const TABLE_TITLE_HEIGHT = 34;
/** A chart's plot height, and what a chart takes around it (its title and date labels). */
const PLOT_HEIGHT = 130;
const MIN_PLOT_HEIGHT = 80;
const CHART_FRAME_HEIGHT = 72;
const CELL_PADDING = 5;

function tableHeader(doc: Doc, top: number): number {
  doc.rect(MARGIN, top, CONTENT_WIDTH, ROW_HEIGHT + 2).fill('#f3f4f6');
  let x = MARGIN;
  for (const column of COLUMNS) {
    doc
      .font(FONT.bold)
      .fontSize(7.5)
      .fillColor(COLOR.muted)
      .text(column.title, x + CELL_PADDING, top + 6, {
        width: column.width - 2 * CELL_PADDING,
        align: column.align,
        lineBreak: false,
      });
    x += column.width;
  }
  return top + ROW_HEIGHT + 2;
}

function mailboxTable(doc: Doc, report: StatsReport, top: number): number {
  top = sectionTitle(
    doc,
    'Mailboxes',
    'Per mailbox over the period; inbox and spam as a share of the mail the peers found. Reputation is the current score.',
    top,
  );
  if (report.mailboxes.length === 0) {
    doc.font(FONT.regular).fontSize(9).fillColor(COLOR.faint).text('No mailboxes in this workspace yet.', MARGIN, top);
    return top + ROW_HEIGHT;
  }
  let y = tableHeader(doc, top);
  report.mailboxes.forEach((row, index) => {
    if (y + ROW_HEIGHT > BOTTOM) {
      doc.addPage();
      y = tableHeader(doc, MARGIN);
    }
    if (index % 2 === 1) doc.rect(MARGIN, y, CONTENT_WIDTH, ROW_HEIGHT).fill(COLOR.panel);
    let x = MARGIN;
    for (const column of COLUMNS) {
      const width = column.width - 2 * CELL_PADDING;
      doc
        .font(column.title === 'Mailbox' ? FONT.bold : FONT.regular)
        .fontSize(8)
        .fillColor(column.title === 'Status' && row.status !== 'active' ? COLOR.spam : COLOR.text);
      doc.text(fit(doc, column.value(row), width), x + CELL_PADDING, y + 5, {
        width,
        align: column.align,
        lineBreak: false,
      });
      x += column.width;
    }
    y += ROW_HEIGHT;
  });
  doc
    .moveTo(MARGIN, y)
    .lineTo(PAGE.width - MARGIN, y)
    .lineWidth(0.5)
    .strokeColor(COLOR.rule)
    .stroke();
  return y;
}

const CHECK_LABELS: Record<string, string> = { mx: 'MX', spf: 'SPF', dmarc: 'DMARC', dkim: 'DKIM' };
const CHECK_STATUS: Record<string, string> = {
  pass: 'passes',
  fail: 'FAILS',
  unreachable: 'not answered',
  skipped: 'not checked',
};

/**
 * The latest DNS checks of each mailbox (the daily run's): each check's verdict and what was
 * found, and for a failing one what to change. Flows over as many pages as it needs.
 */
function checksSection(doc: Doc, report: StatsReport, top: number): number {
  if (report.checks.length === 0) return top;
  if (top + 120 > BOTTOM) {
    doc.addPage();
    top = MARGIN;
  }
  const flow = flowFrom(
    doc,
    sectionTitle(
      doc,
      'DNS checks',
      "The latest daily check of each mailbox's domain: MX, SPF, DMARC and DKIM, with what to change where one fails.",
      top + 16,
    ),
  );
  let mailbox: string | undefined;
  for (const row of report.checks) {
    if (row.mailboxId !== mailbox) {
      mailbox = row.mailboxId;
      flow.gap(6);
      flow.paragraph(row.email, 0, FONT.bold, COLOR.text);
    }
    const failing = row.status === 'fail';
    const line = `${CHECK_LABELS[row.check] ?? row.check} ${CHECK_STATUS[row.status] ?? row.status}: ${row.detail}`;
    flow.paragraph(line, 12, failing ? FONT.bold : FONT.regular, failing ? COLOR.spam : COLOR.text);
    if (failing && row.fix) flow.paragraph(`How to fix: ${row.fix}`, 24, FONT.regular, COLOR.text);
  }
  return flow.y();
}

/** Paragraphs written one under the other from `top`, each on a new page when it would not fit above the footer. */
function flowFrom(doc: Doc, top: number) {
  let y = top;
  return {
    y: () => y,
    gap: (points: number) => {
      y += points;
    },
    paragraph(text: string, indent: number, font: string, color: string) {
      const width = CONTENT_WIDTH - indent;
      doc.font(font).fontSize(8.5);
      if (y + doc.heightOfString(text, { width }) + 4 > BOTTOM) {
        doc.addPage();
        y = MARGIN;
      }
      doc.fillColor(color).text(text, MARGIN + indent, y, { width });
      y = doc.y + 2;
    },
  };
}

/** What a section with nothing to list takes: its title and that in one line. */
const EMPTY_SECTION_HEIGHT = 20;

/** About what the blocklists and placement tests sections take (a test takes a line per provider and two more). */
function latestSectionsHeight(report: StatsReport): number {
  const tests = report.placementTests.reduce((sum, test) => sum + 3 + test.providers.length, 0);
  const listings = report.blocklists.listings.length * 2;
  return 2 * EMPTY_SECTION_HEIGHT + 12 * (tests + listings);
}

/** A section's title on the current page when its first lines fit there, else on a new page. */
function sectionStart(doc: Doc, title: string, subtitle: string, top: number) {
  if (top + 90 > BOTTOM) {
    doc.addPage();
    top = MARGIN - 16;
  }
  return flowFrom(doc, sectionTitle(doc, title, subtitle, top + 16));
}

/** A section with nothing to list: its title and why, in one line (a page of its own would say less). */
function emptySection(doc: Doc, title: string, text: string, top: number): number {
  if (top + EMPTY_SECTION_HEIGHT + 4 > BOTTOM) {
    doc.addPage();
    top = MARGIN - 8;
  }
  doc
    .font(FONT.bold)
    .fontSize(10)
    .fillColor(COLOR.text)
    .text(`${title}: `, MARGIN, top + 8, { continued: true });
  doc.font(FONT.regular).fontSize(8.5).fillColor(COLOR.muted).text(text);
  return doc.y + 2;
}

/** "14 Mar 2026 09:30 UTC". */
function formatTime(iso: string): string {
  return `${formatDay(iso.slice(0, 10))} ${iso.slice(11, 16)} UTC`;
}

const PLACEMENT_WORDS = ['inbox', 'promotions', 'spam', 'other', 'missing', 'pending'] as const;

/** "2 inbox, 0 promotions, 1 spam, 0 missing" (other and pending only when there are some). */
function placementLine(counts: StatsReport['placementTests'][number]['totals']): string {
  return PLACEMENT_WORDS.filter((word) => counts[word] > 0 || (word !== 'other' && word !== 'pending'))
    .map((word) => `${formatCount(counts[word])} ${word}`)
    .join(', ');
}

/** "Receivers: SPF pass 100%, DKIM pass 0%, DMARC pass 0%, spam score 0.4" of the copies found; '' when none was. */
function verdictLine(verdicts: StatsReport['placementTests'][number]['providers'][number]['verdicts']): string {
  if (verdicts.found === 0) return '';
  const share = (label: string, value: number | null) =>
    `${label} ${value === null ? 'not said' : `pass ${formatPercent(value).replace('.0%', '%')}`}`;
  const parts = [share('SPF', verdicts.spfPass), share('DKIM', verdicts.dkimPass), share('DMARC', verdicts.dmarcPass)];
  if (verdicts.averageSpamScore !== null) parts.push(`spam score ${verdicts.averageSpamScore}`);
  if (verdicts.averageScl !== null) parts.push(`SCL ${verdicts.averageScl}`);
  return `Receivers: ${parts.join(', ')}`;
}

/**
 * The placement tests of the user's own copy made in the period: each test's subject, sender and
 * when, and per receiving provider where its copies landed.
 */
function placementTestsSection(doc: Doc, report: StatsReport, top: number): number {
  if (report.placementTests.length === 0) {
    return emptySection(doc, 'Placement tests', 'No placement test was made in this period.', top);
  }
  const flow = sectionStart(
    doc,
    'Placement tests',
    "Tests of your own copy made in this period: where each receiving provider's seed mailboxes found it.",
    top,
  );
  for (const test of report.placementTests) {
    flow.gap(4);
    flow.paragraph(`"${test.subject}"`, 0, FONT.bold, COLOR.text);
    const when = test.sentAt ? `sent ${formatTime(test.sentAt)}` : `made ${formatTime(test.createdAt)}, not sent`;
    const status = test.status === 'failed' && test.lastError ? `failed (${test.lastError})` : test.status;
    flow.paragraph(`From ${test.sender.email}, ${when}: ${status}`, 12, FONT.regular, COLOR.muted);
    for (const provider of test.providers) {
      const name = PROVIDER_NAMES[provider.provider] ?? provider.provider;
      const spam = provider.spam + provider.missing > 0;
      const verdicts = verdictLine(provider.verdicts);
      flow.paragraph(
        `${name}: ${placementLine(provider)}${verdicts ? `. ${verdicts}` : ''}`,
        12,
        FONT.regular,
        spam ? COLOR.spam : COLOR.text,
      );
    }
  }
  if (report.placementTestsCapped) {
    flow.paragraph(
      `Only the first ${formatCount(report.placementTests.length)} tests of the period are listed.`,
      0,
      FONT.regular,
      COLOR.muted,
    );
  }
  return flow.y();
}

/** What the blocklists say now: each listing with its list, since when and where to ask for removal. */
function blocklistsSection(doc: Doc, report: StatsReport, top: number): number {
  const { listings, answers, unreachable, lastCheckedAt } = report.blocklists;
  if (answers === 0) return emptySection(doc, 'Blocklists', 'No blocklist has been asked yet.', top);
  const asked = `${countOf(answers, 'answer', 'answers')}, last asked ${formatTime(lastCheckedAt ?? report.generatedAt)}`;
  const notAnswered = unreachable > 0 ? `; ${formatCount(unreachable)} not answered, so unknown` : '';
  if (listings.length === 0) {
    return emptySection(doc, 'Blocklists', `Listed on none of the blocklists asked (${asked}${notAnswered}).`, top);
  }
  const flow = sectionStart(
    doc,
    'Blocklists',
    "The latest daily answers of the blocklists about the mailboxes' domains and the addresses their mail was sent from.",
    top,
  );
  flow.paragraph(
    `${countOf(listings.length, 'listing', 'listings')} now (${asked}${notAnswered}):`,
    0,
    FONT.regular,
    COLOR.text,
  );
  for (const listing of listings) {
    const what = listing.kind === 'ip' ? `The address ${listing.subject}` : `The domain ${listing.subject}`;
    const since = listing.listedSince ? ` since ${formatTime(listing.listedSince)}` : '';
    flow.paragraph(
      `${what} (mail of ${listing.email}) is listed on ${listing.zone}${since}.`,
      12,
      FONT.bold,
      COLOR.spam,
    );
    flow.paragraph(
      listing.delistUrl
        ? `Ask for removal at ${listing.delistUrl}`
        : 'The list names no removal page: see its own site.',
      24,
      FONT.regular,
      COLOR.text,
    );
  }
  return flow.y();
}

const PROVIDER_NAMES: Record<string, string> = {
  gmail: 'Gmail',
  outlook: 'Outlook',
  yahoo: 'Yahoo',
  zoho: 'Zoho',
  icloud: 'iCloud',
  fastmail: 'Fastmail',
  custom: 'Other servers',
};

/** About what the provider section takes (one line per provider, a problem two). */
function providerSectionHeight(report: StatsReport): number {
  const lines = Math.max(1, report.byProvider.length + report.verdicts.byProvider.length);
  return 50 + 13 * lines + 26 * report.verdicts.problems.length;
}

/**
 * Per receiving provider: where its mailboxes filed the warmup mail they received, and what the
 * receivers said of the mail (SPF/DKIM/DMARC from their own Authentication-Results), with what fails.
 */
function providerSection(doc: Doc, report: StatsReport, top: number): number {
  const lines = [
    ...report.byProvider.map(
      (p) =>
        `${PROVIDER_NAMES[p.provider] ?? p.provider}: ${formatPercent(p.inboxRate)} inbox of ${countOf(p.total, 'email', 'emails')} received (${formatCount(p.spam)} spam, ${formatCount(p.promotions)} promotions, ${formatCount(p.other)} other)`,
    ),
  ];
  const verdicts = report.verdicts.byProvider.map((p) => `${p.summary} (${countOf(p.total, 'email', 'emails')})`);
  const problems = report.verdicts.problems.map((p) => `${p.message} ${p.fix}`);
  if (top + Math.min(providerSectionHeight(report), 200) > BOTTOM) {
    doc.addPage();
    top = MARGIN;
  }
  let y = sectionTitle(
    doc,
    'By receiving provider',
    'Where each provider filed the warmup mail its mailboxes received, and SPF, DKIM and DMARC as the receivers evaluated the mail sent.',
    top + 12,
  );
  const write = (text: string, color: string, font = FONT.regular) => {
    const height = doc.font(font).fontSize(8.5).heightOfString(text, { width: CONTENT_WIDTH });
    if (y + height > BOTTOM) {
      doc.addPage();
      y = MARGIN;
    }
    doc.fillColor(color).text(text, MARGIN, y, { width: CONTENT_WIDTH });
    y += height + 4;
  };
  if (lines.length === 0 && verdicts.length === 0) {
    write('No warmup mail was found by a receiver in this period yet.', COLOR.faint);
    return y;
  }
  for (const line of lines) write(line, COLOR.text);
  if (verdicts.length > 0) y += 4;
  for (const line of verdicts) write(line, COLOR.text);
  for (const line of problems) write(line, COLOR.spam, FONT.bold);
  return y;
}

function footers(doc: Doc, report: StatsReport): void {
  const { start, count } = doc.bufferedPageRange();
  for (let page = start; page < start + count; page++) {
    doc.switchToPage(page);
    // Writing below the bottom margin would otherwise make pdfkit start a new page.
    const margin = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc.markContent('Artifact', { type: 'Pagination' });
    doc
      .moveTo(MARGIN, FOOTER_Y - 8)
      .lineTo(PAGE.width - MARGIN, FOOTER_Y - 8)
      .lineWidth(0.5)
      .strokeColor(COLOR.rule)
      .stroke();
    doc.font(FONT.regular).fontSize(7.5).fillColor(COLOR.faint);
    const label = `Warmup deliverability report · ${report.workspaceName} · ${report.range.startDate} to ${report.range.endDate}`;
    doc.text(fit(doc, label, CONTENT_WIDTH - 80), MARGIN, FOOTER_Y, { width: CONTENT_WIDTH - 80, lineBreak: false });
    doc.text(`Page ${page - start + 1} of ${count}`, MARGIN, FOOTER_Y, {
      width: CONTENT_WIDTH,
      align: 'right',
      lineBreak: false,
    });
    doc.endMarkedContent();
    doc.page.margins.bottom = margin;
  }
}

let pdfkitLoading: Promise<typeof PDFDocument> | undefined;
/**
 * pdfkit, loaded by the first report rather than at start-up: it costs a process about 20 MB and
 * 0.2 s of CPU, and only the API's PDF export uses it (never a worker or a CLI command).
 */
function pdfkit(): Promise<typeof PDFDocument> {
  pdfkitLoading ??= import('pdfkit').then((module) => module.default);
  return pdfkitLoading;
}

/** The report as a PDF stream; it is complete (ended) when returned, the caller pipes it. */
export async function renderReportPdf(report: StatsReport): Promise<PDFKit.PDFDocument> {
  const PDFDocument = await pdfkit();
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true,
    tagged: true,
    lang: 'en',
    displayTitle: true,
    pdfVersion: '1.7',
    info: {
      Title: `Deliverability report ${report.range.startDate} to ${report.range.endDate}`,
      Author: 'Warmup',
      Subject: report.workspaceName,
      CreationDate: new Date(report.generatedAt),
    },
  });
  // Tagged for screen readers: a structure tree in reading order (headings, figures with their
  // description, the table), the page furniture (footers) marked as artifacts.
  const root = doc.struct('Document');
  doc.addStructure(root);
  const part = (type: string, draw: () => void, alt?: string) =>
    root.add(doc.struct(type, alt ? { alt } : {}, [() => draw()]));

  let y = 0;
  part('Sect', () => {
    y = header(doc, report);
    y = kpiCards(doc, report, y);
  });
  // A short table that would sit alone on a second page fits under smaller charts instead.
  const tableHeight = TABLE_TITLE_HEIGHT + ROW_HEIGHT + 2 + Math.max(1, report.mailboxes.length) * ROW_HEIGHT;
  const room =
    BOTTOM -
    y -
    2 * CHART_FRAME_HEIGHT -
    tableHeight -
    providerSectionHeight(report) -
    (report.checks.length === 0 ? Math.min(latestSectionsHeight(report), 120) : 0);
  const plotHeight = Math.max(MIN_PLOT_HEIGHT, Math.min(PLOT_HEIGHT, Math.floor(room / 2)));
  const scores = report.daily.map((row) => row.reputation).filter((score): score is number => score !== null);
  part(
    'Figure',
    () => {
      y = reputationChart(doc, report, y, plotHeight);
    },
    scores.length === 0
      ? 'Reputation chart: no score in this period yet.'
      : `Reputation chart: from ${scores[0]} to ${scores[scores.length - 1]} out of 100 over the period.`,
  );
  const found = report.daily.reduce((sum, row) => sum + row.inbox + row.spam, 0);
  const spam = report.daily.reduce((sum, row) => sum + row.spam, 0);
  part(
    'Figure',
    () => {
      y = placementChart(doc, report, y, plotHeight);
    },
    `Inbox vs spam chart: ${countOf(found - spam, 'email', 'emails')} in the inbox and ${countOf(spam, 'email', 'emails')} in spam over the period.`,
  );
  part('Table', () => {
    // The table opens a page of its own unless a useful part of it fits under the charts.
    if (y + 120 > BOTTOM && y + tableHeight > BOTTOM) {
      doc.addPage();
      y = MARGIN;
    }
    y = mailboxTable(doc, report, y);
  });
  part('Sect', () => {
    y = providerSection(doc, report, y);
  });
  part('Sect', () => {
    y = checksSection(doc, report, y);
  });
  part('Sect', () => {
    y = blocklistsSection(doc, report, y);
  });
  part('Sect', () => {
    y = placementTestsSection(doc, report, y);
  });
  root.end();
  footers(doc, report);
  doc.end();
  return doc;
}
