/*
 * Many rows into one table, fast on SQLite. Kysely turns every row of an INSERT into a tree of query
 * nodes and compiles it to text on every call: for the planner's 1,000-row INSERTs (12,000 values
 * each, hundreds of them a day) that is most of the statement's cost and the bulk of the garbage
 * planning makes. Here a full chunk's text is made once, the same string every time, so the
 * connection's compiled-statement cache (database.ts) finds its statement again; only the values
 * change. PostgreSQL takes the ordinary Kysely INSERT.
 */
import { CompiledQuery, SqliteAdapter, type Insertable, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Rows per INSERT: up to 32 columns stay under SQLite's 32,766 bound values (and PostgreSQL's 65,535). */
export const INSERT_MANY_CHUNK = 1_000;

/** Texts of full-chunk INSERTs by table and columns, made once. */
const fullChunkTexts = new Map<string, string>();

/**
 * Inserts `rows` into `table`, INSERT_MANY_CHUNK rows per statement. Every row gives the columns of
 * the first one (undefined is written as null; a column left out is not defaulted).
 */
export async function insertMany<Table extends keyof Database & string>(
  db: Kysely<Database>,
  table: Table,
  rows: ReadonlyArray<Insertable<Database[Table]>>,
): Promise<void> {
  if (rows.length === 0) return;
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    for (let start = 0; start < rows.length; start += INSERT_MANY_CHUNK)
      await db
        .insertInto(table)
        .values(rows.slice(start, start + INSERT_MANY_CHUNK) as Array<Insertable<Database[Table]>>)
        .execute();
    return;
  }
  const columns = Object.keys(rows[0]) as Array<keyof Insertable<Database[Table]> & string>;
  for (let start = 0; start < rows.length; start += INSERT_MANY_CHUNK) {
    const count = Math.min(INSERT_MANY_CHUNK, rows.length - start);
    const values: unknown[] = new Array(count * columns.length);
    for (let r = 0; r < count; r++)
      for (let c = 0; c < columns.length; c++) values[r * columns.length + c] = rows[start + r][columns[c]] ?? null;
    await db.executeQuery(CompiledQuery.raw(insertText(table, columns, count), values));
  }
}

/** The INSERT of `count` rows; a full chunk's text is kept, the same string every time. */
function insertText(table: string, columns: readonly string[], count: number): string {
  const key = `${table} ${columns.join(' ')}`;
  if (count === INSERT_MANY_CHUNK) {
    const kept = fullChunkTexts.get(key);
    if (kept !== undefined) return kept;
  }
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const text = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: count }, () => tuple).join(', ')}`;
  if (count !== INSERT_MANY_CHUNK) return text;
  fullChunkTexts.set(key, text);
  return text;
}
