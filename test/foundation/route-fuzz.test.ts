import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestWorkspace } from '../helpers/test-app.js';
import { testDialect } from '../helpers/test-database.js';

/*
 * Issues 12 and 28: every route of /openapi.json, driven with generated requests: valid ones built
 * from the operation's own schemas, invalid ones made from them by one mutation, and hostile ones
 * with one value (a path id, a query parameter, a field at any depth) replaced by what an attacker
 * sends: NUL and other control characters, lone surrogates, huge, negative and non-finite numbers,
 * deep nesting and long strings. Whatever comes in, the answer is never a 5xx, it is valid against
 * the schema the operation declares for its status (a problem+json for an error it does not list),
 * and a 4xx leaves every row of the domain tables as it was.
 *
 * RUNS_PER_ROUTE requests per operation, from a fixed seed, so a failure replays exactly (fast-check
 * prints the counterexample and its path). PostgreSQL gets the first half of the same requests: what
 * differs there is how the database takes a value (NUL, lone surrogates, huge numbers), which the
 * hostile requests among them reach; the routes' own checks are proven by the full run on SQLite.
 */
const SEED = 20261126;
const RUNS_PER_ROUTE = testDialect === 'postgres' ? 20 : 40;

const DOMAIN_TABLES = [
  'workspaces',
  'api_keys',
  'templates',
  'mailboxes',
  'warmup_messages',
  'mailbox_plans',
  'interactions',
  'daily_stats',
  'dmarc_sources',
] as const;

type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
};

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}

interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

let t: TestApp;
let ws: TestWorkspace;
let spec: Document;
/** Ids the generated paths use besides random strings: this workspace's, and another workspace's (a 404). */
const knownIds = { templates: [] as string[], mailboxes: [] as string[] };

function resolve(schema: Schema): Schema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.split('/').pop()!;
  return resolve(spec.components?.schemas?.[name] ?? {});
}

/** A value the schema accepts (most of the time: cross-field rules such as template syntax are not in the schema). */
function valueOf(raw: Schema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(raw);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if ('const' in schema) return fc.constant(schema.const);
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return fc.oneof(...union.map((s) => valueOf(s, depth)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({
        min: typeof schema.minimum === 'number' ? schema.minimum : -1000,
        max: typeof schema.maximum === 'number' ? schema.maximum : 1000,
      });
    case 'number':
      return fc.double({
        min: typeof schema.minimum === 'number' ? schema.minimum : -1000,
        max: typeof schema.maximum === 'number' ? schema.maximum : 1000,
        noNaN: true,
      });
    case 'string':
      return stringOf(schema);
    case 'array': {
      if (depth > 3) return fc.constant([]);
      const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return fc.array(valueOf(schema.items ?? {}, depth + 1), { minLength, maxLength: Math.max(minLength, 3) });
    }
    case 'object':
      return objectOf(schema, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Days around now, so that generated ranges are often short enough for the statistics routes. */
const recentDate = fc.date({
  min: new Date('2025-11-01T00:00:00Z'),
  max: new Date('2027-11-01T00:00:00Z'),
  noInvalidDate: true,
});

function stringOf(schema: Schema): fc.Arbitrary<string> {
  if (schema.format === 'date') return recentDate.map((d) => d.toISOString().slice(0, 10));
  if (schema.format === 'date-time') return recentDate.map((d) => d.toISOString());
  if (schema.format === 'email') return fc.emailAddress();
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern));
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : 40, Math.max(minLength, 40));
  return fc.string({ minLength, maxLength, unit: 'grapheme' });
}

function objectOf(schema: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  if (depth > 3) return fc.constant({});
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, value] of Object.entries(properties)) record[key] = valueOf(value, depth + 1);
  return fc.record(record, { requiredKeys: schema.required ?? [] });
}

/** Strings no schema should let through to a database, a log line or a mail header. */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    'x%00y',
    '\u001b[2J\u0007',
    '\u007f',
    '\ud800',
    'x\udfffy',
    '\r\nSet-Cookie: a=b',
    '../../etc/passwd',
    "' OR 1=1 --",
    '1e300',
    '-1',
    '-0',
    'NaN',
    'Infinity',
    '9'.repeat(400),
    'A'.repeat(100_000),
  ),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 8 }),
);

/** Numbers past every bound: huge, negative, fractional, and JSON's largest. */
const hostileNumber: fc.Arbitrary<number> = fc.constantFrom(
  1e300,
  -1e300,
  Number.MAX_VALUE,
  -1,
  -0,
  0.5,
  2 ** 31,
  2 ** 53 + 2,
  2 ** 63,
);

/** An array nested `depth` levels deep: a parser or a walker that recurses overflows its stack. */
function nested(depth: number): unknown {
  let value: unknown = 'deep';
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.constantFrom(nested(64), nested(500), { ['k\u0000']: 1 }, ['\u0000']) },
);

/** `value` with the leaf at one path (chosen by `n`) replaced by `hostile`; a non-object is replaced whole. */
function withHostile(value: unknown, n: number, hostile: unknown): unknown {
  if (Array.isArray(value) && value.length > 0) {
    const i = n % value.length;
    return value.map((item, j) => (j === i ? withHostile(item, Math.floor(n / value.length), hostile) : item));
  }
  if (isObject(value) && Object.keys(value).length > 0) {
    const keys = Object.keys(value);
    const key = keys[n % keys.length]!;
    return { ...value, [key]: withHostile(value[key], Math.floor(n / keys.length), hostile) };
  }
  return hostile;
}

type Body = { kind: 'json'; value: unknown } | { kind: 'text'; value: string };

/** One mutation of a valid body: a field dropped, a field of the wrong type, an unknown field, or no JSON at all. */
function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<Body> {
  return fc.oneof(
    fc.tuple(valid, fc.nat()).map(([value, n]): Body => {
      if (!isObject(value) || Object.keys(value).length === 0) return { kind: 'json', value: [] };
      const keys = Object.keys(value);
      const { [keys[n % keys.length]!]: _dropped, ...rest } = value;
      return { kind: 'json', value: rest };
    }),
    fc.tuple(valid, fc.nat(), fc.jsonValue({ maxDepth: 2 })).map(([value, n, wrong]): Body => {
      if (!isObject(value) || Object.keys(value).length === 0) return { kind: 'json', value: wrong };
      const keys = Object.keys(value);
      return { kind: 'json', value: { ...value, [keys[n % keys.length]!]: wrong } };
    }),
    fc
      .tuple(valid, fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }))
      .map(([value, key, extra]): Body => ({
        kind: 'json',
        value: isObject(value) ? { ...value, [`x_${key}`]: extra } : extra,
      })),
    fc.jsonValue({ maxDepth: 3 }).map((value): Body => ({ kind: 'json', value })),
    fc.string({ maxLength: 30 }).map((value): Body => ({ kind: 'text', value })),
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pathIds(path: string): fc.Arbitrary<string> {
  const ids = path.startsWith('/api/templates') ? knownIds.templates : knownIds.mailboxes;
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...ids) },
    { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
    { weight: 1, arbitrary: hostileString },
  );
}

/** Each optional parameter left out half the time; a value from its schema, now and then any string. */
function queryOf(parameters: Parameter[]): fc.Arbitrary<Record<string, string>> {
  const record: Record<string, fc.Arbitrary<string | null>> = {};
  for (const parameter of parameters) {
    const fromSchema =
      parameter.name === 'mailboxId'
        ? pathIds('/api/mailboxes')
        : valueOf(parameter.schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    const value = fc.oneof(
      { weight: 8, arbitrary: fromSchema },
      { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
      { weight: 1, arbitrary: hostileString },
    );
    record[parameter.name] = parameter.required ? value : fc.option(value, { freq: 2 });
  }
  return fc
    .record(record)
    .map(
      (values) => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null)) as Record<string, string>,
    );
}

/**
 * Percent-encoding that also takes a lone surrogate (encodeURIComponent throws on one): as the three
 * bytes a careless encoder writes (CESU-8), which are not UTF-8, so the server must refuse them.
 */
function encode(text: string): string {
  return text.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|[^\ud800-\udfff]+|[\ud800-\udbff][\udc00-\udfff]/g,
    (part) => {
      if (part.length !== 1 || !/[\ud800-\udfff]/.test(part)) return encodeURIComponent(part);
      const unit = part.charCodeAt(0);
      return [0xed, 0xa0 | ((unit >> 6) & 0x1f), 0x80 | (unit & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    },
  );
}

/** The requests of one operation: path, query and body, valid or mutated. */
function requestsOf(method: string, path: string, operation: Operation): fc.Arbitrary<InjectOptions> {
  const parameters = operation.parameters ?? [];
  const query = queryOf(parameters.filter((p) => p.in === 'query'));
  const url = path.includes('{id}') ? pathIds(path).map((id) => path.replace('{id}', encode(id))) : fc.constant(path);
  const bodySchema = operation.requestBody?.content['application/json']?.schema;
  const body: fc.Arbitrary<Body | undefined> = bodySchema
    ? fc.oneof(
        valueOf(bodySchema).map((value): Body => ({ kind: 'json', value })),
        mutated(valueOf(bodySchema)),
        fc
          .tuple(valueOf(bodySchema), fc.nat(), hostileValue)
          .map(([value, n, hostile]): Body => ({ kind: 'json', value: withHostile(value, n, hostile) })),
        fc.constantFrom<Body>(
          { kind: 'text', value: `${'['.repeat(100_000)}${']'.repeat(100_000)}` },
          { kind: 'text', value: `{"a":"${'x'.repeat(2 * 1024 * 1024)}"}` },
        ),
      )
    : fc.constant(undefined);
  return fc.tuple(url, query, body).map(([target, search, payload]) => {
    const queryString = Object.entries(search)
      .map(([name, value]) => `${encode(name)}=${encode(value)}`)
      .join('&');
    const options: InjectOptions = {
      method: method.toUpperCase() as InjectOptions['method'],
      url: queryString ? `${target}?${queryString}` : target,
    };
    if (payload?.kind === 'json') options.payload = keepOffTheNetwork(operation.operationId, payload.value) as object;
    if (payload?.kind === 'text') {
      options.payload = payload.value;
      // a text that starts like JSON goes to the JSON parser: deep nesting and a body over the limit
      options.headers = { 'content-type': /^[[{]/.test(payload.value) ? 'application/json' : 'text/plain' };
    }
    return options;
  });
}

/**
 * Only the network step is skipped: a new mailbox is stored with `verify: false`, and an update
 * leaves out the fields that make the service log in again (password, servers, provider). Resume
 * logs in too, but only to the mailboxes seeded below, whose servers are a closed loopback port.
 */
function keepOffTheNetwork(operationId: string, body: unknown): unknown {
  if (!isObject(body)) return body;
  if (operationId === 'createMailbox') return { ...body, verify: false };
  if (operationId === 'updateMailbox') {
    const { password: _password, imap: _imap, smtp: _smtp, provider: _provider, ...rest } = body;
    return rest;
  }
  return body;
}

const ajv = new Ajv.default({ strict: false, allErrors: true });
addFormats.default(ajv);
const responseValidators = new Map<string, ValidateFunction | null>();

/** A copy without `$id`s: every response schema is compiled with the components beside it, and an id may be added once. */
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== '$id')
      .map(([k, v]) => [k, withoutIds(v)]),
  );
}

/**
 * What is wrong with an answer against the operation's declared response for its status (an error it
 * does not list must still be a problem+json), or undefined when nothing is.
 */
function violationOf(operation: Operation, res: LightMyRequestResponse): string | undefined {
  const status = String(res.statusCode);
  const type = String(res.headers['content-type'] ?? '');
  const declared =
    operation.responses?.[status] ??
    (res.statusCode >= 400
      ? { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } }
      : undefined);
  if (!declared) return `status ${status} is not declared`;
  // a redirect is followed, not read
  if (res.statusCode >= 300 && res.statusCode < 400) return undefined;
  if (res.statusCode >= 400 && !type.startsWith('application/problem+json')) return `an error as ${type || 'no type'}`;
  const content = declared.content ?? {};
  if (Object.keys(content).length === 0) return res.body === '' ? undefined : 'a body where none is declared';
  if (!/json/.test(type))
    return Object.keys(content).some((declaredType) => type.startsWith(declaredType))
      ? undefined
      : `${type} is not declared`;
  // the declared media type the answer came as (an export is CSV, JSON or PDF), else the JSON one
  const mediaType =
    Object.keys(content).find((declaredType) => type.startsWith(declaredType)) ??
    Object.keys(content).find((declaredType) => /json/.test(declaredType));
  const schema = mediaType === undefined ? undefined : content[mediaType]?.schema;
  if (!schema) return undefined;
  const key = `${operation.operationId} ${status} ${mediaType}`;
  if (!responseValidators.has(key))
    responseValidators.set(
      key,
      ajv.compile({ ...(withoutIds(schema) as object), components: withoutIds(spec.components) }),
    );
  const validate = responseValidators.get(key)!;
  if (!validate) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return 'not JSON';
  }
  return validate(body) ? undefined : ajv.errorsText(validate.errors);
}

async function snapshot(): Promise<Record<string, unknown[]>> {
  // the tables side by side: twice a request, one after another they were much of the run on PostgreSQL
  const read = await Promise.all(DOMAIN_TABLES.map((table) => t.database.db.selectFrom(table).selectAll().execute()));
  const tables: Record<string, unknown[]> = {};
  DOMAIN_TABLES.forEach((table, index) => {
    // Compared as a set: the order rows come back in is not part of the data. A key's last use is
    // written once a minute whatever the answer: bookkeeping, not a change the request made.
    tables[table] = read[index].map(({ last_used_at: _used, ...row }) => JSON.stringify(row)).sort();
  });
  return tables;
}

async function seedMailbox(workspace: TestWorkspace, email: string, pause: boolean): Promise<string> {
  // A closed loopback port: resuming it fails at once with a 422, without leaving the machine.
  const server = { host: '127.0.0.1', port: 9, secure: true };
  const res = await workspace.request({
    method: 'POST',
    url: '/api/mailboxes',
    payload: {
      email,
      password: 'app-password-1234',
      provider: 'custom',
      connectionType: 'imap',
      imap: server,
      smtp: server,
      verify: false,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json<{ mailbox: { id: string } }>().mailbox.id;
  if (pause)
    expect((await workspace.request({ method: 'POST', url: `/api/mailboxes/${id}/pause` })).statusCode).toBe(200);
  return id;
}

beforeAll(async () => {
  t = await createTestApp();
  ws = t.workspace;
  const other = await t.createWorkspace('other');
  spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<Document>();

  const templates = (await ws.request({ method: 'GET', url: '/api/templates?limit=3' })).json<{
    templates: { id: string }[];
  }>().templates;
  const foreign = (await other.request({ method: 'GET', url: '/api/templates?limit=1' })).json<{
    templates: { id: string }[];
  }>().templates;
  knownIds.templates.push(...templates.map((x) => x.id), ...foreign.map((x) => x.id));
  knownIds.mailboxes.push(
    await seedMailbox(ws, 'active@fuzz.test', false),
    await seedMailbox(ws, 'paused@fuzz.test', true),
    await seedMailbox(other, 'foreign@fuzz.test', true),
  );
});

afterAll(async () => {
  await t?.close();
});

describe(`every route of /openapi.json, fuzzed (${testDialect})`, () => {
  it('answers generated and hostile requests without a 5xx, as each schema declares, and a 4xx changes nothing', async () => {
    const figures = { requests: 0, operations: 0, serverErrors: 0, schemaViolations: 0 };
    const violations: string[] = [];
    // Deletes go last, so the routes before them still find the seeded templates and mailboxes.
    const operations = Object.entries(spec.paths)
      .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })))
      .sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    expect(operations.length).toBeGreaterThan(20);
    for (const { path, method, operation } of operations) {
      figures.operations += 1;
      const started = Date.now();
      await fc.assert(
        fc.asyncProperty(requestsOf(method, path, operation), async (request) => {
          const before = await snapshot();
          const res = await ws.request(request);
          figures.requests += 1;
          const label = `${operation.operationId}: ${request.method} ${String(request.url).slice(0, 200)} → ${res.statusCode} ${res.body.slice(0, 300)}`;
          if (res.statusCode >= 500) figures.serverErrors += 1;
          expect(res.statusCode, label).toBeLessThan(500);
          const violation = violationOf(operation, res);
          if (violation) {
            figures.schemaViolations += 1;
            // one line per operation, status and fault, with the first request that showed it
            const kind = `${operation.operationId} ${res.statusCode}: ${violation}`;
            if (!violations.some((line) => line.startsWith(kind))) violations.push(`${kind} — ${label}`);
          }
          if (res.statusCode >= 400) expect(await snapshot(), label).toEqual(before);
        }),
        { seed: SEED, numRuns: RUNS_PER_ROUTE },
      );
      if (process.env.FUZZ_TIMING) console.info(`${Date.now() - started} ms ${operation.operationId}`);
    }
    console.info(`route fuzz (${testDialect}): ${JSON.stringify(figures)}`);
    expect(violations).toEqual([]);
    expect(figures.serverErrors).toBe(0);
  }, 300_000);
});
