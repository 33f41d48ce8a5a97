/*
 * Placement tests of a user's own copy: the rules of making one (who sends, to which seeds, whether
 * the sender's day has room) and the report. The engine sends and looks for the copies
 * (engine/placement-runner.ts).
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { newId } from '../db/ids.js';
import type { Database, NewPlacementTestCopyRow } from '../db/schema.js';
import { pagination } from '../http/common.schemas.js';
import { ConflictError, NotFoundError, ValidationError } from '../http/errors.js';
import { messageIdFor } from '../engine/message-content.js';
import { findDayPlan } from '../engine/mailbox-engine-state.repository.js';
import { loadSendsOfDay } from '../engine/warmup-messages.repository.js';
import { isSendDay, localDaySpan, sendDayOf } from '../engine/send-budget.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import { bodyToHtml } from '../templates/render.js';
import {
  findPlacementTest,
  insertPlacementTest,
  listPlacementTests,
  placementSendsOfDay,
} from './placement-tests.repository.js';
import { placementTestView } from './placement-test-view.js';
import {
  MAX_PLACEMENT_SEEDS,
  type CreatePlacementTestBody,
  type PlacementTest,
  type PlacementTestList,
  type PlacementTestListQuery,
} from './placement-tests.schemas.js';

export interface PlacementTestsServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
}

/** Tags that end a line of text. */
const LINE_BREAK_TAG = /^(br|\/p|\/div|\/li|\/h\d|\/tr)\b/i;

/**
 * Plain text of an HTML body: tags dropped (those that end a line become a line break), the common
 * entities read. One pass: an unclosed `<` ends the tags, so hostile input stays linear.
 */
export function htmlToText(html: string): string {
  let text = '';
  let at = 0;
  while (at < html.length) {
    const open = html.indexOf('<', at);
    const close = open < 0 ? -1 : html.indexOf('>', open);
    if (close < 0) {
      text += html.slice(at);
      break;
    }
    text += html.slice(at, open);
    if (LINE_BREAK_TAG.test(html.slice(open + 1, Math.min(close, open + 8)))) text += '\n';
    at = close + 1;
  }
  return text
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * Up to `limit` seeds across providers: one of each provider in turn (then a second of each…),
 * each provider's own in a random order, so repeated tests do not always hit the same mailboxes.
 */
export function pickSeeds<T extends { provider: string }>(candidates: readonly T[], limit: number): T[] {
  const shuffled = [...candidates];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  const byProvider = new Map<string, T[]>();
  for (const candidate of shuffled) {
    byProvider.set(candidate.provider, [...(byProvider.get(candidate.provider) ?? []), candidate]);
  }
  const picked: T[] = [];
  for (let round = 0; picked.length < limit; round++) {
    const before = picked.length;
    for (const group of byProvider.values()) if (group[round] && picked.length < limit) picked.push(group[round]);
    if (picked.length === before) break;
  }
  return picked;
}

export function createPlacementTestsService({ db, clock }: PlacementTestsServiceDeps) {
  return {
    async create(workspaceId: string, body: CreatePlacementTestBody): Promise<PlacementTest> {
      if (body.text === undefined && body.html === undefined) {
        throw ValidationError.field('/body/text', 'give the body as `text`, `html` or both');
      }
      const now = clock.now();
      const sender = await db
        .selectFrom('mailboxes')
        .select(['id', 'email', 'status', 'proven_at', 'warmup'])
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', body.senderMailboxId)
        .executeTakeFirst();
      if (!sender) {
        throw new ValidationError(`senderMailboxId: mailbox ${body.senderMailboxId} not found in this workspace`, [
          { path: '/body/senderMailboxId', message: 'no such mailbox in this workspace' },
        ]);
      }
      if (sender.status !== 'active' || sender.proven_at === null) {
        throw new ConflictError(`the sender ${sender.email} is not active and connected (status ${sender.status})`, [
          { path: '/body/senderMailboxId', message: 'the sender must be active and connected' },
        ]);
      }
      const candidates = await db
        .selectFrom('mailboxes')
        .select(['id', 'provider'])
        .where('workspace_id', '=', workspaceId)
        .where('status', '=', 'active')
        .where('proven_at', 'is not', null)
        .where('id', '!=', sender.id)
        .execute();
      const seeds = pickSeeds(candidates, body.seedCount ?? MAX_PLACEMENT_SEEDS);
      if (seeds.length === 0) {
        throw new ConflictError('no seed mailbox: the workspace has no other active, connected mailbox to send to');
      }

      // Each copy is a send of the sender's day: refused unless the day's budget has room for all.
      const settings = parseWarmupSettings(sender.warmup);
      const day = sendDayOf(settings, now);
      const span = localDaySpan(settings, day);
      const plan = await findDayPlan(db, sender.id, day);
      const budget = isSendDay(settings, day) ? (plan?.target ?? 0) : 0;
      const done = await loadSendsOfDay(db, sender.id, span, span.start);
      const { reserved } = await placementSendsOfDay(db, sender.id, span);
      const room = Math.max(0, budget - done.sent - reserved);
      if (room < seeds.length) {
        throw new ConflictError(
          `the sender's day ${day} has room for ${room} more send(s) (budget ${budget}, ${done.sent} sent, ${reserved} held by queued placement tests) and the test needs ${seeds.length}: try fewer seeds (seedCount) or another day`,
          [{ path: '/body/seedCount', message: `room for ${room} send(s) today` }],
        );
      }

      const id = newId('plt', now.getTime());
      const text = body.text ?? htmlToText(body.html ?? '');
      const html = body.html ?? bodyToHtml(body.text ?? '');
      const copies: NewPlacementTestCopyRow[] = seeds.map((seed) => ({
        id: newId('plc', now.getTime()),
        test_id: id,
        sender_mailbox_id: sender.id,
        seed_mailbox_id: seed.id,
        message_id: messageIdFor(sender.email, `${now.getTime().toString(36)}.${randomBytes(9).toString('base64url')}`),
        provider: seed.provider,
        placement: null,
        folder: null,
        sent_at: null,
        found_at: null,
      }));
      await insertPlacementTest(
        db,
        {
          id,
          workspace_id: workspaceId,
          sender_mailbox_id: sender.id,
          subject: body.subject,
          text_body: text,
          html_body: html,
          status: 'queued',
          last_error: null,
          created_at: now.toISOString(),
          sent_at: null,
          completed_at: null,
        },
        copies,
      );
      return this.get(workspaceId, id);
    },

    async get(workspaceId: string, id: string): Promise<PlacementTest> {
      const record = await findPlacementTest(db, workspaceId, id);
      if (!record) throw new NotFoundError(`placement test ${id} not found`);
      return placementTestView(record);
    },

    async list(workspaceId: string, query: PlacementTestListQuery): Promise<PlacementTestList> {
      const page = query.page ?? 1;
      const limit = query.limit ?? 20;
      const { records, total } = await listPlacementTests(db, workspaceId, page, limit);
      return { placementTests: records.map(placementTestView), pagination: pagination(page, limit, total) };
    },
  };
}

export type PlacementTestsService = ReturnType<typeof createPlacementTestsService>;
