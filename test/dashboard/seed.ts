// Realistic demo data for the dashboard screenshots: six mailboxes with up to 90 days of warmup
// history (sends, placements, opens, replies, rescues, reputation), written through the engine's
// own repository functions so the rollups and statistics are exactly what the engine would make.
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import {
  recordInteraction,
  recordReputation,
  type InteractionInput,
} from '../../src/interactions/interactions.repository.js';
import { randomInt, seededRandom, type Random } from '../../src/engine/random.js';
import { addDays, localDay, localWindow } from '../../src/calendar.js';
import type { TestWorkspace } from '../helpers/test-app.js';

interface Profile {
  email: string;
  name: string;
  provider: 'gmail' | 'outlook' | 'fastmail' | 'zoho' | 'icloud' | 'custom';
  /** Days of history; day 1 of the warmup was this many days ago. */
  age: number;
  dailyLimit: number;
  /** Reputation on a given warmup day (1-based) and days-ago. */
  reputation: (warmupDay: number, daysAgo: number) => number;
  /** Paused this many days ago (no activity since). */
  pausedDaysAgo?: number;
  lastError?: string;
}

const ramp = (from: number, to: number, days: number) => (day: number) =>
  Math.round(from + (to - from) * Math.min(1, (day - 1) / days));

const PROFILES: Profile[] = [
  {
    email: 'maya@northwind-trading.com',
    name: 'Maya Chen',
    provider: 'gmail',
    age: 88,
    dailyLimit: 35,
    reputation: (d) => ramp(58, 95, 40)(d),
  },
  {
    email: 'liam@brightpath.io',
    name: 'Liam Novak',
    provider: 'outlook',
    age: 74,
    dailyLimit: 30,
    reputation: (d) => ramp(52, 91, 45)(d),
  },
  {
    email: 'ava@lumenlabs.co',
    name: 'Ava Rossi',
    provider: 'fastmail',
    age: 61,
    dailyLimit: 30,
    // Healthy until a week ago, then a run of spam placements pulls it down.
    reputation: (d, ago) => (ago > 7 ? ramp(55, 89, 35)(d) : 89 - Math.round((8 - ago) * 2.3)),
  },
  {
    email: 'billing@acme-supply.com',
    name: 'Acme Billing',
    provider: 'custom',
    age: 45,
    dailyLimit: 25,
    reputation: (d) => ramp(50, 84, 30)(d),
    // as the engine words a refused login (mailbox-state.ts, permanentError)
    lastError: 'SMTP login refused: check the app password (535 5.7.8 Authentication credentials invalid)',
  },
  {
    email: 'support@kitecloud.dev',
    name: 'Kite Support',
    provider: 'zoho',
    age: 52,
    dailyLimit: 25,
    reputation: (d) => ramp(55, 82, 30)(d),
    pausedDaysAgo: 9,
  },
  {
    email: 'ops@harborview.app',
    name: 'Noah Park',
    provider: 'icloud',
    age: 4,
    dailyLimit: 40,
    reputation: (d) => ramp(50, 62, 4)(d),
  },
];

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const TIME_ZONE = 'Europe/Berlin';
const SEND_WINDOW = { start: '08:00', end: '18:00' };

function dayString(at: Date): string {
  return at.toISOString().slice(0, 10);
}

const SUBJECTS = [
  'Quick question about the Q3 planning',
  'Re: Notes from Thursday',
  'Following up on the supplier list',
  'Lunch next week?',
  'Re: Draft for the onboarding guide',
  'Thoughts on the new pricing page',
  'Agenda for Monday',
  'Re: Quick question about the Q3 planning',
  'Catching up on the roadmap',
  'Photos from the offsite',
];

/** Creates the mailboxes (without logging in: they are demo addresses) and writes their history. */
export async function seedDemoData(db: Kysely<Database>, workspace: TestWorkspace, now = new Date()): Promise<void> {
  const random = seededRandom(20261125);
  const ids: string[] = [];
  for (const profile of PROFILES) {
    const body: Record<string, unknown> = {
      email: profile.email,
      password: 'demo-app-password',
      provider: profile.provider,
      connectionType: 'imap',
      name: profile.name,
      verify: false,
      warmup: {
        dailyLimit: profile.dailyLimit,
        startVolume: 2,
        rampUpIncrement: 2,
        replyRate: 30,
        timezone: TIME_ZONE,
        sendWindow: SEND_WINDOW,
      },
    };
    if (profile.provider === 'custom') {
      body.imap = { host: 'mail.acme-supply.com', port: 993, secure: true };
      body.smtp = { host: 'mail.acme-supply.com', port: 587, secure: false };
    }
    const response = await workspace.request({ method: 'POST', url: '/api/mailboxes', payload: body });
    if (response.statusCode !== 201)
      throw new Error(`seeding ${profile.email}: ${response.statusCode} ${response.body}`);
    ids.push((response.json() as { mailbox: { id: string } }).mailbox.id);
  }
  // Their history says they have been warming up for weeks: as pool members they proved their address.
  await db
    .updateTable('mailboxes')
    .set({ proven_at: new Date(now.getTime() - 60 * DAY_MS).toISOString(), proof_note: null })
    .where('id', 'in', ids)
    .execute();

  let serial = 0;
  const sentToday = new Map<number, number>();
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const maxAge = Math.max(...PROFILES.map((p) => p.age));
  for (let ago = maxAge - 1; ago >= 0; ago--) {
    const day = new Date(today.getTime() - ago * DAY_MS);
    const active = PROFILES.map((profile, index) => ({ profile, index })).filter(
      ({ profile }) =>
        ago < profile.age &&
        !(profile.pausedDaysAgo !== undefined && ago < profile.pausedDaysAgo) &&
        !(profile.lastError && ago < 2),
    );
    await db.transaction().execute(async (trx) => {
      for (const { profile, index } of active) {
        const warmupDay = profile.age - ago;
        const target = Math.min(profile.dailyLimit, 2 + 2 * (warmupDay - 1));
        const factor = random() < 0.14 ? 0.6 : 0.8 + random() * 0.3;
        // Today is still going on: about half of the day's sends are out.
        const volume = Math.max(1, Math.round(target * factor * (ago === 0 ? 0.55 : 1)));
        const score = Math.max(0, Math.min(100, profile.reputation(warmupDay, ago) + randomInt(random, -1, 1)));
        const spamChance = Math.max(0.01, (100 - score) / 260);
        const peers = active.filter((peer) => peer.index !== index);
        if (peers.length === 0) continue;
        if (ago === 0) sentToday.set(index, volume);
        for (let n = 0; n < volume; n++) {
          const peer = peers[randomInt(random, 0, peers.length - 1)]!;
          const minutesIntoDay =
            ago === 0
              ? Math.max(5, Math.floor((now.getTime() - day.getTime()) / 60_000) - randomInt(random, 5, 300))
              : randomInt(random, 7 * 60, 17 * 60);
          const sentAt = new Date(day.getTime() + minutesIntoDay * 60_000);
          const messageId = `<demo-${++serial}@${profile.email.split('@')[1]}>`;
          const subject = SUBJECTS[randomInt(random, 0, SUBJECTS.length - 1)]!;
          const base: Omit<
            InteractionInput,
            'mailboxId' | 'type' | 'occurredAt' | 'counterpartMailboxId' | 'counterpartEmail'
          > = {
            senderMailboxId: ids[index]!,
            subject,
            messageId,
            threadId: messageId,
          };
          await recordInteraction(trx, {
            ...base,
            mailboxId: ids[index]!,
            type: 'sent',
            counterpartMailboxId: ids[peer.index]!,
            counterpartEmail: peer.profile.email,
            occurredAt: sentAt,
          });
          const later = (minutes: number) =>
            new Date(Math.min(now.getTime() - 60_000, sentAt.getTime() + minutes * 60_000));
          const asPeer = {
            ...base,
            mailboxId: ids[peer.index]!,
            counterpartMailboxId: ids[index]!,
            counterpartEmail: profile.email,
          };
          const spam = random() < spamChance;
          if (ago === 0 && random() < 0.3) continue; // not read yet
          await recordInteraction(trx, {
            ...asPeer,
            type: 'received',
            placement: spam ? 'spam' : random() < 0.04 ? 'promotions' : 'inbox',
            occurredAt: later(12),
          });
          if (spam) await recordInteraction(trx, { ...asPeer, type: 'rescued', occurredAt: later(13) });
          if (random() < 0.94) await recordInteraction(trx, { ...asPeer, type: 'opened', occurredAt: later(20) });
          if (random() < 0.28) await recordInteraction(trx, { ...asPeer, type: 'flagged', occurredAt: later(21) });
          if (random() < 0.3) await recordInteraction(trx, { ...asPeer, type: 'replied', occurredAt: later(55) });
        }
        await recordReputation(trx, ids[index]!, dayString(day), score);
      }
    });
  }

  for (const [index, profile] of PROFILES.entries()) {
    const activeDays = profile.age - (profile.pausedDaysAgo ?? 0);
    const target = Math.min(profile.dailyLimit, 2 + 2 * (activeDays - 1));
    await db
      .updateTable('mailboxes')
      .set({
        status: profile.lastError ? 'error' : profile.pausedDaysAgo !== undefined ? 'paused' : 'active',
        last_error: profile.lastError ?? null,
        warmup_day: activeDays,
        daily_target: profile.pausedDaysAgo !== undefined || profile.lastError ? 0 : target,
        last_sync_at: new Date(
          now.getTime() - (profile.lastError ? 2 * DAY_MS : randomInt(random, 2, 14) * 60_000),
        ).toISOString(),
      })
      .where('id', '=', ids[index]!)
      .execute();
  }
  await planRestOfDay(db, ids, sentToday, now, random);
}

/**
 * The sends still due, as the planner leaves them: the rest of today's target inside the send
 * window still ahead, or tomorrow's when today's window is (nearly) over. The dashboard then says
 * when each mailbox sends next.
 */
async function planRestOfDay(
  db: Kysely<Database>,
  ids: string[],
  sentToday: Map<number, number>,
  now: Date,
  random: Random,
): Promise<void> {
  let day = localDay(now, TIME_ZONE);
  let window = localWindow(day, SEND_WINDOW, TIME_ZONE);
  let from = Math.max(window.start.getTime(), now.getTime() + 10 * MINUTE_MS);
  const planningToday = from < window.end.getTime() - 30 * MINUTE_MS;
  if (!planningToday) {
    day = addDays(day, 1);
    window = localWindow(day, SEND_WINDOW, TIME_ZONE);
    from = window.start.getTime();
  }
  const span = window.end.getTime() - from;
  let serial = 0;
  for (const [index, profile] of PROFILES.entries()) {
    if (profile.lastError || profile.pausedDaysAgo !== undefined) continue;
    const peers = ids.filter(
      (_id, i) => i !== index && !PROFILES[i]!.lastError && PROFILES[i]!.pausedDaysAgo === undefined,
    );
    const target = Math.min(profile.dailyLimit, 2 + 2 * (profile.age - 1));
    const count = planningToday ? Math.max(1, target - (sentToday.get(index) ?? 0)) : target;
    const domain = profile.email.split('@')[1]!;
    const rows = Array.from({ length: count }, (_v, n) => {
      const dueAt = new Date(from + Math.floor(((n + random()) / count) * span));
      const messageId = `<demo-plan-${++serial}@${domain}>`;
      return {
        id: `msg_demo_plan_${serial}`,
        message_id: messageId,
        thread_id: messageId,
        sender_mailbox_id: ids[index]!,
        recipient_mailbox_id: peers[randomInt(random, 0, peers.length - 1)]!,
        kind: 'initial',
        turn: 1,
        plan_day: day,
        due_at: dueAt.toISOString(),
        status: 'planned',
        created_at: now.toISOString(),
      };
    });
    await db.insertInto('warmup_messages').values(rows).execute();
    await db
      .insertInto('mailbox_plans')
      .values({
        mailbox_id: ids[index]!,
        day,
        warmup_day: profile.age,
        target,
        planned: target,
        created_at: now.toISOString(),
      })
      .execute();
    await db
      .updateTable('mailboxes')
      .set({ last_plan_day: day, ramp_target: target })
      .where('id', '=', ids[index]!)
      .execute();
  }
}
