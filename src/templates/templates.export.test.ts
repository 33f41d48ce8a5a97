// Templates exported as a file and imported again, into the same workspace or another one.
import { describe, expect, it } from 'vitest';
import { expectProblem } from '../../test/helpers/problem.js';
import type { Fields } from '../../test/helpers/templates-api.js';
import {
  clock,
  countTemplates,
  create,
  emptyWorkspace,
  fields,
  list,
  t,
  useTemplatesApp,
  ws,
} from '../../test/helpers/templates-api.js';

useTemplatesApp();

describe('export and import', () => {
  it('exports as an attachment named after the day', async () => {
    const exporter = await emptyWorkspace('exporter');
    const a = await create(exporter, { name: 'First', type: 'initial', language: 'en' });
    clock.advance(1000);
    await create(exporter, { name: 'Second', type: 'reply', language: 'de' });
    const res = await exporter.request({ method: 'GET', url: '/api/templates/export' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const day = clock.now().toISOString().slice(0, 10);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="warmup-templates-${day}.json"`);
    const document = res.json();
    expect(document).toEqual({
      version: 1,
      exportedAt: clock.now().toISOString(),
      templates: [
        { name: 'First', type: 'initial', language: 'en', subject: a.subject, body: a.body },
        { name: 'Second', type: 'reply', language: 'de', subject: a.subject, body: a.body },
      ],
    });

    const replies = (await exporter.request({ method: 'GET', url: '/api/templates/export?type=reply' })).json();
    expect(replies.templates.map((x: Fields) => x.name)).toEqual(['Second']);
    const english = (await exporter.request({ method: 'GET', url: '/api/templates/export?language=en' })).json();
    expect(english.templates.map((x: Fields) => x.name)).toEqual(['First']);
    const none = (
      await exporter.request({ method: 'GET', url: '/api/templates/export?language=fr&type=reply' })
    ).json();
    expect(none.templates).toEqual([]);
  });

  it.each([
    ['?type=bulk', '/query/type'],
    ['?language=english', '/query/language'],
    ['?page=1', '/query/page'],
  ])('answers 400 for export%s', async (query, path) => {
    expectProblem(
      await ws.request({ method: 'GET', url: `/api/templates/export${query}` }),
      400,
      'validation_error',
      path,
    );
  });

  it('round-trips: what one workspace exports another imports', async () => {
    const source = await t.createWorkspace('source');
    const exported = (await source.request({ method: 'GET', url: '/api/templates/export' })).json();
    expect(exported.templates.length).toBeGreaterThan(0);

    const target = await emptyWorkspace('target');
    const res = await target.request({ method: 'POST', url: '/api/templates/import', payload: exported });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ imported: exported.templates.length });

    const again = (await target.request({ method: 'GET', url: '/api/templates/export' })).json();
    const key = (x: Fields) => JSON.stringify([x.name, x.type, x.language, x.subject, x.body]);
    expect(again.templates.map(key).sort()).toEqual(exported.templates.map(key).sort());
    expect((await list(target, '?limit=1')).pagination.total).toBe(exported.templates.length);
  });

  it('imports a bare {templates} document and computes variables', async () => {
    const target = await emptyWorkspace('bare');
    const res = await target.request({
      method: 'POST',
      url: '/api/templates/import',
      payload: {
        templates: [
          fields({ name: 'Imported one' }),
          fields({ name: 'Imported two', type: 'followup', body: 'Just {company}' }),
        ],
      },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ imported: 2 });
    const { templates } = await list(target);
    expect(templates.map((x) => x.name).sort()).toEqual(['Imported one', 'Imported two']);
    expect(templates.find((x) => x.name === 'Imported two')?.variables).toEqual(['company', 'topic']);
  });

  it('stores nothing when items fail the schema, and names each bad item by index', async () => {
    const target = await emptyWorkspace('schema-bad');
    const items = Array.from({ length: 5 }, (): Record<string, unknown> => ({ ...fields() }));
    delete items[1].body;
    items[3].language = 'EN';
    const res = await target.request({ method: 'POST', url: '/api/templates/import', payload: { templates: items } });
    const problem = expectProblem(res, 400, 'validation_error');
    expect(problem.errors?.map((e) => e.path).sort()).toEqual(['/body/templates/1/body', '/body/templates/3/language']);
    expect(await countTemplates(target.id)).toBe(0);
  });

  it('stores nothing when items have bad markup or blank fields, and names each bad item by index', async () => {
    const target = await emptyWorkspace('markup-bad');
    const items = [fields({ body: 'Hi {nobody}' }), fields(), fields(), fields(), fields({ name: '  ' }), fields()];
    const res = await target.request({ method: 'POST', url: '/api/templates/import', payload: { templates: items } });
    const problem = expectProblem(res, 400, 'validation_error');
    expect(problem.errors?.map((e) => e.path)).toEqual(['/body/templates/0/body', '/body/templates/4/name']);
    expect(problem.errors?.[0].message).toContain('unknown variable "nobody"');
    expect(await countTemplates(target.id)).toBe(0);
  });

  it('imports the maximum of 1000 items', async () => {
    const target = await emptyWorkspace('bulk');
    const items = Array.from({ length: 1000 }, (_, i) => fields({ name: `Bulk ${i}` }));
    const res = await target.request({ method: 'POST', url: '/api/templates/import', payload: { templates: items } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ imported: 1000 });
    expect(await countTemplates(target.id)).toBe(1000);
  });

  it.each([
    ['no items', { templates: [] }, '/body/templates'],
    ['1001 items', { templates: Array.from({ length: 1001 }, () => fields()) }, '/body/templates'],
    ['no templates key', { version: 1 }, '/body/templates'],
    ['another version', { version: 2, templates: [fields()] }, '/body/version'],
    ['an unknown top-level field', { templates: [fields()], owner: 'me' }, '/body/owner'],
    ['an unknown field in an item', { templates: [fields(), { ...fields(), id: 'tpl_x' }] }, '/body/templates/1/id'],
  ])('answers 400 for %s and stores nothing', async (_label, payload, path) => {
    const before = await countTemplates(ws.id);
    const res = await ws.request({ method: 'POST', url: '/api/templates/import', payload });
    expectProblem(res, 400, 'validation_error', path);
    expect(await countTemplates(ws.id)).toBe(before);
  });

  it('accepts bodies over 1 MiB up to 10 MiB', async () => {
    const target = await emptyWorkspace('big');
    const items = Array.from({ length: 120 }, (_, i) => fields({ name: `Long ${i}`, body: 'b'.repeat(19_000) }));
    const payload = JSON.stringify({ templates: items });
    expect(payload.length).toBeGreaterThan(2 * 1024 * 1024);
    const res = await target.request({
      method: 'POST',
      url: '/api/templates/import',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ imported: 120 });
  });

  it('answers 413 payload_too_large over 10 MiB (the default WARMUP_MAX_IMPORT_BYTES)', async () => {
    const payload = JSON.stringify({ templates: [fields({ body: 'b'.repeat(10 * 1024 * 1024) })] });
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates/import',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expectProblem(res, 413, 'payload_too_large');
  });

  it('answers 415 for an import that is not JSON', async () => {
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates/import',
      headers: { 'content-type': 'text/csv' },
      payload: 'name,type\n',
    });
    expectProblem(res, 415, 'unsupported_media_type');
  });
});
