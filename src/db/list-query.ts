import { sql, type SelectQueryBuilder, type StringReference } from 'kysely';

export interface PageWindow {
  offset: number;
  limit: number;
}

/** How many rows `query` matches; the cast keeps the count a number on PostgreSQL (whose count is a bigint). */
export async function countRows<DB, TB extends keyof DB>(query: SelectQueryBuilder<DB, TB, object>): Promise<number> {
  const { total } = await query
    .select(sql<number>`cast(count(*) as integer)`.as('total'))
    .$castTo<{ total: number }>()
    .executeTakeFirstOrThrow();
  return Number(total);
}

/**
 * One page of the rows of `query` (over a single table), newest first by `timeColumn` with `id`
 * (time-ordered) breaking ties within a millisecond, and the total it was cut from. A page past
 * the end skips the row query.
 */
export async function newestFirstPage<DB, TB extends keyof DB>(
  query: SelectQueryBuilder<DB, TB, object>,
  timeColumn: StringReference<DB, TB> & string,
  page: PageWindow,
) {
  const total = await countRows(query);
  if (total <= page.offset) return { rows: [], total };
  const rows = await query
    .selectAll()
    .orderBy(sql.ref(timeColumn), 'desc')
    .orderBy(sql.ref('id'), 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return { rows, total };
}
