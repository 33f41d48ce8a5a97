import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import { INSERT_MANY_CHUNK, insertMany } from './insert-many.js';

let first: TestDatabase;
let second: TestDatabase;
beforeAll(async () => {
  first = await createTestDatabase();
  second = await createTestDatabase();
});
afterAll(async () => {
  await first?.close();
  await second?.close();
});

// leases: a table without foreign keys; `owner` tells the calls apart
const rowsOf = (owner: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    key: `${owner}:${String(i).padStart(5, '0')}`,
    owner,
    expires_at: new Date(Date.UTC(2026, 2, 2, 0, 0, i)).toISOString(),
  }));

async function stored(database: TestDatabase, owner: string) {
  return database.db
    .selectFrom('leases')
    .select(['key', 'owner', 'expires_at'])
    .where('owner', '=', owner)
    .orderBy('key')
    .execute();
}

describe('insertMany', () => {
  it('writes every row, over full chunks and a last short one, again and again and into two databases', async () => {
    // full chunks run through the statement SQLite keeps: a second call and a second database reuse its text
    const many = INSERT_MANY_CHUNK * 2 + 7;
    await insertMany(first.db, 'leases', rowsOf('a', many));
    await insertMany(first.db, 'leases', rowsOf('b', INSERT_MANY_CHUNK));
    await insertMany(second.db, 'leases', rowsOf('a', INSERT_MANY_CHUNK + 1));

    expect(await stored(first, 'a')).toEqual(rowsOf('a', many));
    expect(await stored(first, 'b')).toEqual(rowsOf('b', INSERT_MANY_CHUNK));
    expect(await stored(second, 'a')).toEqual(rowsOf('a', INSERT_MANY_CHUNK + 1));
    expect(await stored(second, 'b')).toEqual([]);
  });

  it('writes within the caller’s transaction: rolled back with it', async () => {
    await expect(
      first.db.transaction().execute(async (trx) => {
        await insertMany(trx, 'leases', rowsOf('c', INSERT_MANY_CHUNK));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await stored(first, 'c')).toEqual([]);
  });
});
