import { EXPORT_COLUMNS, type ExportRow } from './stats.schemas.js';

/** RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled. */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
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
