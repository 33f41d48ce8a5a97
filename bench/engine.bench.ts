// Engine throughput: warmup messages fully processed per second (sent, found by the recipient,
// engaged: read and filed into Warmup) by one in-process engine on SQLite, against a baseline in
// the same run that does the same SMTP and IMAP work with nodemailer and imapflow in a plain loop.
//
// Both sides use the same mail stack (Postfix + Dovecot on loopback, started here), the same 8
// bench mailboxes and the same N messages, round robin from each mailbox to the others. The engine
// gets them as planned rows due now (as the workers bench does: the planner's partner rules would
// cap a day far below N) and runs ignore-schedule cycles until every one is engaged; replies are
// off so both sides do exactly the same work. The baseline sends the N messages, then for each
// recipient logs in, NOOPs, SEARCHes INBOX by Message-ID, sets \Seen and MOVEs into Warmup
// (polling until every message it expects has arrived). The sides take turns for a few rounds and
// the medians are compared: on a shared machine one pair of timings is mostly noise.
//
//   npm run bench -- --only engine [-- --quick]
//   (standalone: node --import tsx bench/engine.bench.ts [--messages 120])
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ImapFlow } from 'imapflow';
import type { Insertable } from 'kysely';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { newId } from '../src/db/ids.js';
import type { WarmupMessagesTable } from '../src/db/schema.js';
import { createEngineDeps } from '../src/engine/engine-deps.js';
import { createEngine } from '../src/jobs/job-list.js';
import { messageIdFor } from '../src/engine/message-content.js';
import { seededRandom } from '../src/engine/random.js';
import { WARMUP_FOLDER } from '../src/mail/imap.js';
import { createTestApp, type TestApp } from '../test/helpers/test-app.js';
import {
  mailStackAvailable,
  mailStackPortsFree,
  startMailStack,
  stopMailStack,
  type MailStack,
} from '../test/mailstack/mail-stack.js';
import { stackMailPolicy } from '../test/mailstack/use-mail-stack.js';
import { MAIL_USERS, type MailUser } from '../test/mailstack/users.js';
import { machine, workState } from '../test/scale/cluster.js';

export interface EngineBenchOptions {
  /** 40 messages instead of 120. */
  quick?: boolean;
  /** Messages in all, spread evenly over the bench mailboxes (default 120). */
  messages?: number;
  /** Baseline and engine take turns this many times (default 3, 1 with quick): the machine is shared, so one pair is noise. */
  rounds?: number;
  log?: (line: string) => void;
}

export interface ThroughputRun {
  messages: number;
  /** From the start to the last message sent. */
  sentMs: number;
  /** From the start to the last message filed into Warmup. */
  doneMs: number;
  messagesPerSecond: number;
}

export interface EngineBenchResult {
  machine: ReturnType<typeof machine>;
  node: string;
  mailboxes: number;
  rounds: Array<{ baseline: ThroughputRun; engine: EngineRun; ratio: number }>;
  /** Median messages/s of each side, and the engine's over the baseline's. */
  baselineMedian: number;
  engineMedian: number;
  ratio: number;
}

export interface EngineRun extends ThroughputRun {
  cycles: number;
}

const users: readonly MailUser[] = MAIL_USERS.bench;
const TARGET_RATIO = 0.8;
const TIMEOUT_MS = 10 * 60_000;
/** The plain nodemailer/imapflow baseline accepts the stack's self-signed certificate. */
const tls = { rejectUnauthorized: false };

export async function runEngineBench(options: EngineBenchOptions = {}): Promise<EngineBenchResult | null> {
  const log = options.log ?? ((line: string) => console.log(line));
  const available = mailStackAvailable();
  if (!available.ok) {
    log(`engine bench skipped: no mail stack (${available.missing.join(', ') || available.problem})`);
    return null;
  }
  const perMailbox = Math.max(1, Math.round((options.messages ?? (options.quick ? 40 : 120)) / users.length));
  const roundCount = options.rounds ?? (options.quick ? 1 : 3);
  const stack = await startBenchStack();
  try {
    const rounds: EngineBenchResult['rounds'] = [];
    for (let round = 1; round <= roundCount; round++) {
      const baseline = await runBaseline(stack, perMailbox);
      const engine = await runEngine(stack, perMailbox);
      const ratio = engine.messagesPerSecond / baseline.messagesPerSecond;
      rounds.push({ baseline, engine, ratio });
      log(
        `round ${round}: baseline ${baseline.messages} messages in ${(baseline.doneMs / 1000).toFixed(1)} s → ${baseline.messagesPerSecond.toFixed(1)} msg/s; ` +
          `engine ${engine.messages} in ${(engine.doneMs / 1000).toFixed(1)} s (${engine.cycles} cycles) → ${engine.messagesPerSecond.toFixed(1)} msg/s; ×${ratio.toFixed(2)}`,
      );
    }
    const baselineMedian = median(rounds.map((r) => r.baseline.messagesPerSecond));
    const engineMedian = median(rounds.map((r) => r.engine.messagesPerSecond));
    log(`median: engine / baseline = ×${(engineMedian / baselineMedian).toFixed(2)} (target ≥ ×${TARGET_RATIO})`);
    return {
      machine: machine(),
      node: process.version,
      mailboxes: users.length,
      rounds,
      baselineMedian,
      engineMedian,
      ratio: engineMedian / baselineMedian,
    };
  } finally {
    await stopMailStack(stack);
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The same pairs on both sides: message n of mailbox i goes to the n-th other mailbox after it. */
function recipientIndex(sender: number, n: number): number {
  return (sender + 1 + (n % (users.length - 1))) % users.length;
}

function newMessageId(senderEmail: string): string {
  return messageIdFor(senderEmail, `${Date.now().toString(36)}.${randomBytes(9).toString('base64url')}`);
}

// ---------------------------------------------------------------------------------------------
// Baseline: nodemailer and imapflow in a plain loop.

async function runBaseline(stack: MailStack, perMailbox: number): Promise<ThroughputRun> {
  const expected = new Map<string, string[]>(users.map((u) => [u.email, []]));
  const start = performance.now();
  for (const [i, sender] of users.entries()) {
    // one kept-open connection per sender, as the engine's sender does
    const transport = nodemailer.createTransport({
      host: stack.host,
      port: stack.submissionPort,
      secure: false,
      tls,
      auth: { user: sender.email, pass: sender.password },
      pool: true,
      maxConnections: 1,
    });
    try {
      for (let n = 0; n < perMailbox; n++) {
        const recipient = users[recipientIndex(i, n)];
        const messageId = newMessageId(sender.email);
        await transport.sendMail({
          from: sender.email,
          to: recipient.email,
          messageId,
          subject: `Quick question ${n + 1}`,
          text: 'Hi,\n\nJust checking in about next week. Does Tuesday still work for you?\n\nThanks,\nB.\n',
        });
        expected.get(recipient.email)?.push(messageId);
      }
    } finally {
      transport.close();
    }
  }
  const sentMs = performance.now() - start;
  const pending = new Map([...expected].map(([email, ids]) => [email, new Set(ids)]));
  const deadline = Date.now() + TIMEOUT_MS;
  // Mail arrives through Postfix and LMTP after the send: go round the recipients until all is filed.
  while ([...pending.values()].some((ids) => ids.size > 0)) {
    if (Date.now() > deadline)
      throw new Error(`baseline: ${[...pending.values()].reduce((a, s) => a + s.size, 0)} messages never arrived`);
    for (const user of users) {
      const ids = pending.get(user.email);
      if (ids && ids.size > 0) await engageInbox(stack, user, ids);
    }
  }
  const doneMs = performance.now() - start;
  const messages = perMailbox * users.length;
  return { messages, sentMs, doneMs, messagesPerSecond: messages / (doneMs / 1000) };
}

/** One IMAP session: every expected message already in INBOX is marked read and moved; removes them from `ids`. */
async function engageInbox(stack: MailStack, user: MailUser, ids: Set<string>): Promise<void> {
  const client = new ImapFlow({
    host: stack.host,
    port: stack.imapPort,
    secure: false,
    tls,
    auth: { user: user.email, pass: user.password },
    logger: false,
  });
  await client.connect();
  try {
    await client.noop();
    try {
      await client.mailboxCreate(WARMUP_FOLDER);
    } catch {
      // already there
    }
    const lock = await client.getMailboxLock('INBOX');
    try {
      for (const messageId of [...ids]) {
        const uids = await client.search({ header: { 'message-id': messageId } }, { uid: true });
        if (!uids || uids.length === 0) continue;
        await client.messageFlagsAdd(uids, ['\\Seen'], { uid: true });
        await client.messageMove(uids, WARMUP_FOLDER, { uid: true });
        ids.delete(messageId);
      }
    } finally {
      lock.release();
    }
  } finally {
    await client.logout();
  }
}

// ---------------------------------------------------------------------------------------------
// The engine: planned rows due now, ignore-schedule cycles until every one is engaged.

async function runEngine(stack: MailStack, perMailbox: number): Promise<EngineRun> {
  // the stack's loopback host allowed and its certificate trusted, as an operator would set it
  const testApp = await createTestApp({ mailPolicy: stackMailPolicy(stack) });
  try {
    for (const user of users) await createMailbox(testApp, stack, user);
    const today = new Date().toISOString().slice(0, 10);
    // The planner has nothing to add today: the load below is the day.
    await testApp.database.db.updateTable('mailboxes').set({ last_plan_day: today }).execute();
    const messages = await insertLoad(testApp, perMailbox);
    const engine = createEngine(
      createEngineDeps({
        db: testApp.database.db,
        dialect: testApp.database.dialect,
        clock: testApp.clock,
        logger: pino({ level: 'silent' }),
        mailboxes: testApp.services.mailboxes,
        templates: testApp.services.templates,
        random: seededRandom(1),
        workerId: 'bench-engine',
      }),
    );
    const start = performance.now();
    let sentMs: number | undefined;
    let cycles = 0;
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const summary = await engine.runCycle({ at: new Date(), ignoreSchedule: true });
      cycles++;
      if (summary.errors.length > 0) throw new Error(`engine cycle failed: ${JSON.stringify(summary.errors)}`);
      const state = await workState(testApp.database.db);
      if (sentMs === undefined && state.byStatus.sent === messages) sentMs = performance.now() - start;
      if (state.byStatus.sent === messages && state.found === messages && state.engaged === messages) break;
      if (Date.now() > deadline) throw new Error(`engine: not done after ${cycles} cycles: ${JSON.stringify(state)}`);
    }
    const doneMs = performance.now() - start;
    await engine.stop();
    return { messages, sentMs: sentMs ?? doneMs, doneMs, messagesPerSecond: messages / (doneMs / 1000), cycles };
  } finally {
    await testApp.close();
  }
}

/** Through POST /api/mailboxes, as a user would (verified against the stack), replies off. */
async function createMailbox(testApp: TestApp, stack: MailStack, user: MailUser): Promise<void> {
  const response = await testApp.workspace.request({
    method: 'POST',
    url: '/api/mailboxes',
    payload: {
      email: user.email,
      password: user.password,
      provider: 'custom',
      connectionType: 'imap',
      imap: { host: stack.host, port: stack.imapPort, secure: false },
      smtp: { host: stack.host, port: stack.submissionPort, secure: false },
      warmup: { replyRate: 0, timezone: 'UTC', weekdaysOnly: false },
      verify: true,
    },
  });
  if (response.statusCode !== 201) throw new Error(`creating ${user.email}: ${response.statusCode} ${response.body}`);
}

/** `perMailbox` planned messages from each mailbox to the same recipients as the baseline's, all due now (as in workers.bench.ts). */
async function insertLoad(testApp: TestApp, perMailbox: number): Promise<number> {
  const db = testApp.database.db;
  const byEmail = new Map(
    (await db.selectFrom('mailboxes').select(['id', 'email']).execute()).map((m) => [m.email, m.id]),
  );
  const now = new Date().toISOString();
  const rows: Insertable<WarmupMessagesTable>[] = [];
  for (const [i, sender] of users.entries()) {
    for (let n = 0; n < perMailbox; n++) {
      const messageId = newMessageId(sender.email);
      rows.push({
        id: newId('wm'),
        message_id: messageId,
        thread_id: messageId,
        sender_mailbox_id: byEmail.get(sender.email) ?? '',
        recipient_mailbox_id: byEmail.get(users[recipientIndex(i, n)].email) ?? '',
        kind: 'initial',
        turn: 1,
        plan_day: now.slice(0, 10),
        due_at: now,
        status: 'planned',
        created_at: now,
      });
    }
  }
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < rows.length; start += 200)
      await trx
        .insertInto('warmup_messages')
        .values(rows.slice(start, start + 200))
        .execute();
  });
  return rows.length;
}

async function startBenchStack(): Promise<MailStack> {
  let offset = (process.pid * 6_007) % 29_000;
  for (let attempt = 0; attempt < 20; attempt++) {
    const basePort = 20_000 + offset;
    if (await mailStackPortsFree(basePort))
      return startMailStack({ name: `bench-engine-${process.pid}`, basePort, users: [...users] });
    offset = (offset + 1_013) % 29_000;
  }
  throw new Error('no free port range for the mail stack');
}

// ---------------------------------------------------------------------------------------------

/** The BENCHMARKS.md report: the machine, every round, the medians against the target. */
export function engineReport(result: EngineBenchResult | null): string {
  if (!result) return 'skipped (needs the mail stack packages, run as root)';
  const { cpus, model, memoryGb } = result.machine;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return [
    `${cpus} CPUs (${model}), ${memoryGb} GB RAM, Node ${result.node}; SQLite; ${result.mailboxes} mailboxes, replies off; baseline and engine take turns`,
    '',
    '| round | messages | baseline: sent / processed | baseline msg/s | engine: processed (cycles) | engine msg/s | engine / baseline |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...result.rounds.map(
      (r, i) =>
        `| ${i + 1} | ${r.baseline.messages} | ${seconds(r.baseline.sentMs)} / ${seconds(r.baseline.doneMs)} | ${r.baseline.messagesPerSecond.toFixed(1)} | ` +
        `${seconds(r.engine.doneMs)} (${r.engine.cycles}) | ${r.engine.messagesPerSecond.toFixed(1)} | ×${r.ratio.toFixed(2)} |`,
    ),
    `| median | | | ${result.baselineMedian.toFixed(1)} | | ${result.engineMedian.toFixed(1)} | ×${result.ratio.toFixed(2)} |`,
    '',
    `Engine / baseline (medians): ×${result.ratio.toFixed(2)} — target ≥ ×${TARGET_RATIO} ${result.ratio >= TARGET_RATIO ? 'met' : 'missed'}.`,
  ].join('\n');
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const messages = argument('--messages');
  const rounds = argument('--rounds');
  const result = await runEngineBench({
    quick: process.argv.includes('--quick'),
    messages: messages ? Number(messages) : undefined,
    rounds: rounds ? Number(rounds) : undefined,
  });
  console.log(`\n${engineReport(result)}`);
}
