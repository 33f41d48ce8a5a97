// The PDF report's sections after the mailbox table: results by receiving provider, DNS checks,
// blocklist listings, placement tests and what the providers say, each a title and lines that flow over pages.
import { dnsStatus } from '../checks/dns-status.js';
import type { StatsReport } from './stats.service.js';
import {
  MARGIN,
  CONTENT_WIDTH,
  BOTTOM,
  COLOR,
  FONT,
  type Doc,
  formatCount,
  countOf,
  formatPercent,
  sectionTitle,
  flowFrom,
  EMPTY_SECTION_HEIGHT,
  sectionStart,
  emptySection,
  formatTime,
  formatDay,
} from './export-pdf-layout.js';

const CHECK_LABELS: Record<string, string> = { mx: 'MX', spf: 'SPF', dmarc: 'DMARC', dkim: 'DKIM' };
const CHECK_STATUS: Record<string, string> = {
  pass: 'passes',
  fail: 'FAILS',
  unreachable: 'not answered',
  skipped: 'not checked',
};

/**
 * The latest DNS checks of each mailbox (the daily run's): the mailbox's status in the words of the
 * dashboard's DNS column, then each check's verdict and what was found, and for a failing one what
 * to change. Flows over as many pages as it needs.
 */
export function checksSection(doc: Doc, report: StatsReport, top: number): number {
  if (report.checks.length === 0) return top;
  if (top + 120 > BOTTOM) {
    doc.continueOnNewPage();
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
  const checksOf = new Map<string, StatsReport['checks']>();
  for (const row of report.checks) checksOf.set(row.mailboxId, [...(checksOf.get(row.mailboxId) ?? []), row]);
  let mailbox: string | undefined;
  for (const row of report.checks) {
    if (row.mailboxId !== mailbox) {
      mailbox = row.mailboxId;
      const status = dnsStatus(
        checksOf.get(row.mailboxId) ?? [],
        report.blocklists.listings
          .filter((listing) => listing.email === row.email)
          .map((listing) => ({ ...listing, status: 'listed' as const })),
      );
      flow.gap(6);
      flow.paragraph(`${row.email}: ${status.label}`, 0, FONT.bold, status.tone === 'error' ? COLOR.spam : COLOR.text);
    }
    const failing = row.status === 'fail';
    const line = `${CHECK_LABELS[row.check] ?? row.check} ${CHECK_STATUS[row.status] ?? row.status}: ${row.detail}`;
    flow.paragraph(line, 12, failing ? FONT.bold : FONT.regular, failing ? COLOR.spam : COLOR.text);
    if (failing && row.fix) flow.paragraph(`How to fix: ${row.fix}`, 24, FONT.regular, COLOR.text);
  }
  return flow.y();
}

/** About what the blocklists and placement tests sections take (a test takes a line per provider and two more). */
export function latestSectionsHeight(report: StatsReport): number {
  const tests = report.placementTests.reduce((sum, test) => sum + 3 + test.providers.length, 0);
  const listings = report.blocklists.listings.length * 2;
  return 2 * EMPTY_SECTION_HEIGHT + 12 * (tests + listings);
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
export function placementTestsSection(doc: Doc, report: StatsReport, top: number): number {
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
export function blocklistsSection(doc: Doc, report: StatsReport, top: number): number {
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
export function providerSectionHeight(report: StatsReport): number {
  const lines = Math.max(1, report.byProvider.length + report.verdicts.byProvider.length);
  return 50 + 13 * lines + 26 * report.verdicts.problems.length;
}

/**
 * Per receiving provider: where its mailboxes filed the warmup mail they received, and what the
 * receivers said of the mail (SPF/DKIM/DMARC from their own Authentication-Results), with what fails.
 */
export function providerSection(doc: Doc, report: StatsReport, top: number): number {
  const lines = [
    ...report.byProvider.map(
      (p) =>
        `${PROVIDER_NAMES[p.provider] ?? p.provider}: ${formatPercent(p.inboxRate)} inbox of ${countOf(p.total, 'email', 'emails')} received (${formatCount(p.spam)} spam, ${formatCount(p.promotions)} promotions, ${formatCount(p.other)} other)`,
    ),
  ];
  const verdicts = report.verdicts.byProvider.map((p) => `${p.summary} (${countOf(p.total, 'email', 'emails')})`);
  const problems = report.verdicts.problems.map((p) => `${p.message} ${p.fix}`);
  if (top + Math.min(providerSectionHeight(report), 200) > BOTTOM) {
    doc.continueOnNewPage();
    top = MARGIN;
  }
  let y = sectionTitle(
    doc,
    'By receiving provider',
    // one line: the page is planned with one-line subtitles (a longer one wraps and pushes the rest down)
    'Where each provider filed the mail its mailboxes received; SPF, DKIM and DMARC as receivers judged the mail sent.',
    top + 12,
  );
  const write = (text: string, color: string, font = FONT.regular) => {
    const height = doc.font(font).fontSize(8.5).heightOfString(text, { width: CONTENT_WIDTH });
    if (y + height > BOTTOM) {
      doc.continueOnNewPage();
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

/**
 * Every mailbox held back or stopped, with its state, since when, and why and what to do: the words
 * of its page in the dashboard (`outlook.state`), so the report and the pages say the same. Paused
 * and joining mailboxes (a neutral tone) need nothing done and are not listed.
 */
export function statesSection(doc: Doc, report: StatsReport, top: number): number {
  const notOnTrack = report.mailboxes.filter((row) => row.state.tone === 'warn' || row.state.tone === 'bad');
  if (notOnTrack.length === 0) return top;
  const flow = sectionStart(
    doc,
    'What needs doing',
    'Each mailbox held back or stopped today: its state, since when, why and what to do.',
    top,
  );
  for (const row of notOnTrack) {
    const since = row.state.since === null ? '' : ` since ${formatTime(row.state.since)}`;
    flow.gap(4);
    flow.paragraph(
      `${row.email}: ${row.state.label}${since}`,
      0,
      FONT.bold,
      row.state.tone === 'bad' ? COLOR.spam : COLOR.text,
    );
    flow.paragraph(row.state.reason, 12, FONT.regular, COLOR.text);
  }
  return flow.y();
}

/**
 * What the providers said of each domain over the period, in their own data: its DMARC reports,
 * Gmail Postmaster Tools and Microsoft SNDS, and the health guard's hold when they put one on it.
 */
export function providerVerdictsSection(doc: Doc, report: StatsReport, top: number): number {
  const title = 'What the providers say';
  const spoken = report.domains.filter(
    (d) =>
      d.dmarcMessages > 0 || d.gmailDay !== null || d.sndsRedDays + d.sndsYellowDays + d.sndsGreenDays > 0 || d.held,
  );
  // nothing connected, or nothing said in the period: no section, as with no DNS checks
  if (spoken.length === 0) return top;
  const flow = sectionStart(
    doc,
    title,
    "Each domain's DMARC aggregate reports, Gmail Postmaster Tools and Microsoft SNDS over the period, and whether they hold its warmup now.",
    top,
  );
  for (const d of spoken) {
    flow.gap(4);
    flow.paragraph(d.held ? `${d.domain}: held` : d.domain, 0, FONT.bold, d.held ? COLOR.spam : COLOR.text);
    if (d.held && d.holdReason) flow.paragraph(d.holdReason, 12, FONT.regular, COLOR.spam);
    if (d.dmarcMessages > 0) {
      const unaligned =
        d.unalignedSources > 0 ? `; ${countOf(d.unalignedSources, 'source sends', 'sources send')} unaligned` : '';
      flow.paragraph(
        `DMARC: ${countOf(d.dmarcMessages, 'message', 'messages')}, ${formatPercent((d.dmarcAlignedShare ?? 0) * 100)} aligned${unaligned}`,
        12,
        FONT.regular,
        COLOR.text,
      );
    }
    if (d.gmailDay !== null) {
      const rate = d.gmailSpamRate === null ? 'no spam rate' : `spam rate ${(d.gmailSpamRate * 100).toFixed(2)} %`;
      const compliance = d.gmailCompliance ? `, compliance: ${d.gmailCompliance}` : '';
      flow.paragraph(`Gmail: ${rate} on ${formatDay(d.gmailDay)}${compliance}`, 12, FONT.regular, COLOR.text);
    }
    if (d.sndsRedDays + d.sndsYellowDays + d.sndsGreenDays > 0) {
      flow.paragraph(
        `Microsoft SNDS: ${countOf(d.sndsRedDays, 'red day', 'red days')}, ${d.sndsYellowDays} yellow, ${d.sndsGreenDays} green`,
        12,
        FONT.regular,
        d.sndsRedDays > 0 ? COLOR.spam : COLOR.text,
      );
    }
  }
  return flow.y();
}
