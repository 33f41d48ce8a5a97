const numberFormat = new Intl.NumberFormat('en-US');

export function formatNumber(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : numberFormat.format(value);
}

export function formatPercent(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  return `${Number.isInteger(value) ? value : value.toFixed(1)}%`;
}

export function formatSigned(value: number): string {
  if (value > 0) return `+${numberFormat.format(value)}`;
  if (value < 0) return `−${numberFormat.format(Math.abs(value))}`;
  return '±0';
}

const dateTime = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
});
const dateOnly = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '–';
}

/** A calendar day (`YYYY-MM-DD`, UTC) for people: `25 Nov 2026`. */
export function formatDay(day: string): string {
  return dateOnly.format(new Date(`${day}T00:00:00Z`));
}

/** Today as a UTC calendar day, as the API counts days. */
export function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}

export function daysAgoUtc(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

export function relativeTime(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const seconds = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  return `${days} d ago`;
}

export const PROVIDER_NAMES: Record<string, string> = {
  gmail: 'Gmail',
  outlook: 'Outlook',
  yahoo: 'Yahoo',
  zoho: 'Zoho',
  icloud: 'iCloud',
  fastmail: 'Fastmail',
  custom: 'Custom',
};

export const LANGUAGES: Record<string, string> = {
  en: 'English',
  de: 'German',
  fr: 'French',
  es: 'Spanish',
  it: 'Italian',
  nl: 'Dutch',
  pt: 'Portuguese',
  pl: 'Polish',
  sv: 'Swedish',
  da: 'Danish',
  no: 'Norwegian',
  fi: 'Finnish',
};

export function languageName(code: string): string {
  return LANGUAGES[code] ?? code.toUpperCase();
}

/** The statistics periods the pages offer. */
export type Period = '7d' | '30d' | '90d';

export const PERIODS: Array<{ value: Period; label: string }> = [
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: '90d', label: '90 days' },
];

/** "30 days" for `30d`, as the chart subtitles say it. */
export function periodLabel(period: Period): string {
  return PERIODS.find((p) => p.value === period)?.label ?? period;
}

/** Template types as the pages name them. */
export const TYPE_LABELS: Record<string, string> = { initial: 'First email', reply: 'Reply', followup: 'Follow-up' };

/** A table of names as select options, in the table's order. */
export function asOptions(names: Record<string, string>): Array<{ value: string; label: string }> {
  return Object.entries(names).map(([value, label]) => ({ value, label }));
}

/** "1 mailbox", "2 mailboxes": `plural` is the noun's plural; its singular drops the "es" of "-xes" or the final "s". */
export function countNoun(count: number, plural: string): string {
  if (count === 1)
    return `${formatNumber(count)} ${plural.endsWith('xes') ? plural.slice(0, -2) : plural.replace(/s$/, '')}`;
  return `${formatNumber(count)} ${plural}`;
}
