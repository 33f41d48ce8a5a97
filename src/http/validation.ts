import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { ValidationError, type FieldError } from './errors.js';

function makeAjv(coerceTypes: boolean | 'array') {
  // removeAdditional is off on purpose: an unknown field is a 400, so a typo never passes silently.
  const ajv = new Ajv.default({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv('array');

/**
 * Bodies are JSON and must carry the right types ("5" is not a number); query strings and path
 * parameters are text, so they are coerced.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);

/**
 * C0 control characters other than tab, line feed and carriage return (template bodies have
 * lines), DEL, and a surrogate half without its other half. PostgreSQL cannot store a NUL (a
 * 500 there, a silent difference from SQLite), a lone surrogate is stored as U+FFFD, and the
 * others only ever arrive to smuggle something into a log line, a header or a mail.
 */
const FORBIDDEN_CHARACTERS =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const ALL_FORBIDDEN_CHARACTERS = new RegExp(FORBIDDEN_CHARACTERS, 'g');
export const CONTROL_CHARACTERS_MESSAGE = 'must not contain control characters';
/** Enough to name what is wrong; a body full of NULs is not answered with a megabyte of pointers. */
const MAX_REPORTED = 20;

function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1').replace(ALL_FORBIDDEN_CHARACTERS, '\ufffd');
}

/**
 * Every string in `value` (and every object key) that holds a forbidden character, as request
 * pointers under `root` (`/body/tags/1`). Walked with a stack of its own: a body nested a
 * hundred thousand levels deep must not overflow the call stack.
 */
export function controlCharacterErrors(root: string, value: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const stack: Array<[string, unknown]> = [[root, value]];
  while (stack.length > 0 && errors.length < MAX_REPORTED) {
    const [path, node] = stack.pop()!;
    if (typeof node === 'string') {
      if (FORBIDDEN_CHARACTERS.test(node)) errors.push({ path, message: CONTROL_CHARACTERS_MESSAGE });
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([`${path}/${i}`, node[i]]);
    } else if (typeof node === 'object' && node !== null) {
      const entries = Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const childPath = `${path}/${pointerToken(key)}`;
        if (FORBIDDEN_CHARACTERS.test(key)) errors.push({ path: childPath, message: CONTROL_CHARACTERS_MESSAGE });
        else stack.push([childPath, child]);
      }
    }
  }
  return errors;
}

/**
 * A preValidation hook for every route: a forbidden character anywhere in the path parameters,
 * the query string or the body is a 400 naming each field, before any schema or handler sees it.
 * One rule here rather than a pattern on each of a few hundred string schemas, which a new route
 * would forget.
 */
export function rejectControlCharacters(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: (error?: Error) => void,
): void {
  const errors = [
    ...controlCharacterErrors('/params', request.params),
    ...controlCharacterErrors('/query', request.query),
    ...controlCharacterErrors('/body', request.body),
  ];
  if (errors.length === 0) return done();
  const first = errors[0]!;
  const where = first.path.split('/').filter(Boolean).join('.');
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  done(new ValidationError(`${where} ${CONTROL_CHARACTERS_MESSAGE}${more}`, errors));
}

/** What the schema validator reports about one value (Ajv's ErrorObject, the parts read here). */
export interface SchemaIssue {
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

// Patterns the schemas use, as a person would describe them. A pattern missing here still gets
// a sentence, never the expression itself: people read these messages next to a form field.
const PATTERN_WORDS: Record<string, string> = {
  '\\S': 'must not be empty',
  '^[^\\s@]+@[^\\s@]+$': 'must be an email address, like name@example.com',
};

const FORMAT_WORDS: Record<string, string> = {
  email: 'must be an email address, like name@example.com',
  hostname: 'must be a host name, like mail.example.com',
  uri: 'must be a full address, like https://example.com/hook',
  url: 'must be a full address, like https://example.com/hook',
  'date-time': 'must be a date and time, like 2026-01-31T09:00:00Z',
  date: 'must be a date, like 2026-01-31',
  uuid: 'must be an id as the API gave it',
};

const TYPE_WORDS: Record<string, string> = {
  integer: 'must be a whole number',
  number: 'must be a number',
  string: 'must be text',
  boolean: 'must be true or false',
  array: 'must be a list',
  object: 'must be an object',
};

/**
 * One issue in plain words, the single mapping from schema errors to what a person reads: the
 * API's problem+json `errors[]` carry it and the dashboard shows it as it is.
 */
export function plainMessage(issue: SchemaIssue): string {
  const p = issue.params;
  switch (issue.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'enum':
      return Array.isArray(p.allowedValues)
        ? `must be one of ${p.allowedValues.join(', ')}`
        : 'is not one of the allowed values';
    case 'pattern':
      return PATTERN_WORDS[String(p.pattern)] ?? 'is not in the expected form';
    case 'format':
      return FORMAT_WORDS[String(p.format)] ?? 'is not in the expected form';
    case 'type':
      return TYPE_WORDS[String(p.type).split(',')[0]!] ?? 'has the wrong type';
    case 'minLength':
      return Number(p.limit) <= 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `must be more than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`;
    case 'minItems':
      return Number(p.limit) <= 1 ? 'must not be empty' : `must have at least ${String(p.limit)} items`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'uniqueItems':
      return 'must not list the same item twice';
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    default:
      return issue.message ?? 'is invalid';
  }
}
