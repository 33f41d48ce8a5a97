import type PDFDocument from 'pdfkit';
import { daysBetween } from '../calendar.js';
import type { StatsReport } from './stats.service.js';
import {
  PAGE,
  MARGIN,
  CONTENT_WIDTH,
  FOOTER_Y,
  BOTTOM,
  COLOR,
  FONT,
  type Doc,
  formatDay,
  formatCount,
  countOf,
  formatPercent,
  fit,
  sectionTitle,
} from './export-pdf-layout.js';
import {
  reputationChart,
  placementChart,
  PLOT_HEIGHT,
  MIN_PLOT_HEIGHT,
  CHART_FRAME_HEIGHT,
} from './export-pdf-charts.js';
import {
  checksSection,
  latestSectionsHeight,
  placementTestsSection,
  blocklistsSection,
  providerSectionHeight,
  providerSection,
  providerVerdictsSection,
  statesSection,
} from './export-pdf-sections.js';

/*
 * The PDF report a user sends to a client: title and period, the headline numbers, a reputation
 * line chart and an inbox-vs-spam chart (vector paths, crisp at any zoom), then the per-mailbox
 * table over as many pages as it needs, every page numbered. Only the PDF standard fonts are used,
 * so nothing is embedded and the file stays small. The page and its formats are in
 * export-pdf-layout.ts, the charts in export-pdf-charts.ts, the sections after the table in
 * export-pdf-sections.ts.
 */

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

interface Column {
  title: string;
  width: number;
  align: 'left' | 'right';
  value: (row: StatsReport['mailboxes'][number]) => string;
}

const COLUMNS: Column[] = [
  { title: 'Mailbox', width: 116, align: 'left', value: (row) => row.email },
  { title: 'State', width: 100, align: 'left', value: (row) => row.state.label },
  { title: 'Sent', width: 36, align: 'right', value: (row) => formatCount(row.sent) },
  { title: 'Received', width: 44, align: 'right', value: (row) => formatCount(row.received) },
  { title: 'Inbox', width: 40, align: 'right', value: (row) => formatPercent(row.rates.inboxRate) },
  { title: 'Spam', width: 38, align: 'right', value: (row) => formatPercent(row.rates.spamRate) },
  { title: 'Opened', width: 40, align: 'right', value: (row) => formatCount(row.opened) },
  { title: 'Replied', width: 40, align: 'right', value: (row) => formatCount(row.replied) },
  { title: 'Reputation', width: CONTENT_WIDTH - 454, align: 'right', value: (row) => String(row.reputation) },
];
const ROW_HEIGHT = 17;
const TABLE_TITLE_HEIGHT = 34;
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
      doc.continueOnNewPage();
      y = tableHeader(doc, MARGIN);
    }
    if (index % 2 === 1) doc.rect(MARGIN, y, CONTENT_WIDTH, ROW_HEIGHT).fill(COLOR.panel);
    let x = MARGIN;
    for (const column of COLUMNS) {
      const width = column.width - 2 * CELL_PADDING;
      doc
        .font(column.title === 'Mailbox' ? FONT.bold : FONT.regular)
        .fontSize(8)
        .fillColor(column.title === 'State' && row.state.tone === 'bad' ? COLOR.spam : COLOR.text);
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
  // description, the table), the page furniture (footers) marked as artifacts. Every page break
  // inside a part is continueOnNewPage, never addPage: it closes the part's marked content on the
  // page it began on and reopens it on the next (addPage left a stray EMC on the new page).
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
      doc.continueOnNewPage();
      y = MARGIN;
    }
    y = mailboxTable(doc, report, y);
  });
  part('Sect', () => {
    y = statesSection(doc, report, y);
  });
  part('Sect', () => {
    y = providerSection(doc, report, y);
  });
  part('Sect', () => {
    y = providerVerdictsSection(doc, report, y);
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
