// Mailbox routes that need no mail server: validation, presets, listing, deletion and workspace
// isolation (the activity log is mailboxes.interactions.test.ts's). Mailboxes are stored with
// `verify: false`, which never connects.
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../db/ids.js';
import { recordInteraction } from '../interactions/interactions.repository.js';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { MAIL_USERS } from '../../test/mailstack/users.js';
import { KNOWN_PROVIDERS, type Mailbox } from './mailboxes.schemas.js';
import { PROVIDERS } from './providers.js';
import { SecretDecryptionError } from '../secrets/secrets.js';
import { createMailboxesService } from './mailboxes.service.js';
import { expectProblem } from '../../test/helpers/problem.js';

const [alice, amy, bob, bella, carol, chris] = MAIL_USERS.mailboxes;

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

describe('providers', () => {
  it('GET /api/mailboxes/providers lists the six presets with app-password hints', async () => {
    const res = await t.workspace.request({ method: 'GET', url: '/api/mailboxes/providers' });
    expect(res.statusCode).toBe(200);
    const { providers } = res.json();
    expect(providers.map((p: { id: string }) => p.id)).toEqual([...KNOWN_PROVIDERS]);
    expect(providers.find((p: { id: string }) => p.id === 'gmail')).toMatchObject({
      imap: { host: 'imap.gmail.com', port: 993, secure: true },
      smtp: { host: 'smtp.gmail.com', port: 465, secure: true },
      appPasswordRequired: true,
      passwordLogin: true,
      oauthProvider: 'google',
      helpUrl: expect.stringMatching(/^https:\/\//),
    });
    // 2026: Microsoft takes no password on IMAP (and soon SMTP) any more, app passwords included
    expect(providers.find((p: { id: string }) => p.id === 'outlook')).toMatchObject({
      passwordLogin: false,
      oauthProvider: 'microsoft',
      notes: expect.stringMatching(/^Connect with Microsoft \(OAuth\)/),
    });
    for (const other of providers.filter((p: { id: string }) => !['gmail', 'outlook'].includes(p.id))) {
      expect(other).toMatchObject({ passwordLogin: true, oauthProvider: null });
    }
  });

  it('needs an API key like every /api route', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/mailboxes/providers' });
    expectProblem(res, 401, 'unauthorized');
  });

  it.each([
    ['gmail', 'imap.gmail.com', 993, true, 'smtp.gmail.com', 465, true],
    ['outlook', 'outlook.office365.com', 993, true, 'smtp.office365.com', 587, false],
    ['yahoo', 'imap.mail.yahoo.com', 993, true, 'smtp.mail.yahoo.com', 465, true],
    ['zoho', 'imap.zoho.com', 993, true, 'smtp.zoho.com', 465, true],
    ['icloud', 'imap.mail.me.com', 993, true, 'smtp.mail.me.com', 587, false],
    ['fastmail', 'imap.fastmail.com', 993, true, 'smtp.fastmail.com', 465, true],
  ])(
    '%s fills imap and smtp from its preset, the address as login name',
    async (provider, imapHost, imapPort, imapSecure, smtpHost, smtpPort, smtpSecure) => {
      const mailbox = await create({ email: 'Person@Example.com', provider, imap: undefined, smtp: undefined });
      expect(mailbox.imap).toEqual({
        host: imapHost,
        port: imapPort,
        secure: imapSecure,
        username: 'Person@Example.com',
      });
      expect(mailbox.smtp).toEqual({
        host: smtpHost,
        port: smtpPort,
        secure: smtpSecure,
        username: 'Person@Example.com',
      });
    },
  );

  it('a known provider takes imap/smtp overrides on top of its preset', async () => {
    const mailbox = await create({
      provider: 'zoho',
      imap: { host: 'imappro.zoho.com' },
      smtp: { username: 'login-name' },
    });
    expect(mailbox.imap).toEqual({ ...PROVIDERS.zoho.imap, host: 'imappro.zoho.com', username: alice.email });
    expect(mailbox.smtp).toEqual({ ...PROVIDERS.zoho.smtp, username: 'login-name' });
  });

  it('certificate checks cannot be turned off per mailbox (the operator trusts a CA instead)', async () => {
    const res = await t.workspace.request({
      method: 'POST',
      url: '/api/mailboxes',
      payload: body({
        smtp: { host: 'smtp.example.test', port: 587, secure: false, tls: { rejectUnauthorized: false } },
      }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'validation_error',
      errors: [{ path: '/body/smtp/tls/rejectUnauthorized' }],
    });
    const list = await t.workspace.request({ method: 'GET', url: '/api/mailboxes' });
    expect(list.json().pagination.total).toBe(0);
  });
});

describe('create', () => {
  it('answers the whole mailbox with the default warmup settings and never a password', async () => {
    const res = await t.workspace.request({ method: 'POST', url: '/api/mailboxes', payload: body({ name: 'Alice' }) });
    expect(res.statusCode).toBe(201);
    const { mailbox } = res.json();
    expect(Object.keys(mailbox).sort()).toEqual(
      [
        'id',
        'email',
        'name',
        'provider',
        'connectionType',
        'oauthProvider',
        'status',
        'imap',
        'smtp',
        'warmup',
        'reputation',
        'warmupDay',
        'dailyTarget',
        'lastSyncAt',
        'lastError',
        'pool',
        'outlook',
        'autoReply',
        'createdAt',
        'updatedAt',
      ].sort(),
    );
    // stored with verify: false, so not in the pool yet: the outlook says so, and why
    expect(mailbox.outlook).toMatchObject({
      summary: expect.stringMatching(/^Waiting to join the warmup pool: not proven yet/),
      nextSendAt: null,
      rampTarget: null,
      limitedBy: null,
      readyForCampaigns: false,
      attention: [{ kind: 'not_in_pool', message: expect.stringMatching(/verify: false/) }],
    });
    expect(mailbox).toMatchObject({
      email: alice.email,
      name: 'Alice',
      status: 'active',
      connectionType: 'imap',
      oauthProvider: null,
      imap: { host: 'imap.example.test', port: 993, secure: true, username: alice.email },
      warmup: {
        startVolume: 2,
        rampUpIncrement: 2,
        dailyLimit: 40,
        replyRate: 30,
        sendWindow: { start: '08:00', end: '18:00' },
        timezone: 'UTC',
        weekdaysOnly: false,
        language: 'en',
      },
      warmupDay: 0,
      dailyTarget: 0,
      // stored unchecked: out of the pool until a round trip proves it
      pool: { member: false, provenAt: null, reason: expect.stringMatching(/^not proven yet: .*verify: false/) },
      autoReply: null,
    });
    expect(mailbox.imap).not.toHaveProperty('tls');
    expect(mailbox.reputation).toBeGreaterThanOrEqual(0);
    expect(mailbox.createdAt).toBe(mailbox.updatedAt);
    expect(res.body).not.toContain(alice.password);
  });

  it('takes partial warmup settings over the defaults and spells the time zone the IANA way', async () => {
    const mailbox = await create({
      warmup: {
        dailyLimit: 80,
        sendWindow: { end: '20:30' },
        timezone: 'europe/berlin',
        weekdaysOnly: true,
        language: 'de',
        replyRate: 12.5,
      },
    });
    expect(mailbox.warmup).toEqual({
      startVolume: 2,
      rampUpIncrement: 2,
      dailyLimit: 80,
      replyRate: 12.5,
      sendWindow: { start: '08:00', end: '20:30' },
      timezone: 'Europe/Berlin',
      weekdaysOnly: true,
      language: 'de',
    });
  });

  it('an address already connected in the workspace, in any case, is a 409', async () => {
    await create({ email: 'Alice@Alpha.test' });
    const res = await t.workspace.request({
      method: 'POST',
      url: '/api/mailboxes',
      payload: body({ email: 'alice@ALPHA.TEST' }),
    });
    const problem = expectProblem(res, 409, 'conflict', '/body/email');
    expect(problem.detail).toMatch(/already connected/);
  });

  it('two simultaneous creates of one address: one 201, one 409 (the unique constraint decides)', async () => {
    const [first, second] = await Promise.all([
      t.workspace.request({ method: 'POST', url: '/api/mailboxes', payload: body({ email: amy.email }) }),
      t.workspace.request({ method: 'POST', url: '/api/mailboxes', payload: body({ email: amy.email.toUpperCase() }) }),
    ]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([201, 409]);
    const loser = first.statusCode === 409 ? first : second;
    expectProblem(loser, 409, 'conflict', '/body/email');
  });

  it('the same address may be connected in another workspace', async () => {
    await create({ email: bob.email });
    const other = await t.createWorkspace('other');
    await create({ email: bob.email }, other);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['email missing', { email: undefined }, '/body/email'],
    ['email not an address', { email: 'alice-at-alpha.test' }, '/body/email'],
    ['password missing', { password: undefined }, '/body/password'],
    ['password empty', { password: '' }, '/body/password'],
    ['password only spaces', { password: '    ' }, '/body/password'],
    ['password over 500 characters', { password: 'x'.repeat(501) }, '/body/password'],
    ['unknown provider', { provider: 'aol' }, '/body/provider'],
    ['connectionType other than imap', { connectionType: 'oauth' }, '/body/connectionType'],
    ['connectionType missing', { connectionType: undefined }, '/body/connectionType'],
    ['custom without imap', { imap: undefined }, '/body/imap'],
    ['custom without smtp', { smtp: undefined }, '/body/smtp'],
    ['custom imap without host', { imap: { port: 993, secure: true } }, '/body/imap/host'],
    ['custom smtp without secure', { smtp: { host: 'smtp.example.test', port: 587 } }, '/body/smtp/secure'],
    ['port out of range', { imap: { host: 'imap.example.test', port: 70000, secure: true } }, '/body/imap/port'],
    ['port not an integer', { smtp: { host: 'smtp.example.test', port: '587', secure: false } }, '/body/smtp/port'],
    ['host with spaces', { imap: { host: 'imap example', port: 993, secure: true } }, '/body/imap/host'],
    [
      'unknown field in a server block',
      { imap: { host: 'h.test', port: 993, secure: true, password: 'x' } },
      '/body/imap/password',
    ],
    [
      'unknown tls option',
      { imap: { host: 'h.test', port: 993, secure: true, tls: { ciphers: 'x' } } },
      '/body/imap/tls/ciphers',
    ],
    ['unknown field', { status: 'paused' }, '/body/status'],
    ['blank name', { name: '   ' }, '/body/name'],
    ['verify not a boolean', { verify: 'no' }, '/body/verify'],
  ])('%s → 400', async (_case, overrides, path) => {
    const res = await t.workspace.request({ method: 'POST', url: '/api/mailboxes', payload: body(overrides) });
    expectProblem(res, 400, 'validation_error', path);
    const { n } = await t.database.db
      .selectFrom('mailboxes')
      .select(sql<number>`cast(count(*) as integer)`.as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(0);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['startVolume 0', { startVolume: 0 }, '/body/warmup/startVolume'],
    ['startVolume not an integer', { startVolume: 1.5 }, '/body/warmup/startVolume'],
    ['startVolume above dailyLimit', { startVolume: 50 }, '/body/warmup/startVolume'],
    ['dailyLimit below startVolume', { startVolume: 10, dailyLimit: 5 }, '/body/warmup/startVolume'],
    ['rampUpIncrement negative', { rampUpIncrement: -1 }, '/body/warmup/rampUpIncrement'],
    ['rampUpIncrement above 100', { rampUpIncrement: 101 }, '/body/warmup/rampUpIncrement'],
    ['dailyLimit 0', { dailyLimit: 0 }, '/body/warmup/dailyLimit'],
    ['dailyLimit above 500', { dailyLimit: 501 }, '/body/warmup/dailyLimit'],
    ['replyRate negative', { replyRate: -1 }, '/body/warmup/replyRate'],
    ['replyRate above 100', { replyRate: 100.5 }, '/body/warmup/replyRate'],
    ['sendWindow start not HH:MM', { sendWindow: { start: '8:00' } }, '/body/warmup/sendWindow/start'],
    ['sendWindow end 24:00', { sendWindow: { end: '24:00' } }, '/body/warmup/sendWindow/end'],
    ['sendWindow end before start', { sendWindow: { start: '18:00', end: '09:00' } }, '/body/warmup/sendWindow/end'],
    ['sendWindow start after the default end', { sendWindow: { start: '19:00' } }, '/body/warmup/sendWindow/start'],
    ['sendWindow of zero length', { sendWindow: { start: '10:00', end: '10:00' } }, '/body/warmup/sendWindow/end'],
    ['sendWindow unknown field', { sendWindow: { from: '10:00' } }, '/body/warmup/sendWindow/from'],
    ['timezone unknown', { timezone: 'Mars/Olympus_Mons' }, '/body/warmup/timezone'],
    ['timezone as an offset', { timezone: '+02:00' }, '/body/warmup/timezone'],
    ['timezone empty', { timezone: '' }, '/body/warmup/timezone'],
    ['language upper case', { language: 'EN' }, '/body/warmup/language'],
    ['language of three letters', { language: 'eng' }, '/body/warmup/language'],
    ['weekdaysOnly not a boolean', { weekdaysOnly: 'yes' }, '/body/warmup/weekdaysOnly'],
    ['unknown warmup field', { dailyMax: 10 }, '/body/warmup/dailyMax'],
  ])('warmup %s → 400 naming the field', async (_case, warmup, path) => {
    const res = await t.workspace.request({ method: 'POST', url: '/api/mailboxes', payload: body({ warmup }) });
    expectProblem(res, 400, 'validation_error', path);
  });

  it('a malformed body is a 400 before anything is checked', async () => {
    const res = await t.workspace.request({
      method: 'POST',
      url: '/api/mailboxes',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":',
    });
    expectProblem(res, 400, 'validation_error', '/body');
  });
});

describe('update (changes that need no login)', () => {
  it('merges partial warmup settings over the current ones', async () => {
    const mailbox = await create({ warmup: { dailyLimit: 60, sendWindow: { start: '09:00', end: '17:00' } } });
    const res = await t.workspace.request({
      method: 'PATCH',
      url: `/api/mailboxes/${mailbox.id}`,
      payload: { warmup: { sendWindow: { end: '19:00' }, replyRate: 50 } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const updated = res.json().mailbox;
    expect(updated.warmup).toEqual({ ...mailbox.warmup, replyRate: 50, sendWindow: { start: '09:00', end: '19:00' } });
    expect(updated.updatedAt >= mailbox.updatedAt).toBe(true);
  });

  it('validates the merged settings and names the field that was sent', async () => {
    const mailbox = await create({ warmup: { startVolume: 5 } });
    const lower = await t.workspace.request({
      method: 'PATCH',
      url: `/api/mailboxes/${mailbox.id}`,
      payload: { warmup: { dailyLimit: 4 } },
    });
    expectProblem(lower, 400, 'validation_error', '/body/warmup/dailyLimit');
    const start = await t.workspace.request({
      method: 'PATCH',
      url: `/api/mailboxes/${mailbox.id}`,
      payload: { warmup: { sendWindow: { start: '18:30' } } },
    });
    expectProblem(start, 400, 'validation_error', '/body/warmup/sendWindow/start');
    const zone = await t.workspace.request({
      method: 'PATCH',
      url: `/api/mailboxes/${mailbox.id}`,
      payload: { warmup: { timezone: 'Nowhere/Land' } },
    });
    expectProblem(zone, 400, 'validation_error', '/body/warmup/timezone');
    const after = (await t.workspace.request({ method: 'GET', url: `/api/mailboxes/${mailbox.id}` })).json().mailbox;
    expect(after.warmup).toEqual(mailbox.warmup);
  });

  it('sets and clears the name', async () => {
    const mailbox = await create();
    const named = await t.workspace.request({
      method: 'PATCH',
      url: `/api/mailboxes/${mailbox.id}`,
      payload: { name: 'Alice A.' },
    });
    expect(named.json().mailbox.name).toBe('Alice A.');
    const cleared = await t.workspace.request({
      method: 'PATCH',
      url: `/api/mailboxes/${mailbox.id}`,
      payload: { name: null },
    });
    expect(cleared.json().mailbox.name).toBeNull();
  });

  it('an empty update answers the mailbox unchanged', async () => {
    const mailbox = await create();
    const res = await t.workspace.request({ method: 'PATCH', url: `/api/mailboxes/${mailbox.id}`, payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json().mailbox).toEqual(mailbox);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['the address (fixed)', { email: 'new@alpha.test' }, '/body/email'],
    ['connectionType', { connectionType: 'imap' }, '/body/connectionType'],
    ['status', { status: 'paused' }, '/body/status'],
    ['an unknown provider', { provider: 'aol' }, '/body/provider'],
    ['an empty password', { password: '' }, '/body/password'],
    ['warmup out of range', { warmup: { replyRate: 101 } }, '/body/warmup/replyRate'],
    ['a port out of range', { smtp: { port: 0 } }, '/body/smtp/port'],
  ])('changing %s is a 400', async (_case, payload, path) => {
    const mailbox = await create();
    const res = await t.workspace.request({ method: 'PATCH', url: `/api/mailboxes/${mailbox.id}`, payload });
    expectProblem(res, 400, 'validation_error', path);
  });

  it('switching to custom needs both server blocks', async () => {
    const mailbox = await create({ provider: 'gmail', imap: undefined, smtp: undefined });
    const res = await t.workspace.request({
      method: 'PATCH',
      url: `/api/mailboxes/${mailbox.id}`,
      payload: { provider: 'custom', smtp: { host: 'smtp.example.test', port: 587, secure: false } },
    });
    expectProblem(res, 400, 'validation_error', '/body/imap');
  });

  it('an unknown id is a 404', async () => {
    const res = await t.workspace.request({ method: 'PATCH', url: '/api/mailboxes/mbx_nope', payload: { name: 'x' } });
    expectProblem(res, 404, 'not_found');
  });
});

describe('list', () => {
  it('pages newest first and filters by status, provider and q (address or name, any case)', async () => {
    const a = await create({ email: alice.email, name: 'Alice Archer' });
    const b = await create({ email: amy.email, provider: 'gmail', imap: undefined, smtp: undefined });
    const c = await create({ email: bob.email, name: 'Bob 100%_Builder' });
    const d = await create({ email: bella.email, provider: 'gmail', imap: undefined, smtp: undefined, name: 'Bella' });
    await t.workspace.request({ method: 'POST', url: `/api/mailboxes/${b.id}/pause` });

    const all = await t.workspace.request({ method: 'GET', url: '/api/mailboxes' });
    expect(all.statusCode).toBe(200);
    expect(all.json().mailboxes.map((m: { id: string }) => m.id)).toEqual([d.id, c.id, b.id, a.id]);
    expect(all.json().pagination).toEqual({ page: 1, limit: 20, total: 4, totalPages: 1 });

    const page2 = await t.workspace.request({ method: 'GET', url: '/api/mailboxes?page=2&limit=3' });
    expect(page2.json().mailboxes.map((m: { id: string }) => m.id)).toEqual([a.id]);
    expect(page2.json().pagination).toEqual({ page: 2, limit: 3, total: 4, totalPages: 2 });

    const ids = async (query: string) =>
      (await t.workspace.request({ method: 'GET', url: `/api/mailboxes?${query}` }))
        .json()
        .mailboxes.map((m: { id: string }) => m.id);
    expect(await ids('status=paused')).toEqual([b.id]);
    expect(await ids('status=active&provider=gmail')).toEqual([d.id]);
    expect(await ids('provider=custom')).toEqual([c.id, a.id]);
    expect(await ids('q=ARCHER')).toEqual([a.id]);
    expect(await ids('q=BETA.TEST')).toEqual([d.id, c.id]);
    expect(await ids('q=a')).toHaveLength(4);
    expect(await ids('q=%25')).toEqual([c.id]);
    expect(await ids('q=0%25_b')).toEqual([c.id]);
    expect(await ids('q=_')).toEqual([c.id]);
    expect(await ids('q=nobody')).toEqual([]);
  });

  it.each([
    ['limit=0', '/query/limit'],
    ['limit=101', '/query/limit'],
    ['page=0', '/query/page'],
    ['status=deleted', '/query/status'],
    ['provider=aol', '/query/provider'],
    ['sort=email', '/query/sort'],
  ])('%s → 400', async (query, path) => {
    const res = await t.workspace.request({ method: 'GET', url: `/api/mailboxes?${query}` });
    expectProblem(res, 400, 'validation_error', path);
  });
});

describe('delete', () => {
  it('answers 204 and takes its planned sends, plans, interactions and rollups with it', async () => {
    const mine = await create({ email: carol.email });
    const peer = await create({ email: chris.email });
    const db = t.database.db;
    const now = new Date();
    await db
      .insertInto('warmup_messages')
      .values({
        id: newId('msg'),
        message_id: '<m1@gamma.test>',
        thread_id: 'thr_1',
        sender_mailbox_id: mine.id,
        recipient_mailbox_id: peer.id,
        kind: 'initial',
        turn: 1,
        plan_day: now.toISOString().slice(0, 10),
        due_at: now.toISOString(),
        status: 'planned',
        created_at: now.toISOString(),
      })
      .execute();
    await db
      .insertInto('mailbox_plans')
      .values({
        mailbox_id: mine.id,
        day: now.toISOString().slice(0, 10),
        warmup_day: 1,
        target: 2,
        planned: 2,
        created_at: now.toISOString(),
      })
      .execute();
    await db.transaction().execute((trx) =>
      recordInteraction(trx, {
        mailboxId: mine.id,
        type: 'sent',
        senderMailboxId: mine.id,
        counterpartMailboxId: peer.id,
        counterpartEmail: peer.email,
        subject: 'Hello',
        messageId: '<m1@gamma.test>',
        threadId: 'thr_1',
        occurredAt: now,
      }),
    );
    const count = async (table: 'warmup_messages' | 'mailbox_plans' | 'interactions' | 'daily_stats') => {
      const { n } = await db
        .selectFrom(table)
        .select(sql<number>`cast(count(*) as integer)`.as('n'))
        .executeTakeFirstOrThrow();
      return Number(n);
    };
    expect([
      await count('warmup_messages'),
      await count('mailbox_plans'),
      await count('interactions'),
      await count('daily_stats'),
    ]).toEqual([1, 1, 1, 1]);

    const res = await t.workspace.request({ method: 'DELETE', url: `/api/mailboxes/${mine.id}` });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect([
      await count('warmup_messages'),
      await count('mailbox_plans'),
      await count('interactions'),
      await count('daily_stats'),
    ]).toEqual([0, 0, 0, 0]);
    expectProblem(await t.workspace.request({ method: 'GET', url: `/api/mailboxes/${mine.id}` }), 404, 'not_found');
    expectProblem(await t.workspace.request({ method: 'DELETE', url: `/api/mailboxes/${mine.id}` }), 404, 'not_found');
    expect((await t.workspace.request({ method: 'GET', url: `/api/mailboxes/${peer.id}` })).statusCode).toBe(200);
  });
});

describe('workspace isolation', () => {
  it("another workspace's mailbox is a 404 on every route and absent from its list", async () => {
    const mailbox = await create({ email: alice.email });
    const other = await t.createWorkspace('intruder');
    const url = `/api/mailboxes/${mailbox.id}`;
    const attempts = [
      other.request({ method: 'GET', url }),
      other.request({ method: 'PATCH', url, payload: { name: 'stolen' } }),
      other.request({ method: 'PATCH', url, payload: { warmup: { dailyLimit: 1, startVolume: 1 } } }),
      other.request({ method: 'POST', url: `${url}/pause` }),
      other.request({ method: 'POST', url: `${url}/resume` }),
      other.request({ method: 'GET', url: `${url}/interactions` }),
      other.request({ method: 'DELETE', url }),
    ];
    for (const res of await Promise.all(attempts)) {
      const problem = expectProblem(res, 404, 'not_found');
      expect(JSON.stringify(problem)).not.toContain(alice.email);
    }
    const list = await other.request({ method: 'GET', url: `/api/mailboxes?q=${encodeURIComponent(alice.email)}` });
    expect(list.json()).toEqual({ mailboxes: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0 } });

    // nothing the other workspace tried changed it
    const after = await t.workspace.request({ method: 'GET', url });
    expect(after.json().mailbox).toEqual(mailbox);
    expect(await t.services.mailboxes.get(t.workspace.id, mailbox.id)).toEqual(mailbox);
    await expect(t.services.mailboxes.get(other.id, mailbox.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('openapi', () => {
  it('documents every mailbox route, the providers route included', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    const paths = res.json().paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/api/mailboxes/providers'] ?? {})).toEqual(['get']);
    expect(Object.keys(paths['/api/mailboxes'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/api/mailboxes/{id}'] ?? {}).sort()).toEqual(['delete', 'get', 'patch']);
    expect(paths['/api/mailboxes/{id}/pause']).toHaveProperty('post');
    expect(paths['/api/mailboxes/{id}/resume']).toHaveProperty('post');
    expect(paths['/api/mailboxes/{id}/interactions']).toHaveProperty('get');
  });

  it('documents why a mailbox receives no warmup mail while it answers automatically', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    const text = JSON.stringify(res.json());
    expect(text).toContain('"autoReply"');
    expect(text).toMatch(/receives no warmup mail \(it still sends\), until no automatic reply was seen for 3 days/);
    expect(text).toContain('receivesAgainAt');
  });
});

describe('a mailbox that answers automatically', () => {
  it('says so, with until when, and no longer once the rule ended', async () => {
    const mailbox = await create();
    const seen = t.clock.now();
    await t.database.db.updateTable('mailboxes').set({ auto_reply_at: seen.toISOString() }).execute();
    const res = await t.workspace.request({ method: 'GET', url: `/api/mailboxes/${mailbox.id}` });
    expect(res.json().mailbox.autoReply).toEqual({
      lastSeenAt: seen.toISOString(),
      receivesAgainAt: new Date(seen.getTime() + 3 * 24 * 60 * 60_000).toISOString(),
      reason: expect.stringMatching(/answers warmup mail automatically .* resume the mailbox/),
    });
    const longAgo = new Date(seen.getTime() - 4 * 24 * 60 * 60_000).toISOString();
    await t.database.db.updateTable('mailboxes').set({ auto_reply_at: longAgo }).execute();
    const later = await t.workspace.request({ method: 'GET', url: `/api/mailboxes/${mailbox.id}` });
    expect(later.json().mailbox.autoReply).toBeNull();
  });
});

describe('a secret key that no longer matches the stored passwords', () => {
  it('stops the mailbox with a lastError that asks for the password again', async () => {
    const mailbox = await create();
    const otherKey = createMailboxesService({ db: t.database.db, clock: t.clock, secretKey: Buffer.alloc(32, 7) });

    await expect(otherKey.getCredentials(mailbox.id)).rejects.toBeInstanceOf(SecretDecryptionError);

    const res = await t.workspace.request({ method: 'GET', url: `/api/mailboxes/${mailbox.id}` });
    expect(res.json().mailbox).toMatchObject({
      status: 'error',
      lastError: expect.stringContaining('send the password again'),
    });
    expect(res.body).not.toContain(alice.password);
  });
});
