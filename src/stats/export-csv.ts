import { EXPORT_COLUMNS, PROVIDER_DOMAIN_COLUMNS, type ExportRow, type ProviderDomainRow } from './stats.schemas.js';

// OWASP's CSV injection advice: a spreadsheet treats a cell that starts with one of these as a
// formula, whatever the column. Addresses are tenant input and `=cmd|'/Ccalc'!A0@x.io` is a valid one.
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled. A text
 * field that a spreadsheet would run as a formula gets a leading `'` and is always quoted, so it
 * opens as the text it is. Numbers are written as numbers.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  if (FORMULA_START.test(value)) return `"'${value.replace(/"/g, '""')}"`;
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function csvLine(values: ReadonlyArray<string | number | null>): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** The export as CSV text, one chunk per batch of rows, so it streams however large it is. */
export async function* exportCsv(rows: AsyncIterable<ExportRow[]>): AsyncGenerator<string> {
  yield csvLine(EXPORT_COLUMNS);
  for await (const batch of rows) {
    let chunk = '';
    for (const row of batch) chunk += csvLine(EXPORT_COLUMNS.map((column) => row[column]));
    yield chunk;
  }
}

/** `table=domains`: one line per domain; a few hundred at most, so written whole. */
export function domainsCsv(rows: readonly ProviderDomainRow[]): string {
  const cell = (value: string | number | boolean | null) => (typeof value === 'boolean' ? String(value) : value);
  return [PROVIDER_DOMAIN_COLUMNS, ...rows.map((row) => PROVIDER_DOMAIN_COLUMNS.map((column) => cell(row[column])))]
    .map((values) => csvLine(values))
    .join('');
}
