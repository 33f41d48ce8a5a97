import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';

it('adds the identity, peers and nonces tables, a key peered once and a nonce seen once, and takes them away again', async () => {
  const database = await createTestDatabaseAt('041-alert-mail-recipients');
  await database.migrateTo('043-peers');
  expect(await database.columnsOf('peers')).toEqual(
    expect.arrayContaining(['id', 'url', 'public_key', 'state', 'offer_domains', 'daily_ceiling', 'handshake_at']),
  );
  const peer = (id: string) =>
    sql`insert into peers (id, url, public_key, state, offer_domains, offer_mailboxes, daily_ceiling, created_at, updated_at)
      values (${id}, 'https://b.test', ${'k'.repeat(43)}, 'pending', '[]', 0, 0, '2026-01-01T00:00:00.000Z',
        '2026-01-01T00:00:00.000Z')`.execute(database.db);
  await peer('peer_1');
  await expect(peer('peer_2')).rejects.toThrow();
  const nonce = () =>
    sql`insert into peer_nonces (key_id, nonce, expires_at) values ('k', 'n', '2026-01-01T00:05:00.000Z')`.execute(
      database.db,
    );
  await nonce();
  await expect(nonce()).rejects.toThrow();

  await database.migrateTo('041-alert-mail-recipients');
  const tables = await database.tableNames();
  for (const table of ['peer_identity', 'peers', 'peer_nonces']) expect(tables).not.toContain(table);
});
