import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { KNOWN_VARIABLES, SAMPLE_VALUES } from './render.js';
import { expectProblem } from '../../test/helpers/problem.js';
import type { Template, TemplateFields } from './templates.schemas.js';

const START = '2026-11-25T14:03:00.000Z';
const clock = fixedClock(START);
let t: TestApp;
let ws: TestWorkspace;

type Fields = TemplateFields;
type TemplateJson = Template;

function fields(over: Partial<Fields> = {}): Fields {
  return {
    name: 'Quick question',
    type: 'initial',
    language: 'en',
    subject: 'About {topic}',
    body: '{Hi|Hello} {recipient_first_name},\n\ndo you have a minute this week?\n\nThanks,\n{sender_name}',
    ...over,
  };
}

function messageAt(res: LightMyRequestResponse, path: string): string {
  const error = res.json<{ errors: { path: string; message: string }[] }>().errors.find((e) => e.path === path);
  expect(error, `no error at ${path}: ${res.body}`).toBeDefined();
  return error!.message;
}

async function create(workspace: TestWorkspace, over: Partial<Fields> = {}): Promise<TemplateJson> {
  const res = await workspace.request({ method: 'POST', url: '/api/templates', payload: fields(over) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ template: TemplateJson }>().template;
}

/** A workspace without its default templates, so counts and order are exactly what the test made. */
async function emptyWorkspace(name: string): Promise<TestWorkspace> {
  const workspace = await t.createWorkspace(name);
  await t.database.db.deleteFrom('templates').where('workspace_id', '=', workspace.id).execute();
  return workspace;
}

async function list(workspace: TestWorkspace, query = '') {
  const res = await workspace.request({ method: 'GET', url: `/api/templates${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{
    templates: TemplateJson[];
    pagination: { page: number; limit: number; total: number; totalPages: number };
  }>();
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
  t = await createTestApp({ clock });
  ws = t.workspace;
});

afterAll(async () => {
  await t.close();
});

describe('authentication', () => {
  it('answers 401 without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/templates' });
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('answers 401 with a wrong key', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/templates',
      headers: { authorization: 'Bearer wk_not-a-key' },
    });
    expectProblem(res, 401, 'unauthorized');
  });

  it('answers 401 before validating the body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/templates', payload: { name: '' } });
    expectProblem(res, 401, 'unauthorized');
  });
});

describe('POST /api/templates', () => {
  it('creates a template: 201, Location, every field, sorted variables', async () => {
    const res = await ws.request({ method: 'POST', url: '/api/templates', payload: fields() });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const { template } = res.json<{ template: TemplateJson }>();
    expect(res.headers.location).toBe(`/api/templates/${template.id}`);
    expect(template).toEqual({
      id: expect.any(String),
      ...fields(),
      variables: ['recipient_first_name', 'sender_name', 'topic'],
      createdAt: START,
      updatedAt: START,
    });

    const got = await ws.request({ method: 'GET', url: res.headers.location as string });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual({ template });
  });

  it('keeps line breaks and accepts the longest allowed fields', async () => {
    const template = await create(ws, {
      name: 'n'.repeat(200),
      subject: 's'.repeat(300),
      body: 'first line\r\nsecond line\n\n'.padEnd(20_000, 'b'),
    });
    expect(template.name).toHaveLength(200);
    expect(template.subject).toHaveLength(300);
    expect(template.body).toHaveLength(20_000);
    expect(template.body.startsWith('first line\r\nsecond line\n\n')).toBe(true);
    expect(template.variables).toEqual([]);
  });

  it('counts length in characters, not bytes', async () => {
    const template = await create(ws, { name: 'ü'.repeat(200) });
    expect(template.name).toBe('ü'.repeat(200));
  });

  it('accepts spintax with variables inside and literal braces', async () => {
    const template = await create(ws, {
      subject: '{{draft}} {Hi {recipient_first_name}|Hello}',
      body: 'On {day_of_week}, {date}',
    });
    expect(template.variables).toEqual(['date', 'day_of_week', 'recipient_first_name']);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['a missing name', { name: undefined }, '/body/name'],
    ['an empty name', { name: '' }, '/body/name'],
    ['a blank name', { name: '   \t' }, '/body/name'],
    ['a 201-character name', { name: 'n'.repeat(201) }, '/body/name'],
    ['a name that is not a string', { name: 42 }, '/body/name'],
    ['an empty subject', { subject: '' }, '/body/subject'],
    ['a blank subject', { subject: '  ' }, '/body/subject'],
    ['a 301-character subject', { subject: 's'.repeat(301) }, '/body/subject'],
    ['an empty body', { body: '' }, '/body/body'],
    ['a 20,001-character body', { body: 'b'.repeat(20_001) }, '/body/body'],
    ['an unknown type', { type: 'newsletter' }, '/body/type'],
    ['a missing type', { type: undefined }, '/body/type'],
    ['an upper-case language', { language: 'EN' }, '/body/language'],
    ['a three-letter language', { language: 'eng' }, '/body/language'],
    ['a language with a region', { language: 'en-US' }, '/body/language'],
    ['an unknown variable in the body', { body: 'Hi {first_name}' }, '/body/body'],
    ['an unbalanced brace in the subject', { subject: 'About {topic' }, '/body/subject'],
    ['a stray closing brace in the body', { body: 'Hi }' }, '/body/body'],
    ['nested spintax', { body: '{a|{b|c}}' }, '/body/body'],
    ['an unknown field', { colour: 'red' }, '/body/colour'],
  ];

  it.each(invalid)('rejects %s with 400 naming the field', async (_label, over, path) => {
    const before = await countTemplates(ws.id);
    const res = await ws.request({ method: 'POST', url: '/api/templates', payload: { ...fields(), ...over } });
    expectProblem(res, 400, 'validation_error', path);
    expect(await countTemplates(ws.id)).toBe(before);
  });

  it('lists the allowed types when the type is wrong', async () => {
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates',
      payload: { ...fields(), type: 'newsletter' },
    });
    expect(messageAt(res, '/body/type')).toBe('must be one of initial, reply, followup');
  });

  it('lists the known variables when a variable is unknown', async () => {
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates',
      payload: fields({ body: 'Hi {first_name}' }),
    });
    const message = messageAt(res, '/body/body');
    expect(message).toContain('unknown variable "first_name"');
    for (const name of KNOWN_VARIABLES) expect(message).toContain(name);
  });

  it('names the position of an unbalanced brace', async () => {
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates',
      payload: fields({ body: 'Hello,\n\nsee {topic and more' }),
    });
    expect(messageAt(res, '/body/body')).toMatch(/unbalanced "\{" at line 3, column 5/);
  });

  it('reports problems in subject and body together', async () => {
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates',
      payload: fields({ subject: '{nope}', body: '{nope}' }),
    });
    const problem = expectProblem(res, 400, 'validation_error');
    expect(problem.errors?.map((e) => e.path).sort()).toEqual(['/body/body', '/body/subject']);
  });

  it('answers 400 for malformed JSON', async () => {
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expectProblem(res, 400, 'validation_error', '/body');
  });

  it('answers 400 for a missing body', async () => {
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expectProblem(res, 400, 'validation_error', '/body');
  });

  it('answers 400 for a JSON array body', async () => {
    const res = await ws.request({ method: 'POST', url: '/api/templates', payload: [fields()] });
    expectProblem(res, 400, 'validation_error', '/body');
  });

  it.each(['application/x-www-form-urlencoded', 'text/plain', 'application/xml'])(
    'answers 415 for a %s body',
    async (type) => {
      const res = await ws.request({
        method: 'POST',
        url: '/api/templates',
        headers: { 'content-type': type },
        payload: 'name=x',
      });
      expectProblem(res, 415, 'unsupported_media_type');
    },
  );

  it('answers 413 for a body over 1 MiB', async () => {
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates',
      payload: { ...fields(), body: 'x'.repeat(1024 * 1024 + 1) },
    });
    expectProblem(res, 413, 'payload_too_large');
  });
});

describe('GET /api/templates', () => {
  let lister: TestWorkspace;
  const made: TemplateJson[] = [];

  beforeAll(async () => {
    lister = await emptyWorkspace('lister');
    const specs: Partial<Fields>[] = [
      { name: 'Alpha intro', type: 'initial', language: 'en', subject: 'Hello there' },
      { name: 'Beta reply', type: 'reply', language: 'en', subject: 'Re: planning' },
      { name: 'Gamma Anfrage', type: 'initial', language: 'de', subject: 'Kurze Frage zu {topic}' },
      { name: 'Delta follow', type: 'followup', language: 'en', subject: 'Following up on the ALPHA plan' },
      { name: '100% sure_thing', type: 'reply', language: 'de', subject: 'Antwort' },
    ];
    for (const spec of specs) {
      clock.advance(1000);
      made.push(await create(lister, spec));
    }
  });

  it('lists newest first with the default page and limit', async () => {
    const page = await list(lister);
    expect(page.templates.map((x) => x.name)).toEqual([...made].reverse().map((x) => x.name));
    expect(page.pagination).toEqual({ page: 1, limit: 20, total: 5, totalPages: 1 });
    expect(page.templates[0]).toEqual(made[4]);
  });

  it('pages through with totals', async () => {
    const first = await list(lister, '?limit=2');
    const second = await list(lister, '?limit=2&page=2');
    const third = await list(lister, '?limit=2&page=3');
    const beyond = await list(lister, '?limit=2&page=4');
    expect(first.pagination).toEqual({ page: 1, limit: 2, total: 5, totalPages: 3 });
    expect(third.pagination).toEqual({ page: 3, limit: 2, total: 5, totalPages: 3 });
    expect([...first.templates, ...second.templates, ...third.templates].map((x) => x.id)).toEqual(
      [...made].reverse().map((x) => x.id),
    );
    expect(beyond.templates).toEqual([]);
    expect(beyond.pagination).toEqual({ page: 4, limit: 2, total: 5, totalPages: 3 });
  });

  it('breaks ties between equal creation times by id, newest id first', async () => {
    const tied = await emptyWorkspace('tied');
    const a = await create(tied, { name: 'one' });
    const b = await create(tied, { name: 'two' });
    const c = await create(tied, { name: 'three' });
    const ids = [a.id, b.id, c.id].sort().reverse();
    expect((await list(tied)).templates.map((x) => x.id)).toEqual(ids);
    expect(
      [
        ...(await list(tied, '?limit=1')).templates,
        ...(await list(tied, '?limit=1&page=2')).templates,
        ...(await list(tied, '?limit=1&page=3')).templates,
      ].map((x) => x.id),
    ).toEqual(ids);
  });

  it('filters by type and by language, together with totals', async () => {
    const replies = await list(lister, '?type=reply');
    expect(replies.templates.map((x) => x.name)).toEqual(['100% sure_thing', 'Beta reply']);
    expect(replies.pagination.total).toBe(2);
    const german = await list(lister, '?language=de');
    expect(german.templates.map((x) => x.name)).toEqual(['100% sure_thing', 'Gamma Anfrage']);
    const germanInitial = await list(lister, '?language=de&type=initial');
    expect(germanInitial.templates.map((x) => x.name)).toEqual(['Gamma Anfrage']);
    const none = await list(lister, '?language=fr');
    expect(none).toEqual({ templates: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0 } });
  });

  it('searches name or subject case-insensitively with q', async () => {
    expect((await list(lister, '?q=alpha')).templates.map((x) => x.name)).toEqual(['Delta follow', 'Alpha intro']);
    expect((await list(lister, '?q=PLANNING')).templates.map((x) => x.name)).toEqual(['Beta reply']);
    expect((await list(lister, '?q=anfrage')).templates.map((x) => x.name)).toEqual(['Gamma Anfrage']);
    expect((await list(lister, '?q=alpha&type=initial')).pagination.total).toBe(1);
    expect((await list(lister, '?q=nothing-like-this')).pagination.total).toBe(0);
  });

  it('treats % and _ in q as plain characters', async () => {
    expect((await list(lister, `?q=${encodeURIComponent('100%')}`)).templates.map((x) => x.name)).toEqual([
      '100% sure_thing',
    ]);
    expect((await list(lister, `?q=${encodeURIComponent('%')}`)).templates.map((x) => x.name)).toEqual([
      '100% sure_thing',
    ]);
    expect((await list(lister, '?q=e_t')).templates.map((x) => x.name)).toEqual(['100% sure_thing']);
    expect((await list(lister, '?q=_')).pagination.total).toBe(1);
    expect((await list(lister, `?q=${encodeURIComponent('\\')}`)).pagination.total).toBe(0);
  });

  it('treats an empty q as no filter', async () => {
    expect((await list(lister, '?q=')).pagination.total).toBe(5);
  });

  const badQueries: [string, string][] = [
    ['?limit=0', '/query/limit'],
    ['?limit=101', '/query/limit'],
    ['?page=0', '/query/page'],
    ['?page=-1', '/query/page'],
    ['?limit=abc', '/query/limit'],
    ['?limit=2.5', '/query/limit'],
    ['?type=newsletter', '/query/type'],
    ['?language=EN', '/query/language'],
    ['?sort=name', '/query/sort'],
  ];

  it.each(badQueries)('answers 400 for %s', async (query, path) => {
    const res = await lister.request({ method: 'GET', url: `/api/templates${query}` });
    expectProblem(res, 400, 'validation_error', path);
  });

  it('accepts the limits of the range', async () => {
    expect((await list(lister, '?limit=100')).pagination.limit).toBe(100);
    expect((await list(lister, '?limit=1')).templates).toHaveLength(1);
  });
});

describe('GET /api/templates/:id', () => {
  it('answers 404 for an id that does not exist', async () => {
    const res = await ws.request({ method: 'GET', url: '/api/templates/tpl_doesnotexist' });
    expectProblem(res, 404, 'not_found');
  });
});

describe('PATCH /api/templates/:id', () => {
  it('changes only the fields given and recomputes variables', async () => {
    const original = await create(ws);
    clock.advance(60_000);
    const res = await ws.request({
      method: 'PATCH',
      url: `/api/templates/${original.id}`,
      payload: { name: 'Renamed' },
    });
    expect(res.statusCode).toBe(200);
    const renamed = res.json<{ template: TemplateJson }>().template;
    expect(renamed).toEqual({ ...original, name: 'Renamed', updatedAt: clock.now().toISOString() });

    const res2 = await ws.request({
      method: 'PATCH',
      url: `/api/templates/${original.id}`,
      payload: { body: 'Plain {company}', language: 'fr' },
    });
    const changed = res2.json<{ template: TemplateJson }>().template;
    expect(changed).toMatchObject({
      name: 'Renamed',
      language: 'fr',
      subject: original.subject,
      body: 'Plain {company}',
      createdAt: original.createdAt,
    });
    expect(changed.variables).toEqual(['company', 'topic']);
    expect((await ws.request({ method: 'GET', url: `/api/templates/${original.id}` })).json()).toEqual({
      template: changed,
    });
  });

  it('answers 400 for an empty body and changes nothing', async () => {
    const original = await create(ws);
    const res = await ws.request({ method: 'PATCH', url: `/api/templates/${original.id}`, payload: {} });
    expectProblem(res, 400, 'validation_error', '/body');
    const missing = await ws.request({
      method: 'PATCH',
      url: `/api/templates/${original.id}`,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expectProblem(missing, 400, 'validation_error', '/body');
    expect((await ws.request({ method: 'GET', url: `/api/templates/${original.id}` })).json()).toEqual({
      template: original,
    });
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['a blank name', { name: ' ' }, '/body/name'],
    ['a null name', { name: null }, '/body/name'],
    ['an unknown variable in the subject', { subject: 'Re {subject}' }, '/body/subject'],
    ['an unbalanced body', { body: '}{' }, '/body/body'],
    ['a bad language', { language: 'e1' }, '/body/language'],
    ['an unknown field', { id: 'tpl_other' }, '/body/id'],
  ];

  it.each(invalid)('answers 400 for %s and changes nothing', async (_label, payload, path) => {
    const original = await create(ws);
    const res = await ws.request({ method: 'PATCH', url: `/api/templates/${original.id}`, payload });
    expectProblem(res, 400, 'validation_error', path);
    expect((await ws.request({ method: 'GET', url: `/api/templates/${original.id}` })).json()).toEqual({
      template: original,
    });
  });

  it('answers 404 for a missing id', async () => {
    const res = await ws.request({ method: 'PATCH', url: '/api/templates/tpl_doesnotexist', payload: { name: 'x' } });
    expectProblem(res, 404, 'not_found');
  });
});

describe('PUT /api/templates/:id', () => {
  it('replaces all five fields', async () => {
    const original = await create(ws);
    clock.advance(1000);
    const replacement = {
      name: 'Antwort',
      type: 'reply',
      language: 'de',
      subject: 'Re: {topic}',
      body: 'Danke, {sender_first_name}!',
    };
    const res = await ws.request({ method: 'PUT', url: `/api/templates/${original.id}`, payload: replacement });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      template: {
        id: original.id,
        ...replacement,
        variables: ['sender_first_name', 'topic'],
        createdAt: original.createdAt,
        updatedAt: clock.now().toISOString(),
      },
    });
  });

  it('answers 400 when a field is missing', async () => {
    const original = await create(ws);
    const { language: _omitted, ...partial } = fields();
    const res = await ws.request({ method: 'PUT', url: `/api/templates/${original.id}`, payload: partial });
    expectProblem(res, 400, 'validation_error', '/body/language');
    expect(messageAt(res, '/body/language')).toBe('is required');
  });

  it('answers 400 for bad markup', async () => {
    const original = await create(ws);
    const res = await ws.request({
      method: 'PUT',
      url: `/api/templates/${original.id}`,
      payload: fields({ body: '{Hi|Hello' }),
    });
    expectProblem(res, 400, 'validation_error', '/body/body');
  });

  it('answers 404 for a missing id', async () => {
    const res = await ws.request({ method: 'PUT', url: '/api/templates/tpl_doesnotexist', payload: fields() });
    expectProblem(res, 404, 'not_found');
  });
});

describe('DELETE /api/templates/:id', () => {
  it('deletes: 204, then 404', async () => {
    const template = await create(ws);
    const res = await ws.request({ method: 'DELETE', url: `/api/templates/${template.id}` });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectProblem(await ws.request({ method: 'GET', url: `/api/templates/${template.id}` }), 404, 'not_found');
    expectProblem(await ws.request({ method: 'DELETE', url: `/api/templates/${template.id}` }), 404, 'not_found');
  });
});

describe('POST /api/templates/:id/duplicate', () => {
  it('copies under "<name> (copy)" when no body is sent', async () => {
    const source = await create(ws, { name: 'Original' });
    clock.advance(1000);
    const res = await ws.request({ method: 'POST', url: `/api/templates/${source.id}/duplicate` });
    expect(res.statusCode, res.body).toBe(201);
    const { template } = res.json<{ template: TemplateJson }>();
    expect(res.headers.location).toBe(`/api/templates/${template.id}`);
    expect(template.id).not.toBe(source.id);
    expect(template).toEqual({
      ...source,
      id: template.id,
      name: 'Original (copy)',
      createdAt: clock.now().toISOString(),
      updatedAt: clock.now().toISOString(),
    });
    expect((await ws.request({ method: 'GET', url: `/api/templates/${source.id}` })).json()).toEqual({
      template: source,
    });
  });

  it('accepts an empty JSON body and an empty object', async () => {
    const source = await create(ws, { name: 'Twice' });
    const empty = await ws.request({
      method: 'POST',
      url: `/api/templates/${source.id}/duplicate`,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(empty.json().template.name).toBe('Twice (copy)');
    const object = await ws.request({ method: 'POST', url: `/api/templates/${source.id}/duplicate`, payload: {} });
    expect(object.json().template.name).toBe('Twice (copy)');
  });

  it('uses the name given', async () => {
    const source = await create(ws);
    const res = await ws.request({
      method: 'POST',
      url: `/api/templates/${source.id}/duplicate`,
      payload: { name: 'Variant B' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().template.name).toBe('Variant B');
  });

  it('truncates the default name to 200 characters', async () => {
    const source = await create(ws, { name: 'x'.repeat(198) });
    const res = await ws.request({ method: 'POST', url: `/api/templates/${source.id}/duplicate` });
    expect(res.statusCode).toBe(201);
    expect(res.json().template.name).toBe(`${'x'.repeat(198)} (`);
  });

  const invalid: [string, unknown, string][] = [
    ['an empty name', { name: '' }, '/body/name'],
    ['a blank name', { name: '  ' }, '/body/name'],
    ['a 201-character name', { name: 'n'.repeat(201) }, '/body/name'],
    ['an unknown field', { type: 'reply' }, '/body/type'],
    ['a body that is not an object', 'copy', '/body'],
  ];

  it.each(invalid)('answers 400 for %s', async (_label, payload, path) => {
    const source = await create(ws);
    const before = await countTemplates(ws.id);
    const res = await ws.request({
      method: 'POST',
      url: `/api/templates/${source.id}/duplicate`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
    expectProblem(res, 400, 'validation_error', path);
    expect(await countTemplates(ws.id)).toBe(before);
  });

  it('answers 404 for a missing id', async () => {
    expectProblem(
      await ws.request({ method: 'POST', url: '/api/templates/tpl_doesnotexist/duplicate' }),
      404,
      'not_found',
    );
  });
});

describe('POST /api/templates/:id/preview', () => {
  let template: TemplateJson;

  beforeAll(async () => {
    template = await create(ws, {
      subject: '{Quick|Short} question about {topic}',
      body: '{Hi|Hello|Hey} {recipient_first_name},\n\nwhat does <b>{company}</b> think?\n\n{Best|Cheers},\n{sender_name}',
    });
  });

  it('fills every variable from samples when none are given', async () => {
    const res = await ws.request({ method: 'POST', url: `/api/templates/${template.id}/preview` });
    expect(res.statusCode, res.body).toBe(200);
    const { preview } = res.json<{ preview: { subject: string; body: string; html: string; usedSamples: string[] } }>();
    expect(Object.keys(preview).sort()).toEqual(['body', 'html', 'subject', 'usedSamples']);
    expect(preview.usedSamples).toEqual(['company', 'recipient_first_name', 'sender_name', 'topic']);
    expect(preview.subject).toMatch(new RegExp(`^(Quick|Short) question about ${SAMPLE_VALUES.topic}$`));
    expect(preview.body).toContain(SAMPLE_VALUES.recipient_first_name);
    expect(preview.body).not.toMatch(/[{}]/);
  });

  it('uses the values given and lists only the rest as samples', async () => {
    const res = await ws.request({
      method: 'POST',
      url: `/api/templates/${template.id}/preview`,
      payload: { variables: { recipient_first_name: 'Maria', company: 'Acme & Sons', date: 'unused' }, seed: 7 },
    });
    const { preview } = res.json();
    expect(preview.usedSamples).toEqual(['sender_name', 'topic']);
    expect(preview.body).toMatch(/^(Hi|Hello|Hey) Maria,\n\nwhat does <b>Acme & Sons<\/b> think\?/);
    expect(preview.html).toContain('&lt;b&gt;Acme &amp; Sons&lt;/b&gt;');
    expect(preview.html.startsWith('<p>')).toBe(true);
    expect(preview.html).not.toContain('<b>');
  });

  it('picks the same spintax options for the same seed, and varies with the seed', async () => {
    const render = async (seed?: number) =>
      (
        await ws.request({
          method: 'POST',
          url: `/api/templates/${template.id}/preview`,
          payload: seed === undefined ? {} : { seed },
        })
      ).json().preview;
    expect(await render(12345)).toEqual(await render(12345));
    expect(await render()).toEqual(await render());
    const seen = new Set<string>();
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7, -1, 2 ** 40, Number.MAX_SAFE_INTEGER])
      seen.add(JSON.stringify(await render(seed)));
    expect(seen.size).toBeGreaterThan(1);
  });

  const invalid: [string, unknown, string][] = [
    ['an unknown variable name', { variables: { first_name: 'Maria' } }, '/body/variables/first_name'],
    ['a value over 1000 characters', { variables: { topic: 't'.repeat(1001) } }, '/body/variables/topic'],
    ['a value that is not a string', { variables: { topic: 5 } }, '/body/variables/topic'],
    ['variables that are not an object', { variables: ['topic'] }, '/body/variables'],
    ['a fractional seed', { seed: 1.5 }, '/body/seed'],
    ['a seed given as a string', { seed: '1' }, '/body/seed'],
    ['a seed beyond the safe integers', { seed: 2 ** 60 }, '/body/seed'],
    ['an unknown field', { subject: 'x' }, '/body/subject'],
  ];

  it.each(invalid)('answers 400 for %s', async (_label, payload, path) => {
    const res = await ws.request({
      method: 'POST',
      url: `/api/templates/${template.id}/preview`,
      payload: payload as object,
    });
    expectProblem(res, 400, 'validation_error', path);
  });

  it('lists the known variables when a variable name is unknown', async () => {
    const res = await ws.request({
      method: 'POST',
      url: `/api/templates/${template.id}/preview`,
      payload: { variables: { first_name: 'x' } },
    });
    expect(messageAt(res, '/body/variables/first_name')).toContain(KNOWN_VARIABLES.join(', '));
  });

  it('accepts a value of exactly 1000 characters', async () => {
    const res = await ws.request({
      method: 'POST',
      url: `/api/templates/${template.id}/preview`,
      payload: { variables: { topic: 't'.repeat(1000) } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().preview.subject).toContain('t'.repeat(1000));
  });

  it('answers 404 for a missing id', async () => {
    expectProblem(
      await ws.request({ method: 'POST', url: '/api/templates/tpl_doesnotexist/preview' }),
      404,
      'not_found',
    );
  });
});

describe('POST /api/templates/preview', () => {
  it('renders text that is not saved', async () => {
    const before = await countTemplates(ws.id);
    const res = await ws.request({
      method: 'POST',
      url: '/api/templates/preview',
      payload: {
        subject: 'Hi {recipient_first_name}',
        body: 'Line one\nLine two\n\n{{literal}}',
        variables: { recipient_first_name: 'Sam' },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      preview: {
        subject: 'Hi Sam',
        body: 'Line one\nLine two\n\n{literal}',
        html: '<p>Line one<br>Line two</p>\n<p>{literal}</p>',
        usedSamples: [],
      },
    });
    expect(await countTemplates(ws.id)).toBe(before);
  });

  it('is the same render as a saved template with the same text and seed', async () => {
    const saved = await create(ws, { subject: '{A|B|C|D} {topic}', body: '{1|2|3|4|5} {sender_name}' });
    const payload = { variables: { topic: 'x' }, seed: 99 };
    const fromSaved = await ws.request({ method: 'POST', url: `/api/templates/${saved.id}/preview`, payload });
    const unsaved = await ws.request({
      method: 'POST',
      url: '/api/templates/preview',
      payload: { subject: saved.subject, body: saved.body, ...payload },
    });
    expect(unsaved.json()).toEqual(fromSaved.json());
    expect(unsaved.json().preview.usedSamples).toEqual(['sender_name']);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['a missing subject', { body: 'x' }, '/body/subject'],
    ['a missing body', { subject: 'x' }, '/body/body'],
    ['an unknown variable in the body', { subject: 'x', body: '{foo}' }, '/body/body'],
    ['unbalanced braces in the subject', { subject: 'x}', body: 'y' }, '/body/subject'],
    ['a 301-character subject', { subject: 's'.repeat(301), body: 'y' }, '/body/subject'],
    ['an unknown variable value', { subject: 'x', body: 'y', variables: { nope: 'z' } }, '/body/variables/nope'],
    ['a fractional seed', { subject: 'x', body: 'y', seed: 0.5 }, '/body/seed'],
    ['an unknown field', { subject: 'x', body: 'y', name: 'z' }, '/body/name'],
  ];

  it.each(invalid)('answers 400 for %s', async (_label, payload, path) => {
    const res = await ws.request({ method: 'POST', url: '/api/templates/preview', payload });
    expectProblem(res, 400, 'validation_error', path);
  });
});

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

describe('default templates', () => {
  it('gives a new workspace at least ten English initial and ten English reply templates', async () => {
    const fresh = await t.createWorkspace('fresh');
    const initial = await list(fresh, '?type=initial&language=en');
    const reply = await list(fresh, '?type=reply&language=en');
    expect(initial.pagination.total).toBeGreaterThanOrEqual(10);
    expect(reply.pagination.total).toBeGreaterThanOrEqual(10);
  });

  it('seeds only valid templates that preview without errors', async () => {
    const fresh = await t.createWorkspace('fresh-preview');
    const { templates } = await list(fresh, '?limit=100');
    expect(templates.length).toBeGreaterThanOrEqual(20);
    for (const template of templates) {
      expect(template.variables.every((name) => (KNOWN_VARIABLES as readonly string[]).includes(name))).toBe(true);
      const res = await fresh.request({
        method: 'POST',
        url: `/api/templates/${template.id}/preview`,
        payload: { seed: 3 },
      });
      expect(res.statusCode, `${template.name}: ${res.body}`).toBe(200);
      expect(res.json().preview.usedSamples).toEqual(template.variables);
      const resubmit = await fresh.request({
        method: 'POST',
        url: '/api/templates/preview',
        payload: { subject: template.subject, body: template.body },
      });
      expect(resubmit.statusCode, `${template.name}: ${resubmit.body}`).toBe(200);
    }
  });

  it('gives each workspace its own copies', async () => {
    const one = await t.createWorkspace('copies-1');
    const two = await t.createWorkspace('copies-2');
    const ids1 = (await list(one, '?limit=100')).templates.map((x) => x.id);
    const ids2 = (await list(two, '?limit=100')).templates.map((x) => x.id);
    expect(ids1.length).toBe(ids2.length);
    expect(ids1.filter((id) => ids2.includes(id))).toEqual([]);
  });
});

describe('workspace isolation', () => {
  let owner: TestWorkspace;
  let other: TestWorkspace;
  let template: TemplateJson;

  beforeAll(async () => {
    owner = await t.createWorkspace('owner');
    other = await t.createWorkspace('other');
    template = await create(owner, { name: 'Owner secret template' });
  });

  it('answers 404 to another workspace, exactly as for an id that does not exist', async () => {
    const calls = (id: string) => [
      { method: 'GET' as const, url: `/api/templates/${id}` },
      { method: 'PATCH' as const, url: `/api/templates/${id}`, payload: { name: 'hijacked' } },
      { method: 'PUT' as const, url: `/api/templates/${id}`, payload: fields({ name: 'hijacked' }) },
      { method: 'DELETE' as const, url: `/api/templates/${id}` },
      { method: 'POST' as const, url: `/api/templates/${id}/duplicate` },
      { method: 'POST' as const, url: `/api/templates/${id}/preview` },
    ];
    const foreign = calls(template.id);
    const missing = calls('tpl_doesnotexist');
    for (let i = 0; i < foreign.length; i++) {
      const res = await other.request(foreign[i]);
      const problem = expectProblem(res, 404, 'not_found');
      const control = expectProblem(await other.request(missing[i]), 404, 'not_found');
      expect(problem.detail.replace(template.id, 'ID')).toBe(control.detail.replace('tpl_doesnotexist', 'ID'));
    }
    const still = await owner.request({ method: 'GET', url: `/api/templates/${template.id}` });
    expect(still.json()).toEqual({ template });
  });

  it('does not duplicate into the other workspace', async () => {
    const before = await countTemplates(other.id);
    await other.request({
      method: 'POST',
      url: `/api/templates/${template.id}/duplicate`,
      payload: { name: 'stolen' },
    });
    expect(await countTemplates(other.id)).toBe(before);
  });

  it('keeps the other workspace’s list, search and export free of it', async () => {
    const everything = await list(other, '?limit=100');
    expect(everything.templates.map((x) => x.id)).not.toContain(template.id);
    expect((await list(other, '?q=owner%20secret')).pagination.total).toBe(0);
    expect((await list(owner, '?q=owner%20secret')).pagination.total).toBe(1);
    const exported = (await other.request({ method: 'GET', url: '/api/templates/export' })).json();
    expect(exported.templates.map((x: Fields) => x.name)).not.toContain('Owner secret template');
  });
});

describe('OpenAPI', () => {
  it('describes every template route', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const paths = Object.keys(spec.paths);
    for (const path of [
      '/api/templates',
      '/api/templates/export',
      '/api/templates/import',
      '/api/templates/preview',
      '/api/templates/{id}',
      '/api/templates/{id}/duplicate',
      '/api/templates/{id}/preview',
    ]) {
      expect(paths).toContain(path);
    }
    expect(Object.keys(spec.paths['/api/templates/{id}']).sort()).toEqual(['delete', 'get', 'patch', 'put']);
  });
});
