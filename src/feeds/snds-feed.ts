// Microsoft SNDS over HTTPS: `<WARMUP_SNDS_URL>?key=<key>[&date=MMDDYY]` answers the addresses' CSV
// (snds-csv.ts). The key is a credential: it is put in the URL here and nowhere else (no log, no error).
import { fetchFeed, type FeedLimits } from './feed-http.js';
import { parseSndsCsv, type SndsParse } from './snds-csv.js';

/** SNDS answers one day of rows; a few thousand addresses make well under this. */
export const SNDS_MAX_BYTES = 4 * 1024 * 1024;

/** `MMDDYY`, the form SNDS takes its `date` parameter in. */
export function sndsDate(day: string): string {
  const [year, month, date] = day.split('-');
  return `${month}${date}${year.slice(2)}`;
}

export async function fetchSnds(
  options: { baseUrl: string; key: string; day?: string },
  limits: Omit<FeedLimits, 'maxBytes'> & { maxBytes?: number },
): Promise<SndsParse> {
  const url = new URL(options.baseUrl);
  url.searchParams.set('key', options.key);
  if (options.day) url.searchParams.set('date', sndsDate(options.day));
  const text = await fetchFeed({ url: url.href }, { maxBytes: SNDS_MAX_BYTES, ...limits });
  return parseSndsCsv(text);
}
