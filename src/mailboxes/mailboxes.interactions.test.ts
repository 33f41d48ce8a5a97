// A mailbox's activity log: filters, pages, dates, and other workspaces' addresses masked.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../db/ids.js';
import type { Mailbox } from './mailboxes.schemas.js';
import type { InteractionType, Placement } from '../interactions/interactions.schemas.js';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { MAIL_USERS } from '../../test/mailstack/users.js';
import { expectProblem } from '../../test/helpers/problem.js';

const [alice, amy, bob] = MAIL_USERS.mailboxes;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

afterEach(async () => {
  await t.database.db.deleteFrom('mailboxes').execute();
});

/** A custom mailbox stored without a login (the hosts are never contacted). */
function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    email: alice.email,
    password: alice.password,
    provider: 'custom',
    connectionType: 'imap',
    imap: { host: 'imap.example.test', port: 993, secure: true },
    smtp: { host: 'smtp.example.test', port: 587, secure: false },
    verify: false,
    ...overrides,
  };
}

async function create(
  overrides: Record<string, unknown> = {},
  workspace: TestWorkspace = t.workspace,
): Promise<Mailbox> {
  const res = await workspace.request({ method: 'POST', url: '/api/mailboxes', payload: body(overrides) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().mailbox;
}

describe('interactions', () => {
  let mailbox: Mailbox;
  let peer: Mailbox;
  let foreignWorkspace: TestWorkspace;

  async function insertInteraction(values: {
    type: InteractionType;
    at: string;
    counterpart: string;
    counterpartWorkspaceId: string | null;
    placement?: Placement | null;
    subject?: string;
  }): Promise<string> {
    const id = newId('int');
    await t.database.db
      .insertInto('interactions')
      .values({
        id,
        workspace_id: t.workspace.id,
        mailbox_id: mailbox.id,
        type: values.type,
        counterpart_mailbox_id: null,
        counterpart_email: values.counterpart,
        counterpart_workspace_id: values.counterpartWorkspaceId,
        subject: values.subject ?? 'Quick question',
        message_id: `<${id}@alpha.test>`,
        thread_id: 'thr_1',
        placement: values.placement ?? null,
        occurred_at: values.at,
        day: values.at.slice(0, 10),
      })
      .execute();
    return id;
  }

  async function list(query = '', workspace: TestWorkspace = t.workspace): Promise<LightMyRequestResponse> {
    return workspace.request({ method: 'GET', url: `/api/mailboxes/${mailbox.id}/interactions${query}` });
  }

  beforeAll(async () => {
    foreignWorkspace = await t.createWorkspace('neighbours');
  });

  it('lists newest first, masks counterparts from other workspaces, and filters by type and UTC days', async () => {
    mailbox = await create({ email: alice.email });
    peer = await create({ email: bob.email });
    const sent = await insertInteraction({
      type: 'sent',
      at: '2026-03-01T08:00:00.000Z',
      counterpart: peer.email,
      counterpartWorkspaceId: t.workspace.id,
    });
    const received = await insertInteraction({
      type: 'received',
      at: '2026-03-02T23:59:59.999Z',
      counterpart: 'jane.doe@example.com',
      counterpartWorkspaceId: foreignWorkspace.id,
      placement: 'spam',
    });
    const rescued = await insertInteraction({
      type: 'rescued',
      at: '2026-03-03T00:00:00.000Z',
      counterpart: 'jane.doe@example.com',
      counterpartWorkspaceId: foreignWorkspace.id,
    });
    const unknown = await insertInteraction({
      type: 'replied',
      at: '2026-03-04T12:00:00.000Z',
      counterpart: 'x@gone.test',
      counterpartWorkspaceId: null,
    });

    const res = await list();
    expect(res.statusCode).toBe(200);
    const { interactions, pagination } = res.json();
    expect(interactions.map((i: { id: string }) => i.id)).toEqual([unknown, rescued, received, sent]);
    expect(pagination).toEqual({ page: 1, limit: 20, total: 4, totalPages: 1 });
    expect(interactions[3]).toEqual({
      id: sent,
      mailboxId: mailbox.id,
      type: 'sent',
      counterpart: peer.email,
      subject: 'Quick question',
      messageId: `<${sent}@alpha.test>`,
      threadId: 'thr_1',
      placement: null,
      occurredAt: '2026-03-01T08:00:00.000Z',
    });
    expect(interactions[2]).toMatchObject({ type: 'received', counterpart: 'j***@example.com', placement: 'spam' });
    expect(interactions[1].counterpart).toBe('j***@example.com');
    expect(interactions[0].counterpart).toBe('x***@gone.test');
    expect(res.body).not.toContain('jane.doe');

    const ids = async (query: string) => (await list(query)).json().interactions.map((i: { id: string }) => i.id);
    expect(await ids('?type=received')).toEqual([received]);
    expect(await ids('?type=opened')).toEqual([]);
    expect(await ids('?startDate=2026-03-02&endDate=2026-03-03')).toEqual([rescued, received]);
    expect(await ids('?startDate=2026-03-02&endDate=2026-03-02')).toEqual([received]);
    expect(await ids('?startDate=2026-03-03')).toEqual([unknown, rescued]);
    expect(await ids('?endDate=2026-03-01')).toEqual([sent]);
    expect(await ids('?limit=1&page=2')).toEqual([rescued]);
    expect(await ids('?type=rescued&startDate=2026-03-01&endDate=2026-03-31')).toEqual([rescued]);
  });

  it.each([
    ['?startDate=2026-03-05&endDate=2026-03-04', '/query/endDate'],
    ['?startDate=2026-02-30', '/query/startDate'],
    ['?endDate=2026-3-4', '/query/endDate'],
    ['?type=clicked', '/query/type'],
    ['?limit=101', '/query/limit'],
    ['?foo=1', '/query/foo'],
  ])('%s → 400', async (query, path) => {
    mailbox = await create({ email: amy.email });
    expectProblem(await list(query), 400, 'validation_error', path);
  });

  it('an unknown mailbox is a 404', async () => {
    expectProblem(
      await t.workspace.request({ method: 'GET', url: '/api/mailboxes/mbx_nope/interactions' }),
      404,
      'not_found',
    );
  });
});
