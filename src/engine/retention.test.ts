import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { testDialect } from '../../test/helpers/test-database.js';
import { insertMailbox } from '../../test/helpers/engine-fixtures.js';
import { fixedClock } from '../clock.js';
import { newId } from '../db/ids.js';
import { recordInteraction, recordReputation } from '../interactions/interactions.repository.js';
import type { Placement } from '../interactions/interactions.schemas.js';
import { foldFinishedDays } from '../interactions/workspace-rollup.js';
import { insertReceiverVerdict } from '../verdicts/verdicts.repository.js';
import { removeExpiredHistory } from './retention.js';

/*
 * Retention over old history written the way the engine writes it (warmup messages, their
 * interactions and rollups, receiver verdicts, daily scores): every statistic a user sees answers
 * the same before and after the raw rows go, unfinished rows stay, and a statement never removes
 * more than its batch. Today is 2026-09-01; with 60 days kept, the first day kept is 2026-07-03.
 */

const clock = fixedClock('2026-09-01T12:00:00Z');
const RETENTION_DAYS = 60;
let t: TestApp;
let ws: TestWorkspace;
let behind: TestWorkspace;
const mb = { a: '', b: '', c: '', d: '' };
let counter = 0;

/** A mailbox of the workspace, as the engine's tests make them. */
const mailbox = async (workspaceId: string, email: string) =>
  (await insertMailbox(t.database.db, workspaceId, { email })).id;

const hours = (at: string, n: number) => new Date(new Date(at).getTime() + n * 3_600_000);

interface Exchange {
  status?: 'planned' | 'sent' | 'lost' | 'bounced';
  /** Found by the recipient (default: yes, an hour later, then filed an hour after that). */
  found?: boolean;
  placement?: Placement;
  actions?: Array<'opened' | 'flagged' | 'rescued' | 'replied'>;
  parent?: { messageId: string; threadId: string };
}

/** One warmup message the way the engine keeps it: its row, its interactions and rollups, its verdict. */
async function exchange(from: string, to: string, at: string, options: Exchange = {}) {
  const messageId = `<r${++counter}@retention.test>`;
  const threadId = options.parent?.threadId ?? messageId;
  const status = options.status ?? 'sent';
  const found = status === 'sent' && options.found !== false;
  const placement = options.placement ?? 'inbox';
  const id = newId('msg');
  await t.database.db
    .insertInto('warmup_messages')
    .values({
      id,
      message_id: messageId,
      thread_id: threadId,
      sender_mailbox_id: from,
      recipient_mailbox_id: to,
      kind: options.parent ? 'reply' : 'initial',
      turn: options.parent ? 2 : 1,
      parent_message_id: options.parent?.messageId ?? null,
      subject: 'Lunch on Friday?',
      body_text: 'See you there',
      body_html: null,
      plan_day: at.slice(0, 10),
      due_at: new Date(at).toISOString(),
      status,
      sent_at: status === 'planned' ? null : new Date(at).toISOString(),
      found_at: found ? hours(at, 1).toISOString() : null,
      placement: found ? placement : null,
      engaged_at: found ? hours(at, 2).toISOString() : null,
      created_at: new Date(at).toISOString(),
    })
    .execute();
  const log = async (mailboxId: string, type: Parameters<typeof recordInteraction>[1]['type'], when: Date) =>
    recordInteraction(t.database.db, {
      mailboxId,
      type,
      senderMailboxId: from,
      counterpartMailboxId: mailboxId === from ? to : from,
      counterpartEmail: 'peer@retention.test',
      subject: 'Lunch on Friday?',
      messageId,
      threadId,
      placement: type === 'received' ? placement : null,
      occurredAt: when,
    });
  if (status !== 'planned') await log(from, 'sent', new Date(at));
  if (status === 'bounced') await log(from, 'bounced', hours(at, 1));
  if (found) {
    await log(to, 'received', hours(at, 1));
    for (const action of options.actions ?? []) await log(to, action, hours(at, 2));
    await insertReceiverVerdict(t.database.db, {
      warmupMessageId: id,
      senderMailboxId: from,
      recipientMailboxId: to,
      receiverProvider: 'gmail',
      identifiedBy: 'message-id',
      placement,
      foundAt: hours(at, 1),
      verdict: {
        authservId: 'mx.google.com',
        spf: 'pass',
        dkim: counter % 3 === 0 ? 'fail' : 'pass',
        dmarc: 'pass',
        arc: null,
        scl: null,
        bcl: null,
        spamScore: counter % 4,
      },
    });
  }
  return { id, messageId, threadId };
}

function ok(res: LightMyRequestResponse): string {
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

/** Every statistic of the workspace as the API answers it, old days included. */
async function everything(workspace: TestWorkspace, mailboxIds: string[]): Promise<Record<string, string>> {
  const range = 'startDate=2026-04-01&endDate=2026-09-01';
  const urls = [
    '/api/stats/dashboard',
    `/api/stats/analytics?${range}`,
    '/api/stats/analytics?period=90d',
    `/api/stats/reputation?${range}`,
    `/api/stats/placement?${range}`,
    '/api/stats/placement?startDate=2026-05-01&endDate=2026-05-31',
    `/api/stats/engagement?${range}`,
    `/api/stats/export?format=json&${range}`,
    `/api/stats/export?format=csv&${range}`,
    '/api/stats/daily-summary?date=2026-05-07',
    ...mailboxIds.flatMap((id) => [
      `/api/stats/analytics?mailboxId=${id}&${range}`,
      `/api/stats/placement?mailboxId=${id}&${range}`,
      `/api/mailboxes/${id}/stats?${range}`,
      `/api/mailboxes/${id}/verdicts?${range}`,
    ]),
  ];
  const answers: Record<string, string> = {};
  for (const url of urls) answers[url] = ok(await workspace.request({ method: 'GET', url }));
  return answers;
}

const count = async (table: 'warmup_messages' | 'interactions' | 'receiver_verdicts') =>
  Number(
    (
      await t.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

const exists = async (id: string) =>
  (await t.database.db.selectFrom('warmup_messages').select('id').where('id', '=', id).executeTakeFirst()) !==
  undefined;

const interactionsOf = async (messageId: string) =>
  (await t.database.db.selectFrom('interactions').select('id').where('message_id', '=', messageId).execute()).length;

const run = (options: { batchRows?: number; budgetMs?: number } = {}) =>
  removeExpiredHistory(t.database.db, testDialect, clock.now(), { retentionDays: RETENTION_DAYS, ...options });

describe(`retention of raw rows (${testDialect})`, () => {
  const survivors: Record<string, { id: string; messageId: string }> = {};
  let oldFinished = 0;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    ws = t.workspace;
    behind = await t.createWorkspace('behind');
    mb.a = await mailbox(ws.id, 'a@alpha.test');
    mb.b = await mailbox(ws.id, 'b@beta.test');
    mb.c = await mailbox(ws.id, 'c@gamma.test');
    mb.d = await mailbox(behind.id, 'd@delta.test');

    // April to June: finished conversations, every placement and action, some bounced or lost
    const placements: Placement[] = ['inbox', 'spam', 'promotions', 'other'];
    const pairs = [
      [mb.a, mb.b],
      [mb.b, mb.c],
      [mb.c, mb.a],
      [mb.a, mb.d],
      [mb.d, mb.b],
    ] as const;
    for (let day = 0; day < 12; day++) {
      const date = new Date(Date.UTC(2026, 3, 2 + day * 7, 9)).toISOString();
      for (const [i, [from, to]] of pairs.entries()) {
        const first = await exchange(from, to, date, {
          placement: placements[(day + i) % 4],
          actions: (['opened', 'flagged', 'rescued', 'replied'] as const).slice(0, (day + i) % 5),
        });
        oldFinished += 1;
        if ((day + i) % 3 === 0) {
          await exchange(to, from, hours(date, 5).toISOString(), { parent: first, placement: 'inbox' });
          oldFinished += 1;
        }
      }
      await exchange(mb.a, mb.c, date, { status: day % 2 === 0 ? 'bounced' : 'lost' });
      oldFinished += 1;
      for (const id of [mb.a, mb.b, mb.c, mb.d]) await recordReputation(t.database.db, id, date.slice(0, 10), 40 + day);
    }
    // the same months, not finished: they stay
    survivors.planned = await exchange(mb.a, mb.b, '2026-05-04T10:00:00Z', { status: 'planned' });
    survivors.unfound = await exchange(mb.b, mb.a, '2026-05-05T10:00:00Z', { found: false });
    const answered = await exchange(mb.c, mb.b, '2026-05-06T10:00:00Z');
    survivors.answered = answered;
    survivors.plannedReply = await exchange(mb.b, mb.c, '2026-09-02T10:00:00Z', {
      parent: answered,
      status: 'planned',
    });
    const lively = await exchange(mb.a, mb.c, '2026-06-01T10:00:00Z');
    survivors.lively = lively;
    survivors.recentReply = await exchange(mb.c, mb.a, '2026-08-20T10:00:00Z', { parent: lively });
    // a finished old message of a workspace whose rollup is behind
    survivors.unfolded = await exchange(mb.d, mb.d, '2026-05-07T10:00:00Z');
    // and the recent weeks
    for (let day = 0; day < 6; day++) {
      const date = new Date(Date.UTC(2026, 6, 20 + day * 7, 9)).toISOString();
      await exchange(mb.a, mb.b, date, { placement: 'spam', actions: ['rescued', 'opened'] });
      await exchange(mb.b, mb.c, date, { placement: 'inbox', actions: ['replied'] });
    }
    await foldFinishedDays(t.database.db, clock.now());
  });

  afterAll(async () => {
    await t.close();
  });

  it('changes no statistic, removes the finished old rows and keeps every unfinished one', async () => {
    // `behind` has not been folded yet (its mailbox was deleted and re-added, say): it keeps everything
    await t.database.db.deleteFrom('stats_folds').where('workspace_id', '=', behind.id).execute();
    const before = { ws: await everything(ws, [mb.a, mb.b, mb.c]), behind: await everything(behind, [mb.d]) };
    const counts = {
      messages: await count('warmup_messages'),
      interactions: await count('interactions'),
      verdicts: await count('receiver_verdicts'),
    };

    const summary = await run();
    expect(summary).toMatchObject({ cutoffDay: '2026-07-03', done: true });
    // a message of ws's old days that also involves `behind`'s mailbox stays with it
    expect(summary.messages).toBeGreaterThan(oldFinished / 2);
    expect(summary.messages).toBeLessThan(oldFinished);
    expect(summary.interactions).toBeGreaterThan(summary.messages);
    expect(await count('warmup_messages')).toBe(counts.messages - summary.messages);
    expect(await count('interactions')).toBe(counts.interactions - summary.interactions);
    // what receivers saw is the statistics' own record: it stays
    expect(await count('receiver_verdicts')).toBe(counts.verdicts);

    for (const [name, row] of Object.entries(survivors)) {
      expect(await exists(row.id), name).toBe(true);
      if (name !== 'planned' && name !== 'plannedReply')
        expect(await interactionsOf(row.messageId), name).toBeGreaterThan(0);
    }
    const oldLeft = await t.database.db
      .selectFrom('warmup_messages as w')
      .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
      .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
      .select(['w.id', 's.workspace_id as sender', 'r.workspace_id as recipient'])
      .where('w.due_at', '<', '2026-07-03')
      .execute();
    const survivorIds = new Set(Object.values(survivors).map((row) => row.id));
    // every old message left is a survivor above or touches the workspace that is behind
    for (const row of oldLeft)
      expect(survivorIds.has(row.id) || row.sender === behind.id || row.recipient === behind.id).toBe(true);

    expect(await everything(ws, [mb.a, mb.b, mb.c])).toEqual(before.ws);
    expect(await everything(behind, [mb.d])).toEqual(before.behind);
    // the activity log is raw history: it starts at the retention
    const log = ok(
      await ws.request({
        method: 'GET',
        url: `/api/mailboxes/${mb.c}/interactions?limit=100&startDate=2026-04-01&endDate=2026-06-30`,
      }),
    );
    const left = JSON.parse(log) as { interactions: Array<{ messageId: string }> };
    for (const entry of left.interactions)
      expect([survivors.answered, survivors.lively, survivors.plannedReply].map((s) => s.messageId)).toContain(
        entry.messageId,
      );

    // once `behind` is folded, its old rows go too, and its statistics still do not move
    await foldFinishedDays(t.database.db, clock.now());
    const again = await run();
    expect(again.messages).toBeGreaterThan(0);
    expect(await exists(survivors.unfolded.id)).toBe(false);
    expect(await everything(behind, [mb.d])).toEqual(before.behind);
    expect(await everything(ws, [mb.a, mb.b, mb.c])).toEqual(before.ws);
    expect(await run()).toMatchObject({ messages: 0, interactions: 0, done: true });
  });
});

describe(`retention in batches (${testDialect})`, () => {
  beforeAll(async () => {
    t = await createTestApp({ clock });
    mb.a = await mailbox(t.workspace.id, 'a@alpha.test');
    mb.b = await mailbox(t.workspace.id, 'b@beta.test');
    for (let i = 0; i < 11; i++) await exchange(mb.a, mb.b, new Date(Date.UTC(2026, 4, 1 + i, 9)).toISOString());
    await foldFinishedDays(t.database.db, clock.now());
  });

  afterAll(async () => {
    await t.close();
  });

  it('removes at most a batch per statement and stops when its time is spent', async () => {
    const messages = await count('warmup_messages');
    const interactions = await count('interactions');
    expect(messages).toBe(11);
    // no time at all: one statement's batch, and it says there is more
    expect(await run({ batchRows: 4, budgetMs: 0 })).toMatchObject({ messages: 4, interactions: 0, done: false });
    expect(await count('warmup_messages')).toBe(7);
    expect(await count('interactions')).toBe(interactions);
    // the next cycles carry on, batch by batch: 4 + 3 messages, then their interactions 4 at a time
    const next = await run({ batchRows: 4, budgetMs: 60_000 });
    expect(next).toMatchObject({ messages: 7, interactions: interactions, done: true });
    expect(await count('warmup_messages')).toBe(0);
    expect(await count('interactions')).toBe(0);
  });
});
