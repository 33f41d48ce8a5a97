import type { Kysely } from 'kysely';
import { countRows, newestFirstPage, type PageWindow } from '../db/list-query.js';
import { containsText } from '../db/text-search.js';
import type { Database, NewTemplateRow, TemplateRow, TemplateRowUpdate } from '../db/schema.js';
import type { TemplateType } from './templates.schemas.js';

export interface TemplateFilter {
  type?: TemplateType;
  language?: string;
  /** Case-insensitive substring of name or subject. */
  q?: string;
}

// Keeps both parameter limits (SQLite 32,766; PostgreSQL 65,535) far away whatever the import size.
const INSERT_CHUNK = 200;

/** All template SQL; every query is scoped by workspace, so another workspace's id is simply not found. */
export function createTemplatesRepository(db: Kysely<Database>) {
  function filtered(executor: Kysely<Database>, workspaceId: string, filter: TemplateFilter) {
    let query = executor.selectFrom('templates').where('workspace_id', '=', workspaceId);
    if (filter.type !== undefined) query = query.where('type', '=', filter.type);
    if (filter.language !== undefined) query = query.where('language', '=', filter.language);
    if (filter.q) query = query.where(containsText(['name', 'subject'], filter.q));
    return query;
  }

  return {
    /** One page, newest first; `id` breaks ties between templates made in the same millisecond. */
    async list(
      workspaceId: string,
      filter: TemplateFilter,
      page: PageWindow,
    ): Promise<{ rows: TemplateRow[]; total: number }> {
      return newestFirstPage(filtered(db, workspaceId, filter), 'created_at', page);
    },

    /** Every match, oldest first (the order an import re-creates them in). */
    async listAll(
      workspaceId: string,
      filter: TemplateFilter,
      executor: Kysely<Database> = db,
    ): Promise<TemplateRow[]> {
      return filtered(executor, workspaceId, filter)
        .selectAll()
        .orderBy('created_at', 'asc')
        .orderBy('id', 'asc')
        .execute();
    },

    /** How many templates the workspace holds (the template quota). */
    async count(workspaceId: string, executor: Kysely<Database> = db): Promise<number> {
      return countRows(filtered(executor, workspaceId, {}));
    },

    async findById(workspaceId: string, id: string): Promise<TemplateRow | undefined> {
      return db
        .selectFrom('templates')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    async insert(row: NewTemplateRow): Promise<TemplateRow> {
      return db.insertInto('templates').values(row).returningAll().executeTakeFirstOrThrow();
    },

    /** Inserts in the caller's transaction, so a batch is stored whole or not at all. */
    async insertMany(trx: Kysely<Database>, rows: readonly NewTemplateRow[]): Promise<void> {
      for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
        await trx
          .insertInto('templates')
          .values(rows.slice(start, start + INSERT_CHUNK))
          .execute();
      }
    },

    async update(workspaceId: string, id: string, changes: TemplateRowUpdate): Promise<TemplateRow | undefined> {
      return db
        .updateTable('templates')
        .set(changes)
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },

    async delete(workspaceId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('templates')
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

export type TemplatesRepository = ReturnType<typeof createTemplatesRepository>;
