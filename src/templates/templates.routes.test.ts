import { beforeAll, describe, expect, it } from 'vitest';
import { type TestWorkspace } from '../../test/helpers/test-app.js';
import { KNOWN_VARIABLES } from './render.js';
import { expectProblem } from '../../test/helpers/problem.js';
import type { Fields, TemplateJson } from '../../test/helpers/templates-api.js';
import {
  START,
  clock,
  countTemplates,
  create,
  emptyWorkspace,
  fields,
  list,
  messageAt,
  t,
  useTemplatesApp,
  ws,
} from '../../test/helpers/templates-api.js';

useTemplatesApp();

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
