// The statistics tests' fixtures: one test app per test file (started by useStatsApp) with four
// mailboxes in two workspaces and their mail of March 2026, written the way the engine writes it.

import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, type TestApp, type TestWorkspace } from './test-app.js';
import { fixedClock } from '../../src/clock.js';
import { newId } from '../../src/db/ids.js';
import type { MailboxStatus, ProviderId } from '../../src/mailboxes/mailboxes.schemas.js';
import { incrementDaily, recordInteraction, recordReputation } from '../../src/interactions/interactions.repository.js';
import type { InteractionType, Placement } from '../../src/interactions/interactions.schemas.js';
export const clock = fixedClock('2026-03-15T12:00:00Z');
export let t: TestApp;
export let ws: TestWorkspace;
export let other: TestWorkspace;
export const mb = { alice: '', bob: '', carol: '', dave: '' };
export const BOB_EMAIL = '"bob, jr"@beta.test';

export async function insertMailbox(
  workspaceId: string,
  email: string,
  provider: ProviderId,
  extra: { status?: MailboxStatus; warmupDay?: number; dailyTarget?: number } = {},
) {
  const id = newId('mb');
  const now = clock.now().toISOString();
  await t.database.db
    .insertInto('mailboxes')
    .values({
      id,
      workspace_id: workspaceId,
      email,
      email_normalized: email.toLowerCase(),
      name: null,
      provider,
      connection_type: 'imap',
      status: extra.status ?? 'active',
      imap: '{}',
      smtp: '{}',
      password_encrypted: 'x',
      warmup: '{}',
      warmup_day: extra.warmupDay ?? 0,
      daily_target: extra.dailyTarget ?? 0,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

export let messageCount = 0;
export async function record(
  mailboxId: string,
  type: InteractionType,
  senderMailboxId: string,
  counterpartMailboxId: string,
  messageId: string,
  at: string,
  placement: Placement | null = null,
) {
  const inserted = await recordInteraction(t.database.db, {
    mailboxId,
    type,
    senderMailboxId,
    counterpartMailboxId,
    counterpartEmail: 'peer@example.test',
    subject: 'Lunch on Friday?',
    messageId,
    threadId: messageId,
    placement,
    occurredAt: new Date(at),
  });
  expect(inserted).toBe(true);
}

/** One warmup message the way the engine records it: sent by `from`, received by `to` with a placement, then what `to` did with it. */
export async function message(
  from: string,
  to: string,
  at: string,
  placement: Placement,
  actions: Array<'opened' | 'flagged' | 'rescued' | 'replied'> = [],
) {
  const messageId = `<m${++messageCount}@test>`;
  await record(from, 'sent', from, to, messageId, at);
  await record(to, 'received', from, from, messageId, at, placement);
  for (const action of actions) await record(to, action, from, from, messageId, at);
}

/** A Gmail recipient took a message of `sender` from its tab to Primary on `day`: counted as the reader counts it. */
export async function movedToPrimary(sender: string, day: string) {
  await incrementDaily(t.database.db, sender, day, 'promoted_to_primary');
}

export function get(url: string, workspace: TestWorkspace = ws) {
  return workspace.request({ method: 'GET', url });
}

export function ok<T>(res: LightMyRequestResponse): T {
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.json<T>();
}

/** Starts the test app before this file's tests and closes it after them. */
export function useStatsApp(): void {
  beforeAll(async () => {
    t = await createTestApp({ clock });
    ws = t.workspace;
    other = await t.createWorkspace('other');
    mb.alice = await insertMailbox(ws.id, 'alice@alpha.test', 'gmail', { warmupDay: 12, dailyTarget: 20 });
    mb.bob = await insertMailbox(ws.id, BOB_EMAIL, 'outlook');
    mb.carol = await insertMailbox(ws.id, 'carol@gamma.test', 'yahoo', { status: 'paused' });
    mb.dave = await insertMailbox(other.id, 'dave@delta.test', 'gmail');

    await message(mb.alice, mb.bob, '2026-03-15T09:00:00Z', 'inbox', ['opened', 'replied']);
    await message(mb.alice, mb.carol, '2026-03-15T10:00:00Z', 'spam', ['rescued', 'opened']);
    // Either side of midnight: the first counts on the 14th, the second on the 15th.
    await message(mb.bob, mb.alice, '2026-03-14T23:59:59.999Z', 'promotions');
    // alice (Gmail) takes it to Primary the next morning
    await movedToPrimary(mb.bob, '2026-03-15');
    await message(mb.bob, mb.alice, '2026-03-15T00:00:00.000Z', 'inbox', ['flagged']);
    // Mail across workspaces (the pool is installation-wide): each side counts in its own workspace.
    await message(mb.alice, mb.dave, '2026-03-10T08:00:00Z', 'inbox');
    await message(mb.dave, mb.alice, '2026-03-10T09:00:00Z', 'spam');
    // First day of the default period, and the day before it.
    await message(mb.carol, mb.alice, '2026-02-14T00:00:00Z', 'other');
    await message(mb.alice, mb.bob, '2026-02-13T23:59:59Z', 'inbox');
    // A bounce: sent, then bounced, both on the 12th.
    await record(mb.alice, 'sent', mb.alice, mb.bob, '<bounce@test>', '2026-03-12T08:00:00Z');
    await record(mb.alice, 'bounced', mb.alice, mb.bob, '<bounce@test>', '2026-03-12T08:05:00Z');

    await recordReputation(t.database.db, mb.alice, '2026-01-20', 50);
    await recordReputation(t.database.db, mb.alice, '2026-03-01', 70);
    await recordReputation(t.database.db, mb.alice, '2026-03-10', 80);
    await recordReputation(t.database.db, mb.bob, '2026-03-10', 61);
    await recordReputation(t.database.db, mb.dave, '2026-03-10', 10);
  });
  afterAll(() => t?.close());
}
