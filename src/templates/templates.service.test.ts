import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../db/database.js';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { createTemplatesService } from './templates.service.js';

/*
 * What has no route of its own: the engine's template choice, and the guarantees behind import
 * and workspace creation that HTTP alone cannot provoke (a database failure mid-batch).
 */

let t: TestApp;
let ws: TestWorkspace;
const ids: Record<string, string> = {};

async function emptyWorkspace(name: string): Promise<TestWorkspace> {
  const workspace = await t.createWorkspace(name);
  await t.database.db.deleteFrom('templates').where('workspace_id', '=', workspace.id).execute();
  return workspace;
}

async function create(workspace: TestWorkspace, name: string, type: string, language: string): Promise<string> {
  const res = await workspace.request({
    method: 'POST',
    url: '/api/templates',
    payload: { name, type, language, subject: `${name} about {topic}`, body: `Hi {recipient_first_name}, ${name}.` },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ template: { id: string } }>().template.id;
}

async function countTemplates(workspaceId: string): Promise<number> {
  const rows = await t.database.db
    .selectFrom('templates')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .execute();
  return rows.length;
}

beforeAll(async () => {
  t = await createTestApp();
  ws = await emptyWorkspace('engine');
  for (const name of ['en-1', 'en-2', 'en-3']) ids[name] = await create(ws, name, 'initial', 'en');
  ids['de-reply'] = await create(ws, 'de-reply', 'reply', 'de');
});

afterAll(async () => {
  await t.close();
});

describe('pickTemplate', () => {
  const pick = (type: 'initial' | 'reply' | 'followup', language: string, seed: number, workspaceId = ws.id) =>
    t.services.templates.pickTemplate(workspaceId, { type, language }, seed);

  it('picks among the templates of the type and language, the same one for the same seed', async () => {
    const chosen = new Set<string>();
    for (const seed of [0, 1, 2, 3, 4, 5, -7, 2 ** 40 + 1]) {
      const template = await pick('initial', 'en', seed);
      expect(template?.type).toBe('initial');
      expect(template?.language).toBe('en');
      expect((await pick('initial', 'en', seed))?.id).toBe(template?.id);
      chosen.add(template!.id);
    }
    expect([...chosen].sort()).toEqual([ids['en-1'], ids['en-2'], ids['en-3']].sort());
  });

  it('returns the template with its text and variables', async () => {
    const template = await pick('reply', 'de', 0);
    expect(template).toMatchObject({
      id: ids['de-reply'],
      name: 'de-reply',
      subject: 'de-reply about {topic}',
      variables: ['recipient_first_name', 'topic'],
    });
  });

  it('falls back to English when the language has none of that type', async () => {
    const template = await pick('initial', 'de', 1);
    expect(template?.language).toBe('en');
    expect(template?.type).toBe('initial');
  });

  it('is undefined when neither the language nor English has the type', async () => {
    expect(await pick('reply', 'fr', 0)).toBeUndefined();
    expect(await pick('followup', 'en', 0)).toBeUndefined();
  });

  it('never picks another workspace’s template', async () => {
    const other = await emptyWorkspace('engine-other');
    expect(await pick('initial', 'en', 0, other.id)).toBeUndefined();
  });

  it('works inside a transaction when given it', async () => {
    const template = await inTransaction(t.database.db, (trx) =>
      t.services.templates.pickTemplate(ws.id, { type: 'initial', language: 'en' }, 2, trx),
    );
    expect(template?.type).toBe('initial');
  });
});

/** Lets the first `allowed` INSERTs through and fails the next one, as a dying database would. */
function failingInsertAfter(allowed: number): KyselyPlugin {
  let inserts = 0;
  return {
    transformQuery(args) {
      if (args.node.kind === 'InsertQueryNode' && ++inserts > allowed) throw new Error('simulated database failure');
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
}

describe('import atomicity', () => {
  it('stores nothing when the database fails part-way through a large import', async () => {
    const target = await emptyWorkspace('import-crash');
    const service = createTemplatesService({ db: t.database.db.withPlugin(failingInsertAfter(2)), clock: t.clock });
    const items = Array.from({ length: 1000 }, (_, i) => ({
      name: `Bulk ${i}`,
      type: 'initial' as const,
      language: 'en',
      subject: 'About {topic}',
      body: 'Hello {recipient_first_name}',
    }));
    await expect(service.importTemplates(target.id, items)).rejects.toThrow('simulated database failure');
    expect(await countTemplates(target.id)).toBe(0);
  });
});

describe('seedDefaultTemplates', () => {
  it('runs in the workspace’s transaction: a failed creation leaves no templates behind', async () => {
    const before = await t.database.db.selectFrom('templates').select('id').execute();
    await expect(
      inTransaction(t.database.db, async (trx) => {
        await trx
          .insertInto('workspaces')
          .values({ id: 'ws_rolled_back', name: 'x', created_at: new Date(0).toISOString() })
          .execute();
        await t.services.templates.seedDefaultTemplates(trx, 'ws_rolled_back');
        expect(
          await trx.selectFrom('templates').select('id').where('workspace_id', '=', 'ws_rolled_back').execute(),
        ).not.toHaveLength(0);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await countTemplates('ws_rolled_back')).toBe(0);
    expect(await t.database.db.selectFrom('templates').select('id').execute()).toHaveLength(before.length);
  });
});
