/*
 * Bulk import: a CSV file of mailboxes, one per row, each connected as POST /api/mailboxes would
 * connect it (login checked, password encrypted), a few rows at a time. The answer is one result
 * per row — created, already there, or failed with the reason — and never holds a password.
 * Importing the same file again creates nothing twice: an address already connected is "exists".
 */
import { CsvError, parse } from 'csv-parse/sync';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { AppError, ConflictError, ValidationError } from '../http/errors.js';
import { plainMessage, validatorCompiler } from '../http/validation.js';
import { ConnectionChecksBusyError } from './connection-guard.js';
import { CreateMailboxBody, type ImportRowResult, type MailboxImport } from './mailboxes.schemas.js';
import { mailboxLimitReached, type MailboxesService } from './mailboxes.service.js';

/** Rows verified at the same time: enough to import hundreds in minutes, few enough for a provider's connection caps. */
export const IMPORT_CONCURRENCY = 8;
/** Rows one file may hold; the workspace's mailbox limit applies to each row on top. */
export const MAX_IMPORT_ROWS = 5_000;
/**
 * Rows of all imports together logging in at once, in this process (each holds an IMAP and an SMTP
 * connection): without it, four tenants importing at once held 64 outbound connections.
 */
export const MAX_IMPORT_ROWS_AT_ONCE = 16;

/** Workspaces with an import running in this process. */
const importing = new Set<string>();
/** Free places of MAX_IMPORT_ROWS_AT_ONCE, and the rows waiting for one, first come first served. */
let freeRowSlots = MAX_IMPORT_ROWS_AT_ONCE;
const waitingRows: Array<() => void> = [];

async function rowSlot(): Promise<() => void> {
  if (freeRowSlots > 0) freeRowSlots -= 1;
  else await new Promise<void>((resolve) => waitingRows.push(resolve));
  return () => {
    const next = waitingRows.shift();
    if (next) next();
    else freeRowSlots += 1;
  };
}

/**
 * 409 while `workspaceId` has an import running: a second file of the same tenant would only double
 * its outbound connections. Synchronous, so a route can answer it before it starts a streamed answer.
 */
export function assertNoImportRunning(workspaceId: string): void {
  if (importing.has(workspaceId)) {
    throw new AppError(
      409,
      'import_in_progress',
      'an import of this workspace is still running; send the next file when it has finished',
    );
  }
}

/**
 * The documented columns (docs/mailboxes-import.csv), in the order a template lists them, with the
 * request field each fills. Headers are matched without case, spaces, `_` or `-`.
 */
export const IMPORT_COLUMNS = [
  'email',
  'name',
  'provider',
  'password',
  'username',
  'imap_host',
  'imap_port',
  'imap_secure',
  'imap_username',
  'smtp_host',
  'smtp_port',
  'smtp_secure',
  'smtp_username',
  'start_volume',
  'ramp_up_increment',
  'daily_limit',
  'reply_rate',
  'send_window_start',
  'send_window_end',
  'timezone',
  'weekdays_only',
  'language',
] as const;
type Column = (typeof IMPORT_COLUMNS)[number];

const ALIASES: Record<string, Column> = { address: 'email', apppassword: 'password', user: 'username' };

/** Where each column lands in a create body; also how a validation error is named back as its column. */
const FIELD_OF: Record<Column, string> = {
  email: '/email',
  name: '/name',
  provider: '/provider',
  password: '/password',
  username: '',
  imap_host: '/imap/host',
  imap_port: '/imap/port',
  imap_secure: '/imap/secure',
  imap_username: '/imap/username',
  smtp_host: '/smtp/host',
  smtp_port: '/smtp/port',
  smtp_secure: '/smtp/secure',
  smtp_username: '/smtp/username',
  start_volume: '/warmup/startVolume',
  ramp_up_increment: '/warmup/rampUpIncrement',
  daily_limit: '/warmup/dailyLimit',
  reply_rate: '/warmup/replyRate',
  send_window_start: '/warmup/sendWindow/start',
  send_window_end: '/warmup/sendWindow/end',
  timezone: '/warmup/timezone',
  weekdays_only: '/warmup/weekdaysOnly',
  language: '/warmup/language',
};
const NUMBER_COLUMNS = new Set<Column>([
  'imap_port',
  'smtp_port',
  'start_volume',
  'ramp_up_increment',
  'daily_limit',
  'reply_rate',
]);
const BOOLEAN_COLUMNS = new Set<Column>(['imap_secure', 'smtp_secure', 'weekdays_only']);

const normalise = (header: string): string => header.toLowerCase().replace(/[\s_-]+/g, '');
const COLUMN_BY_KEY = new Map<string, Column>([
  ...IMPORT_COLUMNS.map((column) => [normalise(column), column] as const),
  ...Object.entries(ALIASES),
]);

/** One data row of the file: its line (the header is line 1) and the create body it makes. */
export interface ImportRow {
  line: number;
  email: string | null;
  body?: CreateMailboxBody;
  /** Why the row cannot be a create body: its columns named, never its password. */
  error?: string;
}

let validateBody: ValidateFunction | undefined;
function validator(): ValidateFunction {
  validateBody ??= validatorCompiler({
    schema: CreateMailboxBody,
    httpPart: 'body',
    method: 'POST',
    url: '/api/mailboxes/import',
  }) as ValidateFunction;
  return validateBody;
}

function cellValue(column: Column, text: string): unknown {
  if (NUMBER_COLUMNS.has(column) && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (BOOLEAN_COLUMNS.has(column)) {
    const word = text.toLowerCase();
    if (['true', 'yes', '1'].includes(word)) return true;
    if (['false', 'no', '0'].includes(word)) return false;
  }
  // anything else stays text, so the schema says what is wrong with it ("must be a whole number")
  return text;
}

function setPath(target: Record<string, unknown>, pointer: string, value: unknown): void {
  const keys = pointer.split('/').filter(Boolean);
  let node = target;
  for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
  node[keys[keys.length - 1]!] = value;
}

function columnOf(instancePath: string): string {
  const found = IMPORT_COLUMNS.find((column) => FIELD_OF[column] !== '' && FIELD_OF[column] === instancePath);
  return found ?? (instancePath.replace(/^\//, '').replace(/\//g, '.') || 'row');
}

function describeErrors(errors: ErrorObject[]): string {
  const messages = errors
    // a union's or an enum's failure is clearer from its own message; an if/then wrapper adds nothing
    .filter((error) => error.keyword !== 'if')
    .map((error) => {
      const missing = (error.params as { missingProperty?: string }).missingProperty;
      if (error.keyword === 'required' && missing !== undefined) {
        const column = columnOf(`${error.instancePath}/${missing}`);
        return column === 'provider'
          ? 'provider is required (or imap_host and smtp_host for a custom server)'
          : `${column} is required`;
      }
      return `${columnOf(error.instancePath)} ${plainMessage(error)}`;
    });
  return [...new Set(messages)].join('; ');
}

function rowToBody(record: Record<string, string>): { body?: CreateMailboxBody; error?: string } {
  const body: Record<string, unknown> = { connectionType: 'imap' };
  let username: string | undefined;
  for (const [column, raw] of Object.entries(record) as Array<[Column, string]>) {
    const text = raw.trim();
    if (text === '') continue;
    if (column === 'username') username = text;
    else setPath(body, FIELD_OF[column], cellValue(column, text));
  }
  // a password column keeps its inner spaces: the service removes them as it does for the API
  if (typeof record.password === 'string' && record.password.trim() !== '') body.password = record.password;
  if (username !== undefined) {
    for (const side of ['imap', 'smtp'] as const) {
      const server = (body[side] ??= {}) as Record<string, unknown>;
      server.username ??= username;
    }
  }
  if (body.provider === undefined && (body.imap !== undefined || body.smtp !== undefined)) {
    const servers = [body.imap, body.smtp] as Array<Record<string, unknown> | undefined>;
    if (servers.some((server) => server?.host !== undefined)) body.provider = 'custom';
  }
  const validate = validator();
  if (!validate(body)) return { error: describeErrors(validate.errors ?? []) };
  return { body: body as CreateMailboxBody };
}

/**
 * The separator the header line uses: spreadsheets in much of Europe write `;`, and some tools
 * write tabs. The column names never hold a separator, so the most frequent one in the first line
 * is the file's; a file with none (a single column) is read as commas.
 */
function delimiterOf(text: string): string {
  const end = text.indexOf('\n');
  const header = end === -1 ? text : text.slice(0, end);
  let best = ',';
  let bestCount = 0;
  for (const candidate of [',', ';', '\t']) {
    const count = header.split(candidate).length - 1;
    if (count > bestCount) [best, bestCount] = [candidate, count];
  }
  return best;
}

const MAX_TYPO = 2;

/** Edit distance between two short names, or MAX_TYPO + 1 as soon as it must exceed it. */
function boundedDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > MAX_TYPO) return MAX_TYPO + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowBest = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      rowBest = Math.min(rowBest, current[j]!);
    }
    if (rowBest > MAX_TYPO) return MAX_TYPO + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The known column a misspelt header most likely meant, within two edits. A header longer than
 * any column name plus two cannot be within reach, so the work per header is bounded and the
 * whole check stays linear in the file.
 */
function nearestColumn(name: string): Column | undefined {
  const key = normalise(name);
  let best: Column | undefined;
  let bestDistance = MAX_TYPO + 1;
  for (const [known, column] of COLUMN_BY_KEY) {
    const distance = boundedDistance(key, known);
    if (distance < bestDistance) [best, bestDistance] = [column, distance];
  }
  return best;
}

/**
 * The file's rows as create bodies. A file that is not CSV, has no email or password column, has
 * an unknown column (a typo must not pass silently) or too many rows is a 400 as a whole; a bad
 * row is that row's error only.
 */
export function parseMailboxCsv(text: string, maxRows = MAX_IMPORT_ROWS): ImportRow[] {
  let header: Column[] = [];
  let parsed: Array<{ record: Record<string, string>; info: { lines: number } }>;
  try {
    parsed = parse(text, {
      bom: true,
      delimiter: delimiterOf(text),
      skip_empty_lines: true,
      relax_column_count: false,
      info: true,
      // the first line names the columns
      columns: (names: string[]) => {
        const unknown = names.filter((name) => !COLUMN_BY_KEY.has(normalise(name)));
        if (unknown.length > 0) {
          const guess = nearestColumn(unknown[0]!);
          const hint = guess === undefined ? '' : ` (did you mean ${guess}?)`;
          throw new ValidationError(
            `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `"${name}"`).join(', ')}${hint}; the columns are ${IMPORT_COLUMNS.join(', ')}`,
            [{ path: '/body', message: `unknown column "${unknown[0]}"${hint}` }],
          );
        }
        header = names.map((name) => COLUMN_BY_KEY.get(normalise(name))!);
        const twice = header.find((column, i) => header.indexOf(column) !== i);
        if (twice !== undefined) {
          throw new ValidationError(`the column ${twice} appears twice`, [
            { path: '/body', message: `column ${twice} appears twice` },
          ]);
        }
        for (const required of ['email', 'password'] as const) {
          if (!header.includes(required)) {
            throw new ValidationError(
              `the file needs an ${required} column; the columns are ${IMPORT_COLUMNS.join(', ')}`,
              [{ path: '/body', message: `has no ${required} column` }],
            );
          }
        }
        return header;
      },
      // csv-parse stops at the first record past this, so a huge file is never all turned into rows
      to: maxRows + 1,
    }) as unknown as typeof parsed;
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    if (error instanceof CsvError) {
      throw new ValidationError(`the file is not valid CSV: ${error.message}`, [
        { path: '/body', message: 'is not valid CSV' },
      ]);
    }
    throw error;
  }
  if (parsed.length === 0) {
    throw new ValidationError('the file has no mailbox rows under its header', [
      { path: '/body', message: 'has no rows' },
    ]);
  }
  if (parsed.length > maxRows) {
    throw new ValidationError(`a file may hold at most ${maxRows} mailboxes; split it`, [
      { path: '/body', message: `has more than ${maxRows} rows` },
    ]);
  }
  return parsed.map(({ record, info }) => {
    const email = record.email?.trim() || null;
    return { line: info.lines, email, ...rowToBody(record) };
  });
}

/**
 * Rows share the process's cap on connection checks with every other check (connection-guard.ts);
 * a row that found no place in the guard's wait queues again instead of failing, this many times.
 */
const BUSY_RETRIES = 30;

async function createWhenPlaceFree(
  service: Pick<MailboxesService, 'create'>,
  workspaceId: string,
  body: CreateMailboxBody,
): Promise<Awaited<ReturnType<MailboxesService['create']>>> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await service.create(workspaceId, body, { roundTrip: false });
    } catch (error) {
      if (!(error instanceof ConnectionChecksBusyError) || attempt >= BUSY_RETRIES) throw error;
    }
  }
}

/** Runs `work` over `items`, at most `limit` at a time, in order of start. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item);
    }
  });
  await Promise.all(runners);
}

export interface ImportOptions {
  concurrency?: number;
  /** Called as each row is decided, in the order they finish (how the dashboard shows progress). */
  onRow?: (result: ImportRowResult) => void;
  /** Receives an unexpected error of one row (logged; the row fails, the others go on). */
  onError?: (error: unknown) => void;
}

/**
 * Connects every row (from parseMailboxCsv) in `workspaceId`. Rows are checked like POST /api/mailboxes
 * (logins to IMAP and SMTP), `concurrency` at a time; the round trip that admits a mailbox to the
 * pool is left to the engine, so a large file is not held up by test messages.
 */
export async function importMailboxes(
  service: Pick<MailboxesService, 'create' | 'remainingMailboxes'>,
  workspaceId: string,
  rows: ImportRow[],
  options: ImportOptions = {},
): Promise<MailboxImport> {
  // claimed before the first await, so a check and a claim of two requests cannot interleave
  assertNoImportRunning(workspaceId);
  importing.add(workspaceId);
  try {
    return await importClaimed(service, workspaceId, rows, options);
  } finally {
    importing.delete(workspaceId);
  }
}

async function importClaimed(
  service: Pick<MailboxesService, 'create' | 'remainingMailboxes'>,
  workspaceId: string,
  rows: ImportRow[],
  options: ImportOptions,
): Promise<MailboxImport> {
  const results: ImportRowResult[] = [];
  const decide = (result: ImportRowResult) => {
    results.push(result);
    options.onRow?.(result);
  };
  const firstLineOf = new Map<string, number>();
  const toCreate: Array<ImportRow & { body: CreateMailboxBody }> = [];
  for (const row of rows) {
    if (row.body === undefined) {
      decide({
        line: row.line,
        email: row.email,
        result: 'failed',
        mailboxId: null,
        error: row.error ?? 'invalid row',
      });
      continue;
    }
    const key = row.body.email.trim().toLowerCase();
    const first = firstLineOf.get(key);
    if (first !== undefined) {
      decide({
        line: row.line,
        email: row.email,
        result: 'exists',
        mailboxId: null,
        error: `the same address is on line ${first} of this file`,
      });
      continue;
    }
    firstLineOf.set(key, row.line);
    toCreate.push({ ...row, body: row.body });
  }
  // Rows running together would each pass the workspace's mailbox limit on their own: a row takes
  // one of the free places before it logs in, and gives it back if it ends up not created.
  const { remaining, limit } = await service.remainingMailboxes(workspaceId);
  let freePlaces = remaining;
  await eachLimited(toCreate, options.concurrency ?? IMPORT_CONCURRENCY, async (row) => {
    if (freePlaces <= 0) {
      decide({
        line: row.line,
        email: row.email,
        result: 'failed',
        mailboxId: null,
        error: mailboxLimitReached(limit).message,
      });
      return;
    }
    freePlaces -= 1;
    let created = false;
    const releaseSlot = await rowSlot();
    try {
      const mailbox = await createWhenPlaceFree(service, workspaceId, row.body);
      created = true;
      decide({ line: row.line, email: row.email, result: 'created', mailboxId: mailbox.id, error: null });
    } catch (error) {
      if (error instanceof ConflictError) {
        decide({ line: row.line, email: row.email, result: 'exists', mailboxId: null, error: null });
      } else if (error instanceof AppError) {
        decide({ line: row.line, email: row.email, result: 'failed', mailboxId: null, error: error.message });
      } else {
        // a bug or a lost database is not this row's fault; the other rows still get their answer
        options.onError?.(error);
        decide({ line: row.line, email: row.email, result: 'failed', mailboxId: null, error: 'an internal error' });
      }
    } finally {
      releaseSlot();
      if (!created) freePlaces += 1;
    }
  });
  results.sort((a, b) => a.line - b.line);
  const count = (result: ImportRowResult['result']) => results.filter((row) => row.result === result).length;
  return {
    total: results.length,
    created: count('created'),
    existing: count('exists'),
    failed: count('failed'),
    rows: results,
  };
}
