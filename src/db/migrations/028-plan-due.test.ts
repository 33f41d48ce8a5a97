import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';
import { insertRawMailbox } from '../../../test/helpers/test-database.js';
import { DUE_AT_ONCE } from './023-work-claims.js';

it('makes every mailbox due for planning at once, and goes back down', async () => {
  const database = await createTestDatabaseAt('027-promoted-to-primary');
  await insertRawMailbox(database);

  await database.migrateTo('028-plan-due');
  const row = await database.db.selectFrom('mailboxes').select(['id', 'plan_due_at']).executeTakeFirstOrThrow();
  expect(row).toEqual({ id: 'mbx_1', plan_due_at: DUE_AT_ONCE });

  await database.migrateTo('027-promoted-to-primary');
  expect(await database.columnsOf('mailboxes')).not.toContain('plan_due_at');
  expect(await database.db.selectFrom('mailboxes').select('id').execute()).toEqual([{ id: 'mbx_1' }]);
});
