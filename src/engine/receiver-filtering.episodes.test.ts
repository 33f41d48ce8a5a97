// The culprit rule against the database: one `mailbox.receiver_filtering` event per episode, the
// stored state the outlook reads, and the senders' trusted evidence with the culprit's spam set aside.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { createMailbox, proveAll } from '../../test/helpers/engine.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { loadWeighedEvidence } from './evidence.js';
import { detectFilteringReceivers } from './receiver-filtering.js';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const EMAILS = ['abe@one.test', 'bea@two.test', 'cal@three.test', 'dan@four.test', 'eve@filter.test'];

let testApp: TestApp;
let db: Kysely<Database>;
const ids: string[] = [];

beforeAll(async () => {
  testApp = await createTestApp({ clock: fixedClock(NOW) });
  db = testApp.database.db;
  for (const email of EMAILS) ids.push(await createMailbox(testApp.workspace, email));
  await proveAll(db);
  const webhook = await testApp.workspace.request({
    method: 'POST',
    url: '/api/webhooks',
    payload: { url: 'http://127.0.0.1:9/hooks', events: ['mailbox.receiver_filtering'] },
  });
  expect(webhook.statusCode, webhook.body).toBe(201);
  // every mailbox writes twice to every other; eve files all of it into spam, the others none
  const eve = ids[4]!;
  let n = 0;
  for (const sender of ids) {
    for (const recipient of ids) {
      if (sender === recipient) continue;
      for (let k = 0; k < 2; k += 1) {
        n += 1;
        const at = new Date(NOW.getTime() - n * 60_000).toISOString();
        await db
          .insertInto('warmup_messages')
          .values({
            id: `msg_${n}`,
            message_id: `<m${n}@test>`,
            thread_id: `<m${n}@test>`,
            sender_mailbox_id: sender,
            recipient_mailbox_id: recipient,
            kind: 'initial',
            turn: 1,
            plan_day: at.slice(0, 10),
            due_at: at,
            status: 'sent',
            created_at: at,
            sent_at: at,
            found_at: at,
            placement: recipient === eve ? 'spam' : 'inbox',
          })
          .execute();
      }
    }
  }
});

afterAll(async () => {
  await testApp?.close();
});

async function events() {
  return db.selectFrom('webhook_events').select('payload').where('type', '=', 'mailbox.receiver_filtering').execute();
}

it('names the receiver once per episode, stores it for the outlook, and sets its spam aside for the senders', async () => {
  const eve = ids[4]!;
  expect(await detectFilteringReceivers(db, NOW)).toEqual({ filtering: 1, started: 1, ended: 0 });
  // every later pass while it stays one: no new event
  expect(await detectFilteringReceivers(db, new Date(NOW.getTime() + 3_600_000))).toEqual({
    filtering: 1,
    started: 0,
    ended: 0,
  });
  const first = await events();
  expect(first).toHaveLength(1);
  expect(JSON.parse(first[0]!.payload)).toMatchObject({
    type: 'mailbox.receiver_filtering',
    data: { mailbox: { id: eve, email: 'eve@filter.test' }, junkedSenders: 4, senders: 4 },
  });

  // the healthy senders' evidence: eve's spam is set aside, in all of it too
  const evidence = await loadWeighedEvidence(db, new Date(NOW.getTime() - 86_400_000), NOW, ids.slice(0, 4));
  for (const sender of ids.slice(0, 4)) {
    expect(evidence.get(sender)?.trusted).toEqual({ sent: 6, found: 6, spam: 0, bounced: 0, lost: 0 });
    expect(evidence.get(sender)?.all).toEqual(evidence.get(sender)?.trusted);
  }

  // the API names it with the fix
  const response = await testApp.workspace.request({ method: 'GET', url: `/api/mailboxes/${eve}` });
  const attention = (response.json() as { mailbox: { outlook: { attention: Array<{ kind: string }> } } }).mailbox
    .outlook.attention;
  expect(attention.map((a) => a.kind)).toContain('receiver_filtering');

  // fixed (its filter lets the mail through): the episode ends; junking again is a new episode
  await db.updateTable('warmup_messages').set({ placement: 'inbox' }).where('recipient_mailbox_id', '=', eve).execute();
  expect(await detectFilteringReceivers(db, NOW)).toEqual({ filtering: 0, started: 0, ended: 1 });
  await db.updateTable('warmup_messages').set({ placement: 'spam' }).where('recipient_mailbox_id', '=', eve).execute();
  const later = new Date(NOW.getTime() + 7_200_000);
  expect(await detectFilteringReceivers(db, later)).toEqual({ filtering: 1, started: 1, ended: 0 });
  expect(await events()).toHaveLength(2);
});
