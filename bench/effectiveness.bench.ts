// Does warmup work? Cold mailboxes on the test stack's learning filter (SpamAssassin with a Bayes
// database and a TxRep reputation per receiving mailbox, trained by moves out of and into Junk;
// test/mailstack/README.md), over the same simulated days, `--ignore-schedule`:
// - three warmed pools, each run by Warmup's engine in a database of its own (so each is a pool of
//   its own): rescue only (the engine's benchmarks-only `rescueOnly`: out of spam and filed, never
//   opened or answered); rescue + open (replyRate 0: rescued, opened and flagged at the mailboxes'
//   own rates, never answered); the full behaviour (replyRate 50: rescue, open, flag, reply);
// - two control groups beside the full pool, each mailbox sending, right after each engine cycle,
//   as many letters as its warmed twin just sent, and nothing else: one with the twin's own subject
//   and text, one with letters of its own words. They write to a separate set of receivers, one
//   for each receiver of the full pool and set up alike (same seed, same daily spam), which nobody
//   teaches with a rescue: the controls are judged by filters that learned nothing from the warmed
//   mail, as a stranger's mail is at a provider.
// Every receiver is a person with a name of its own, and gets SPAM_PER_DAY ordinary spam letters
// each morning that it moves into Junk when its filter left them in the INBOX, so its Bayes learns
// both sides as a real mailbox's does. Reported per day: the share of each group's mail the filter
// put in the INBOX, and the spam it let through.
//
//   npm run bench -- --only effectiveness [-- --quick]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { addDays } from '../src/calendar.js';
import { fixedClock } from '../src/clock.js';
import { createEngineDeps } from '../src/engine/engine-deps.js';
import { messageIdFor } from '../src/engine/message-content.js';
import { seededRandom } from '../src/engine/random.js';
import { createEngine } from '../src/jobs/job-list.js';
import { openImapSession } from '../src/mail/imap.js';
import { createSmtpSender } from '../src/mail/smtp.js';
import { silentLogger } from '../test/helpers/engine.js';
import { createTestApp, type TestApp } from '../test/helpers/test-app.js';
import { mailStackAvailable, mailStackPortsFree, startMailStack, stopMailStack } from '../test/mailstack/mail-stack.js';
import { mailServerConfigs, stackMailPolicy, type MailStack } from '../test/mailstack/use-mail-stack.js';
import { machine } from '../test/scale/cluster.js';
import { ownLetter, peopleOf, SpamTrickle, type Person, type SpamDay } from './effectiveness-people.js';

export interface EffectivenessOptions {
  /** 3 days instead of 7. */
  quick?: boolean;
  days?: number;
  /** Mailboxes per group (default 6). */
  mailboxes?: number;
  log?: (line: string) => void;
}

export interface GroupDay {
  sent: number;
  inbox: number;
}

/** The three warmed pools: what each one's readers do with the mail they receive. */
const VARIANTS = [
  { key: 'rescue', label: 'rescue only', replyRate: 50, rescueOnly: true },
  { key: 'open', label: 'rescue + open', replyRate: 0, rescueOnly: false },
  { key: 'full', label: 'rescue + open + reply', replyRate: 50, rescueOnly: false },
] as const;
type VariantKey = (typeof VARIANTS)[number]['key'];
type GroupKey = VariantKey | 'control' | 'ownText';
const GROUPS: readonly GroupKey[] = ['rescue', 'open', 'full', 'control', 'ownText'];

export interface EffectivenessDay {
  day: number;
  groups: Record<GroupKey, GroupDay>;
  /** The day's spam at the warmed pools' receivers and at the controls' receivers. */
  spam: { warmed: SpamDay; control: SpamDay };
}

export interface EffectivenessResult {
  machine: ReturnType<typeof machine>;
  perGroup: number;
  days: EffectivenessDay[];
  /** First day (1-based) each group's share reached 90 %. */
  to90: Record<GroupKey, number | null>;
  seconds: number;
  /** The 1-minute load average at each day's end. */
  load: number[];
}

const WARMUP = { startVolume: 2, rampUpIncrement: 1, dailyLimit: 5, timezone: 'UTC' };
/** Cycles per simulated day: plan and send, then find, engage and answer, then the answers' turn. */
const CYCLES_PER_DAY = 5;
/** Ordinary spam letters each receiver gets every morning. */
export const SPAM_PER_DAY = 3;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until Postfix's queue is empty: every message accepted so far has been through spamd and
 * into its folder (delivery over LMTP, filter included, ends before the queue file is removed).
 */
async function delivered(stack: MailStack, timeoutMs = 120_000): Promise<void> {
  const queues = ['maildrop', 'incoming', 'active', 'deferred', 'hold'].map((q) =>
    path.join(stack.dir, 'postfix', 'spool', q),
  );
  const queued = () =>
    queues.reduce(
      (sum, dir) =>
        sum +
        (fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, withFileTypes: true }) : []).filter((e) =>
          e.isFile(),
        ).length,
      0,
    );
  const deadline = Date.now() + timeoutMs;
  while (queued() > 0) {
    if (Date.now() > deadline) throw new Error(`effectiveness bench: mail still queued after ${timeoutMs / 1000} s`);
    await sleep(200);
  }
  await sleep(300); // the last delivery's Maildir rename and Dovecot's index
}

interface WarmedPool {
  key: VariantKey;
  people: Person[];
  ids: string[];
  testApp: TestApp;
  engine: ReturnType<typeof createEngine>;
}

export async function runEffectivenessBench(options: EffectivenessOptions = {}): Promise<EffectivenessResult | null> {
  const log = options.log ?? ((line: string) => console.log(line));
  const available = mailStackAvailable({ learning: true });
  if (!available.ok) {
    log(`effectiveness bench skipped: ${available.missing.join(', ') || available.problem}`);
    return null;
  }
  const dayCount = options.days ?? (options.quick ? 3 : 7);
  const perGroup = options.mailboxes ?? 6;
  const warmedPeople = VARIANTS.map((v, i) => peopleOf(v.key, perGroup, i * perGroup));
  const controlReceivers = peopleOf('inbox', perGroup, 3 * perGroup);
  const control = peopleOf('control', perGroup, 4 * perGroup);
  const ownText = peopleOf('words', perGroup, 5 * perGroup);
  const started = Date.now();
  const stack = await startStack([...warmedPeople.flat(), ...controlReceivers, ...control, ...ownText]);
  // Simulated days end today: the IMAP searches (SINCE) use the server's own dates.
  const today = new Date().toISOString().slice(0, 10);
  const firstDay = addDays(today, -(dayCount - 1));
  const clock = fixedClock(new Date(`${firstDay}T08:00:00Z`));
  const pools: WarmedPool[] = [];
  try {
    for (const [index, variant] of VARIANTS.entries()) {
      const testApp = await createTestApp({ clock, mailPolicy: stackMailPolicy(stack) });
      const pool: WarmedPool = { key: variant.key, people: warmedPeople[index], ids: [], testApp, engine: null! };
      pools.push(pool);
      for (const person of pool.people) pool.ids.push(await createMailbox(testApp, stack, person, variant.replyRate));
      pool.engine = createEngine(
        createEngineDeps({
          db: testApp.database.db,
          dialect: testApp.database.dialect,
          clock,
          logger: silentLogger,
          mailboxes: testApp.services.mailboxes,
          templates: testApp.services.templates,
          random: seededRandom(34 + index),
          workerId: `bench-effectiveness-${variant.key}`,
          rescueOnly: variant.rescueOnly,
        }),
      );
    }
    const full = pools.find((p) => p.key === 'full')!;
    // The controls' receivers stand in for the full pool's: the n-th control receiver gets what the
    // n-th full-pool mailbox would have got.
    const receiverFor = (recipient: string) => {
      const index = full.people.findIndex((p) => p.email === recipient);
      return { warmed: full.people[index], receiver: controlReceivers[index] };
    };
    const warmedSpam = new SpamTrickle(stack, warmedPeople.flat(), SPAM_PER_DAY, 1);
    const controlSpam = new SpamTrickle(stack, controlReceivers, SPAM_PER_DAY, 2);
    const days: EffectivenessDay[] = [];
    const load: number[] = [];
    const mirrored = new Set<string>();
    const letters = seededRandom(35);
    for (let index = 0; index < dayCount; index += 1) {
      const day = addDays(firstDay, index);
      const sameText = new ControlDay(stack, control, full.people, receiverFor, null);
      const ownWords = new ControlDay(stack, ownText, full.people, receiverFor, letters);
      const morning = new Date(`${day}T08:00:00Z`);
      await warmedSpam.deliver(morning);
      await controlSpam.deliver(morning);
      await delivered(stack);
      for (let cycle = 0; cycle < CYCLES_PER_DAY; cycle += 1) {
        const at = new Date(`${day}T${String(9 + cycle).padStart(2, '0')}:00:00Z`);
        clock.set(at);
        for (const pool of pools) {
          const summary = await pool.engine.runCycle({ at, ignoreSchedule: true });
          if (summary.errors.length > 0) throw new Error(`engine cycle failed: ${JSON.stringify(summary.errors)}`);
        }
        // The controls send their letters now, before the next cycle finds and rescues the warmed mail.
        const sent = await sentInCycle(full, day, mirrored);
        await sameText.send(sent);
        await ownWords.send(sent);
        // Postfix hands mail to Dovecot, and spamd scores it, after the cycle: the next cycle's
        // sync must see it, as a real receiver's would within the hour between cycles
        await delivered(stack);
        // the people read their morning's spam after the first cycle, and look again at the day's end
        if (cycle === 0 || cycle === CYCLES_PER_DAY - 1) {
          await warmedSpam.sweep();
          await controlSpam.sweep();
        }
      }
      const groups = {} as Record<GroupKey, GroupDay>;
      for (const pool of pools) groups[pool.key] = await warmedDay(pool.testApp, day);
      groups.control = await sameText.count();
      groups.ownText = await ownWords.count();
      const spam = { warmed: warmedSpam.today(), control: controlSpam.today() };
      days.push({ day: index + 1, groups, spam });
      load.push(Math.round(os.loadavg()[0] * 10) / 10);
      log(
        `day ${index + 1} (${Math.round((Date.now() - started) / 1000)} s, load ${load.at(-1)}): ` +
          GROUPS.map((g) => `${g} ${groups[g].inbox}/${groups[g].sent}`).join(', ') +
          `; spam in the INBOX ${spam.warmed.inInbox}/${spam.warmed.delivered} (warmed), ${spam.control.inInbox}/${spam.control.delivered} (control)`,
      );
    }
    for (const pool of pools) await pool.engine.stop();
    const firstAt90 = (group: GroupKey) =>
      days.find((d) => d.groups[group].sent > 0 && d.groups[group].inbox / d.groups[group].sent >= 0.9)?.day ?? null;
    return {
      machine: machine(),
      perGroup,
      days,
      to90: Object.fromEntries(GROUPS.map((g) => [g, firstAt90(g)])) as Record<GroupKey, number | null>,
      seconds: Math.round((Date.now() - started) / 1000),
      load,
    };
  } finally {
    for (const pool of pools) await pool.testApp.close();
    await stopMailStack(stack);
  }
}

/** A warmed pool's mail of the day as its receivers' filters placed it (where the engine first found it). */
async function warmedDay(testApp: TestApp, day: string): Promise<GroupDay> {
  const rows = await testApp.database.db
    .selectFrom('warmup_messages')
    .select(['placement'])
    .where('plan_day', '=', day)
    .where('found_at', 'is not', null)
    .execute();
  return { sent: rows.length, inbox: rows.filter((r) => r.placement === 'inbox').length };
}

interface SentMessage {
  twin: number;
  /** When the twin sent it: the control's letter carries the same simulated `Date`. */
  sentAt: Date;
  subject: string;
  text: string;
  html: string;
  recipient: string;
}

/** The pool's messages of the day sent since the last call (ids in `mirrored`). */
async function sentInCycle(pool: WarmedPool, day: string, mirrored: Set<string>): Promise<SentMessage[]> {
  const rows = await pool.testApp.database.db
    .selectFrom('warmup_messages as m')
    .innerJoin('mailboxes as r', 'r.id', 'm.recipient_mailbox_id')
    .select([
      'm.id',
      'm.sender_mailbox_id',
      'm.sent_at',
      'm.subject',
      'm.body_text',
      'm.body_html',
      'r.email as recipient',
    ])
    .where('m.plan_day', '=', day)
    .where('m.sent_at', 'is not', null)
    .execute();
  const fresh = rows.filter((row) => !mirrored.has(row.id) && pool.ids.includes(row.sender_mailbox_id));
  for (const row of fresh) mirrored.add(row.id);
  return fresh.map((row) => ({
    twin: pool.ids.indexOf(row.sender_mailbox_id),
    sentAt: new Date(row.sent_at!),
    subject: row.subject ?? '',
    text: row.body_text ?? '',
    html: row.body_html ?? '',
    recipient: row.recipient,
  }));
}

/**
 * A control group's day: each control mailbox sends as many letters as its warmed twin sent (the
 * twin's subject and text, or a letter of its own words) to the control receiver standing in for
 * the twin's receiver, and nothing else; at the end of the day the receivers are searched for it.
 */
class ControlDay {
  private readonly expected = new Map<Person, string[]>();
  private readonly sentByTwin = new Map<number, number>();

  constructor(
    private readonly stack: MailStack,
    private readonly group: readonly Person[],
    private readonly twins: readonly Person[],
    /** The control receiver standing in for a warmed receiver (its address), and that receiver. */
    private readonly receiverFor: (recipient: string) => { warmed: Person; receiver: Person },
    /** Letters of the group's own words from this; null: the twin's own subject and text. */
    private readonly ownWords: (() => number) | null,
  ) {}

  async send(messages: SentMessage[]): Promise<void> {
    for (const [twin, control] of this.group.entries()) {
      const own = messages.filter((m) => m.twin === twin);
      if (own.length === 0) continue;
      const smtp = createSmtpSender(mailServerConfigs(this.stack, control).smtp);
      try {
        for (const message of own) {
          const n = this.sentByTwin.get(twin) ?? 0;
          this.sentByTwin.set(twin, n + 1);
          const { warmed, receiver } = this.receiverFor(message.recipient);
          const messageId = messageIdFor(control.email, `${n}.${Math.random().toString(36).slice(2)}`);
          // the twin's letter, with the names in its greeting and signature made this pair's
          const content =
            this.ownWords === null
              ? {
                  subject: message.subject,
                  text: renamed(message.text, [this.twins[twin], control], [warmed, receiver]),
                  html: renamed(message.html, [this.twins[twin], control], [warmed, receiver]),
                }
              : ownLetter(this.ownWords, control, receiver);
          await smtp.send({
            from: { name: control.name, address: control.email },
            to: { name: receiver.name, address: receiver.email },
            ...content,
            messageId,
            date: message.sentAt,
          });
          this.expected.set(receiver, [...(this.expected.get(receiver) ?? []), messageId]);
        }
      } finally {
        smtp.close();
      }
    }
  }

  /** Where the receivers' filters put the day's mail (nobody moves control mail). */
  async count(): Promise<GroupDay> {
    await delivered(this.stack);
    const result: GroupDay = { sent: 0, inbox: 0 };
    for (const [receiver, messageIds] of this.expected) {
      const session = await openImapSession(mailServerConfigs(this.stack, receiver).imap);
      try {
        const found = await session.findMessages(messageIds);
        result.sent += messageIds.length;
        result.inbox += found.filter((f) => f.role === 'inbox').length;
      } finally {
        await session.close();
      }
    }
    return result;
  }
}

/** A letter's names, each [from, to] pair's first and full name, replaced. */
function renamed(text: string, ...pairs: Array<[Person, Person]>): string {
  let out = text;
  for (const [from, to] of pairs) out = out.replaceAll(from.name, to.name).replaceAll(from.first, to.first);
  return out;
}

async function createMailbox(testApp: TestApp, stack: MailStack, person: Person, replyRate: number): Promise<string> {
  const response = await testApp.workspace.request({
    method: 'POST',
    url: '/api/mailboxes',
    payload: {
      email: person.email,
      name: person.name,
      password: person.password,
      provider: 'custom',
      connectionType: 'imap',
      imap: { host: stack.host, port: stack.imapPort, secure: false },
      smtp: { host: stack.host, port: stack.submissionPort, secure: false },
      warmup: { ...WARMUP, replyRate },
      verify: true,
    },
  });
  if (response.statusCode !== 201) throw new Error(`mailbox ${person.email}: ${response.statusCode} ${response.body}`);
  return (response.json() as { mailbox: { id: string } }).mailbox.id;
}

async function startStack(users: Person[]): Promise<MailStack> {
  for (let attempt = 0; attempt < 30; attempt += 1) {
    const base = 30_000 + ((process.pid * 7 + attempt * 1_013) % 25_000);
    if (!(await mailStackPortsFree(base))) continue;
    return startMailStack({ name: `bench-effectiveness-${process.pid}`, basePort: base, users, learning: true });
  }
  throw new Error('effectiveness bench: no free port range');
}

const GROUP_LABELS: Record<GroupKey, string> = {
  rescue: 'rescue only',
  open: 'rescue + open',
  full: 'full behaviour',
  control: 'control, same text',
  ownText: 'control, own text',
};

export function effectivenessReport(result: EffectivenessResult | null): string {
  if (!result) return 'skipped: no learning mail stack on this machine';
  const share = (g: GroupDay) =>
    g.sent === 0 ? '–' : `${Math.round((100 * g.inbox) / g.sent)} % (${g.inbox}/${g.sent})`;
  const spamShare = (s: SpamDay) => `${s.inInbox}/${s.delivered}`;
  const rows = result.days.map(
    (d) =>
      `| ${d.day} | ${GROUPS.map((g) => share(d.groups[g])).join(' | ')} | ${spamShare(d.spam.warmed)} | ${spamShare(d.spam.control)} |`,
  );
  // Over the whole run: each group's INBOX share of all its mail, and what each step adds to the one before.
  const total = (g: GroupKey) => {
    const sum = result.days.reduce(
      (acc, d) => ({ sent: acc.sent + d.groups[g].sent, inbox: acc.inbox + d.groups[g].inbox }),
      { sent: 0, inbox: 0 },
    );
    return sum.sent === 0 ? 0 : (100 * sum.inbox) / sum.sent;
  };
  const points = (a: number, b: number) => `${a - b >= 0 ? '+' : ''}${Math.round(a - b)} points`;
  const to90 = (g: GroupKey) => (result.to90[g] === null ? 'never' : `day ${result.to90[g]}`);
  const loads = [...result.load].sort((a, b) => a - b);
  return [
    `${result.perGroup} mailboxes in each of 5 groups and ${result.perGroup} control receivers, ${result.days.length} simulated days, ` +
      `${SPAM_PER_DAY} spam letters per receiver a day; ${result.machine.cpus} CPUs (${result.machine.model}), ${result.seconds} s, ` +
      `load average ${loads[0]}–${loads.at(-1)} at the days' ends.`,
    '',
    `| day | ${GROUPS.map((g) => GROUP_LABELS[g]).join(' | ')} | spam in the INBOX, warmed receivers | spam in the INBOX, control receivers |`,
    `| --- | ${GROUPS.map(() => '---').join(' | ')} | --- | --- |`,
    ...rows,
    '',
    `First day at ≥ 90 % INBOX: ${GROUPS.map((g) => `${GROUP_LABELS[g]} ${to90(g)}`).join(', ')}.`,
    '',
    `INBOX share over the run: ${GROUPS.map((g) => `${GROUP_LABELS[g]} ${Math.round(total(g))} %`).join(', ')}. ` +
      `Contributions: the rescue ${points(total('rescue'), total('control'))} (rescue only against the same-text control), ` +
      `the open and flag ${points(total('open'), total('rescue'))}, the reply ${points(total('full'), total('open'))}.`,
  ].join('\n');
}
