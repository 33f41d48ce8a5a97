import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

/*
 * Many rows returned as one value. Both drivers turn each row of a result into a JavaScript object
 * one column at a time, and at 10,000 rows of ten columns that cost more than the statement itself
 * (better-sqlite3: about 0.2 µs a value). Aggregated into one JSON array of arrays in SQL, the
 * rows cross as one string and `JSON.parse` builds them far faster.
 */

/**
 * The aggregate of `values` over the statement's rows: one JSON array per row, in one JSON array.
 * Read it with `jsonRowsOf`. Integers stay numbers, text stays text, NULL stays null.
 */
export function jsonRows<DB>(db: Kysely<DB>, values: readonly RawBuilder<unknown>[]): RawBuilder<unknown> {
  const list = sql.join(values);
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? sql`coalesce(json_agg(json_build_array(${list})), '[]'::json)`
    : sql`json_group_array(json_array(${list}))`;
}

/** The rows of a `jsonRows` value (SQLite returns the text, pg has parsed it already). */
export function jsonRowsOf<Row extends unknown[]>(value: unknown): Row[] {
  return (typeof value === 'string' ? JSON.parse(value) : (value ?? [])) as Row[];
}
