// What engine tests share: mailboxes made through the API, and engine dependencies with a
// seeded random, a silent logger and the test app's clock.
import { sql, type Kysely } from 'kysely';
import { pino } from 'pino';
import { expect } from 'vitest';
import { clientProfileOf, type ClientProfile } from '../../src/engine/client-profile.js';
import { createEngineDeps, type EngineDeps, type EngineSettings } from '../../src/engine/engine-deps.js';
import type { Database } from '../../src/db/schema.js';
import { planDay } from '../../src/engine/planner.js';
import { seededRandom } from '../../src/engine/random.js';
import type { MailStack } from '../mailstack/use-mail-stack.js';
import type { MailUser } from '../mailstack/users.js';
import type { TestApp, TestWorkspace } from './test-app.js';

export const silentLogger = pino({ level: 'silent' });

export interface MailboxOptions {
  name?: string;
  warmup?: Record<string, unknown>;
  /** With a stack: its real servers, verified at creation. Without: a placeholder host, not verified. */
  stack?: MailStack;
  password?: string;
}

/** Creates a mailbox through POST /api/mailboxes and returns its id. */
export async function createMailbox(
  workspace: TestWorkspace,
  email: string,
  options: MailboxOptions = {},
): Promise<string> {
  const servers = options.stack
    ? {
        imap: { host: options.stack.host, port: options.stack.imapPort, secure: false },
        smtp: { host: options.stack.host, port: options.stack.submissionPort, secure: false },
      }
    : {
        imap: { host: 'imap.invalid', port: 143, secure: false },
        smtp: { host: 'smtp.invalid', port: 587, secure: false },
      };
  const response = await workspace.request({
    method: 'POST',
    url: '/api/mailboxes',
    payload: {
      email,
      password: options.password ?? 'app-password',
      provider: 'custom',
      connectionType: 'imap',
      ...(options.name ? { name: options.name } : {}),
      ...servers,
      ...(options.warmup ? { warmup: options.warmup } : {}),
      verify: options.stack !== undefined,
    },
  });
  expect(response.statusCode, response.body).toBe(201);
  return (response.json() as { mailbox: { id: string } }).mailbox.id;
}

/**
 * Marks every mailbox that is not proven yet as proven, as if its round trip had succeeded: for
 * tests whose mailboxes have placeholder servers and that are about planning, not about the pool's
 * trust rules.
 */
export async function proveAll(db: Kysely<Database>): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({ proven_at: new Date(0).toISOString(), proof_note: null })
    .where('proven_at', 'is', null)
    .execute();
}

/** The mail program the engine gives a stored mailbox (from its id and its mail service). */
export async function storedClientProfile(db: Kysely<Database>, mailboxId: string): Promise<ClientProfile> {
  return clientProfileOf(
    await db.selectFrom('mailboxes').selectAll().where('id', '=', mailboxId).executeTakeFirstOrThrow(),
  );
}

/** A stack user as a mailbox (its real password, real servers). */
export function createStackMailbox(
  workspace: TestWorkspace,
  stack: MailStack,
  user: MailUser,
  options: Omit<MailboxOptions, 'stack' | 'password'> = {},
): Promise<string> {
  return createMailbox(workspace, user.email, { ...options, stack, password: user.password });
}

/** Engine dependencies over a test app: its database, services and clock; a seeded random. */
export function testEngineDeps(
  testApp: Pick<TestApp, 'database' | 'services' | 'clock'>,
  options: { seed?: number; workerId?: string; settings?: Partial<EngineSettings> } = {},
): EngineDeps {
  return createEngineDeps({
    db: testApp.database.db,
    dialect: testApp.database.dialect,
    clock: testApp.clock,
    logger: silentLogger,
    mailboxes: testApp.services.mailboxes,
    templates: testApp.services.templates,
    random: seededRandom(options.seed ?? 1),
    workerId: options.workerId ?? 'test-worker',
    // the round trip waits as long as the test app's own does (test-app.ts)
    settings: { imapTimeoutMs: 10_000, smtpTimeoutMs: 10_000, proofWaitMs: 5_000, ...options.settings },
  });
}

/** Warmup mail not finished yet: planned, or sent and not yet read and filed by its recipient. */
export async function countOpenMessages(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('warmup_messages')
    .select(sql<number>`cast(count(*) as integer)`.as('n'))
    .where((eb) =>
      eb.or([eb('status', '=', 'planned'), eb.and([eb('status', '=', 'sent'), eb('engaged_at', 'is', null)])]),
    )
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A planned email as a test about reading looks at its plan: who writes to whom. */
export interface PlannedPair {
  sender_mailbox_id: string;
  recipient_mailbox_id: string;
}

/**
 * Plans the day (as `run-once --ignore-schedule` does) again and again until its plan holds the mail
 * a test reads, such as one email from each sender to one recipient. Partners are drawn at random
 * (and mailbox ids, which order the pool, are random too), so a test about reading must not rest on
 * one draw: with a fixed plan it passed most runs and failed the rest.
 */
export async function planDayWith(
  deps: EngineDeps,
  at: Date,
  holdsWhatTheTestReads: (planned: PlannedPair[]) => boolean,
  draws = 100,
): Promise<void> {
  // what planning writes on the mailbox rows, put back before each new draw
  const before = await deps.db
    .selectFrom('mailboxes')
    .select(['id', 'warmup_day', 'daily_target', 'ramp_target', 'plan_limited_by', 'last_plan_day', 'plan_due_at'])
    .execute();
  for (let draw = 1; draw <= draws; draw += 1) {
    await planDay(deps, at, { ignoreSchedule: true });
    const planned = await deps.db
      .selectFrom('warmup_messages')
      .select(['sender_mailbox_id', 'recipient_mailbox_id'])
      .where('status', '=', 'planned')
      .where('kind', '=', 'initial')
      .execute();
    if (holdsWhatTheTestReads(planned)) return;
    await deps.db.deleteFrom('warmup_messages').where('status', '=', 'planned').execute();
    await deps.db.deleteFrom('plan_inbound').execute();
    await deps.db.deleteFrom('mailbox_plans').execute();
    for (const { id, ...planning } of before) {
      await deps.db.updateTable('mailboxes').set(planning).where('id', '=', id).execute();
    }
  }
  throw new Error(`none of ${draws} plans of the day holds the mail the test reads`);
}
