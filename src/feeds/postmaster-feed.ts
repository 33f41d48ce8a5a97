// Gmail Postmaster Tools API v2 (developers.google.com/workspace/gmail/postmaster/reference/rest/v2),
// scope https://www.googleapis.com/auth/postmaster.traffic.readonly:
//   POST /v2/domains/{domain}/domainStats:query — metricDefinitions [{name, baseMetric {standardMetric}}],
//        timeQuery, aggregationGranularity DAILY; answers {domainStats: [{name, value, date, metric}]},
//        each value a StatisticValue (floatValue, doubleValue, intValue, stringValue, stringList).
//   GET  /v2/domains/{domain}/complianceStatus — the domain's sender-requirement compliance.
// Not confirmed from the public pages, and so read leniently:
//   - the unit of SPAM_RATE: read as a fraction (as v1's userReportedSpamRatio was), floatValue or doubleValue;
//   - the shape of timeQuery's date range (sent as dateRanges of {start, end} Google Dates);
//   - the fields of the compliance answer: every `status` string of it is looked at, and the domain
//     reads `needs_work` when any is NEEDS_WORK (or another non-COMPLIANT verdict), `compliant` when
//     all are COMPLIANT, null when there is none.
import { addDays } from '../calendar.js';
import { fetchFeed, FeedFetchError, type FeedLimits } from './feed-http.js';

export const POSTMASTER_MAX_BYTES = 512 * 1024;
/** The days asked for: Google's figures arrive a day or two late. */
export const POSTMASTER_DAYS = 3;
const SPAM_RATE_METRIC = 'spamRate';
const MAX_NODES = 5_000;

export interface PostmasterDay {
  day: string;
  spamRate: number | null;
}

const googleDate = (day: string) => {
  const [year, month, date] = day.split('-').map(Number);
  return { year, month, day: date };
};

function isoOf(date: unknown): string | null {
  if (typeof date !== 'object' || date === null) return null;
  const { year, month, day } = date as Record<string, unknown>;
  if (![year, month, day].every((n) => Number.isInteger(n))) return null;
  const iso = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  return /^\d{4}-\d{2}-\d{2}$/.test(iso) ? iso : null;
}

function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new FeedFetchError('the provider answered something that is not JSON');
  }
}

/** The days with a spam rate the answer names (days without one are left out). */
export function readDomainStats(answer: unknown): PostmasterDay[] {
  const stats = (answer as { domainStats?: unknown } | null)?.domainStats;
  if (stats === undefined) return [];
  if (!Array.isArray(stats)) throw new FeedFetchError('the answer has no list of domain statistics');
  const days: PostmasterDay[] = [];
  for (const stat of stats.slice(0, 100) as Array<Record<string, unknown>>) {
    if (typeof stat !== 'object' || stat === null || stat.metric !== SPAM_RATE_METRIC) continue;
    const day = isoOf(stat.date);
    const value = stat.value as Record<string, unknown> | undefined;
    const rate = value?.floatValue ?? value?.doubleValue;
    if (day === null) continue;
    days.push({ day, spamRate: typeof rate === 'number' && rate >= 0 && rate <= 1 ? rate : null });
  }
  return days;
}

/** `compliant`, `needs_work` or null: from every `status` string of the answer, at most MAX_NODES values looked at. */
export function readCompliance(answer: unknown): string | null {
  const statuses: string[] = [];
  const stack: unknown[] = [answer];
  let nodes = 0;
  while (stack.length > 0 && nodes < MAX_NODES) {
    const node = stack.pop();
    nodes += 1;
    if (Array.isArray(node)) stack.push(...node.slice(0, MAX_NODES));
    else if (typeof node === 'object' && node !== null) {
      for (const [name, value] of Object.entries(node)) {
        if (name === 'status' && typeof value === 'string') statuses.push(value);
        else stack.push(value);
      }
    }
  }
  const verdicts = statuses.filter((status) => status !== 'STATUS_UNSPECIFIED' && /^[A-Z_]{1,40}$/.test(status));
  if (verdicts.length === 0) return null;
  return verdicts.every((status) => status === 'COMPLIANT') ? 'compliant' : 'needs_work';
}

/** The domain's spam rate for the POSTMASTER_DAYS days up to `today` (excluded), and its compliance. */
export async function fetchPostmaster(
  options: { baseUrl: string; accessToken: string; domain: string; today: string },
  limits: Omit<FeedLimits, 'maxBytes'>,
): Promise<{ days: PostmasterDay[]; compliance: string | null }> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const domain = encodeURIComponent(options.domain);
  const headers = { authorization: `Bearer ${options.accessToken}`, accept: 'application/json' };
  const bounded = { ...limits, maxBytes: POSTMASTER_MAX_BYTES };
  const body = JSON.stringify({
    metricDefinitions: [{ name: SPAM_RATE_METRIC, baseMetric: { standardMetric: 'SPAM_RATE' } }],
    timeQuery: {
      dateRanges: {
        dateRanges: [
          { start: googleDate(addDays(options.today, -POSTMASTER_DAYS)), end: googleDate(addDays(options.today, -1)) },
        ],
      },
    },
    aggregationGranularity: 'DAILY',
  });
  const stats = await fetchFeed(
    { url: `${base}/v2/domains/${domain}/domainStats:query`, method: 'POST', headers, body },
    bounded,
  );
  const compliance = await fetchFeed({ url: `${base}/v2/domains/${domain}/complianceStatus`, headers }, bounded);
  return { days: readDomainStats(json(stats)), compliance: readCompliance(json(compliance)) };
}
