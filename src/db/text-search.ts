import { sql, type RawBuilder } from 'kysely';

/**
 * Case-insensitive substring match of `text` in any of `columns`, the same on both databases:
 * lower() on both sides with an explicit ESCAPE, because SQLite's LIKE ignores ASCII case and
 * PostgreSQL's does not, and `%`/`_` in the user's text are literal.
 */
export function containsText(columns: readonly string[], text: string): RawBuilder<boolean> {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const tests = columns.map((column) => sql`lower(${sql.ref(column)}) like lower(${pattern}) escape '\\'`);
  return sql<boolean>`(${sql.join(tests, sql` or `)})`;
}
