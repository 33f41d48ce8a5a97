// The closed loop, end to end at the API: stand-ins for Gmail Postmaster Tools and Microsoft SNDS on
// loopback report a bad day, the `feeds` job fetches it, the health guard's next run holds the
// domain's mailboxes with the reason (shown on the mailbox and the domain), and a clean day lets
// the ramp go on. Google's token endpoint is not part of this test: the job is given a function
// that turns the stored refresh token into an access token (the OAuth client's refresh in main.ts).
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_REDACT_PATHS } from '../app.js';
import { addDays } from '../calendar.js';
import { fixedClock } from '../clock.js';
import { createJobList, type JobResults } from '../jobs/job-list.js';
import type { Job } from '../jobs/job-runner.js';
import { createOAuthClient } from '../oauth/oauth.client.js';
import { loadOAuthSettings } from '../oauth/oauth.config.js';
import { decryptSecret, loadSecretKey } from '../secrets/secrets.js';
import { createPerson } from '../../test/helpers/accounts.js';
import { startOAuthStandIn } from '../../test/oauth/oauth-stand-in.js';
import { feedSecretContext, POSTMASTER_SCOPE } from './feed-connections.repository.js';
import { createMailbox, proveAll, testEngineDeps } from '../../test/helpers/engine.js';
import { domainStatsAnswer, sndsLine, startFeedStandIn, type FeedStandIn } from '../../test/helpers/feed-stand-ins.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';

const SNDS_KEY = '3f2504e0-4f89-11d3-9a0c-0305e82c3301';
const REFRESH = 'refresh-token-of-the-owner-1';
const DAY1 = '2026-12-01';
const HELD =
  "Gmail Postmaster reports a spam rate of 0.4 % for example.test on 2026-11-30: warmup holds this domain's volume until it falls below 0.3 %.";

describe("the providers' feeds drive the health guard", () => {
  const clock = fixedClock(`${DAY1}T06:00:00.000Z`);
  let t: TestApp;
  let other: TestWorkspace;
  let snds: FeedStandIn;
  let gmail: FeedStandIn;
  let jobs: Job[];
  let ann: string;
  let bob: string;
  /** What each stand-in reports: the Gmail spam rate per day, the SNDS lines. */
  const world = {
    spamRates: [] as Array<{ day: string; spamRate: number }>,
    snds: [] as string[],
    sndsDown: false,
    compliance: {} as unknown,
  };

  beforeAll(async () => {
    t = await createTestApp({ clock });
    other = await t.createWorkspace('other');
    snds = await startFeedStandIn();
    gmail = await startFeedStandIn();
    snds.answer = (request, response) => {
      if (world.sndsDown) return response.writeHead(500).end();
      if (!request.url.includes(`key=${SNDS_KEY}`)) return response.writeHead(403).end();
      return response.writeHead(200, { 'content-type': 'text/csv' }).end(world.snds.join('\r\n'));
    };
    gmail.answer = (request, response) => {
      if (request.authorization !== `Bearer access-for-${REFRESH}`) return response.writeHead(401).end();
      if (request.url.endsWith('/complianceStatus'))
        return response.writeHead(200).end(JSON.stringify(world.compliance));
      return response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(domainStatsAnswer('example.test', world.spamRates)));
    };
    ann = await createMailbox(t.workspace, 'ann@example.test');
    bob = await createMailbox(t.workspace, 'bob@other.test');
    await createMailbox(other, 'carl@third.test');
    await proveAll(t.database.db);
    // the domain's DMARC reports name the address its mail leaves from
    await t.database.db
      .insertInto('dmarc_reports')
      .values({
        id: 'rpt_1',
        workspace_id: t.workspace.id,
        org_name: 'google.com',
        report_id: 'r1',
        domain: 'example.test',
        begin_at: `${DAY1}T00:00:00.000Z`,
        end_at: `${DAY1}T23:59:59.000Z`,
        day: addDays(DAY1, -1),
        policy_p: 'none',
        policy_sp: null,
        policy_pct: 100,
        policy_adkim: null,
        policy_aspf: null,
        records: 1,
        messages: 10,
        received_at: `${DAY1}T01:00:00.000Z`,
      })
      .execute();
    await t.database.db
      .insertInto('dmarc_records')
      .values({
        report_id: 'rpt_1',
        row_no: 0,
        source_ip: '192.0.2.7',
        source_name: null,
        messages: 10,
        disposition: 'none',
        dkim_aligned: 'pass',
        spf_aligned: 'pass',
        dkim_result: 'pass',
        spf_result: 'pass',
        header_from: 'example.test',
      })
      .execute();
    jobs = createJobList({
      engine: testEngineDeps(t),
      feeds: {
        secretKey: loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: '/nonexistent' }),
        policy: { allowedHosts: ['127.0.0.1'], plaintextHosts: [] },
        settings: { sndsUrl: `${snds.url}/snds/data.aspx`, postmasterUrl: gmail.url, timeoutMs: 2_000 },
        googleAccessToken: async (refreshToken) => `access-for-${refreshToken}`,
      },
    });
    // the feeds are fetched before the health guard judges them
    const names = jobs.map((job) => job.name);
    expect(names.indexOf('feeds')).toBe(names.indexOf('health') - 1);
    // an endpoint that wants the event, so the outbox keeps it
    const hook = await t.workspace.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { url: 'https://hooks.example.com/warmup', events: ['domain.provider_signal'] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
  });
  afterAll(async () => {
    await snds?.close();
    await gmail?.close();
    await t?.close();
  });

  /**
   * A day of the engine as far as this loop goes (the mailboxes' placeholder servers send nothing):
   * the planner, then the feeds and the health guard, as the job list runs them.
   */
  const run = async (day: string, hour = '06') => {
    const at = new Date(`${day}T${hour}:00:00.000Z`);
    const context = { now: () => at, ignoreSchedule: true, signal: new AbortController().signal };
    const result = {} as Pick<JobResults, 'feeds' | 'health'>;
    for (const job of jobs.filter((j) => ['plan', 'feeds', 'health'].includes(j.name)))
      Object.assign(result, { [job.name]: await job.run(context) });
    return result;
  };
  const verdicts = async (workspace: TestWorkspace, domain = 'example.test') => {
    const response = await workspace.request({ method: 'GET', url: `/api/feeds/domains/${domain}` });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const mailbox = async (id: string) =>
    (await t.workspace.request({ method: 'GET', url: `/api/mailboxes/${id}` })).json().mailbox;
  const warmupDay = async (id: string) =>
    Number(
      (await t.database.db.selectFrom('mailboxes').select('warmup_day').where('id', '=', id).executeTakeFirstOrThrow())
        .warmup_day,
    );
  const events = () =>
    t.database.db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('workspace_id', '=', t.workspace.id)
      .orderBy('created_at')
      .execute();

  it('connects each feed with its secret stored encrypted and never answered; bad input changes nothing', async () => {
    const bad = await t.workspace.request({ method: 'PUT', url: '/api/feeds/snds', payload: { key: 'a b' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors?.[0]?.pointer ?? bad.body).toMatch(/key/);
    expect((await t.workspace.request({ method: 'GET', url: '/api/feeds/snds' })).json()).toEqual({ connection: null });

    const put = await t.workspace.request({ method: 'PUT', url: '/api/feeds/snds', payload: { key: SNDS_KEY } });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().connection).toEqual({
      feed: 'snds',
      configured: true,
      domains: null,
      checkedAt: null,
      fetchedDay: null,
      lastError: null,
      setAside: { count: 0, latestReason: null },
    });
    expect(put.body).not.toContain(SNDS_KEY);
    const gput = await t.workspace.request({
      method: 'PUT',
      url: '/api/feeds/postmaster',
      payload: { refreshToken: REFRESH, domains: ['Example.test', 'example.test.'] },
    });
    expect(gput.statusCode, gput.body).toBe(200);
    expect(gput.json().connection).toMatchObject({ feed: 'postmaster', configured: true, domains: ['example.test'] });
    expect(gput.body).not.toContain(REFRESH);
    const stored = await t.database.db.selectFrom('feed_connections').select('secret_encrypted').execute();
    expect(stored).toHaveLength(2);
    for (const row of stored) {
      expect(row.secret_encrypted).not.toContain(SNDS_KEY);
      expect(row.secret_encrypted).not.toContain(REFRESH);
    }
    // another workspace sees none of it
    expect((await other.request({ method: 'GET', url: '/api/feeds/snds' })).json()).toEqual({ connection: null });
    expect((await other.request({ method: 'DELETE', url: '/api/feeds/snds' })).statusCode).toBe(404);
  });

  it('a bad Gmail day holds the domain from the next health run, with the reason on the domain and the mailbox', async () => {
    world.spamRates = [{ day: addDays(DAY1, -1), spamRate: 0.004 }];
    world.snds = [sndsLine('192.0.2.7', addDays(DAY1, -1), 'GREEN'), 'not an SNDS row'];
    const first = await run(DAY1);
    expect(first.feeds).toEqual({ fetched: 2, failed: 0, stored: 2, setAside: 1 });
    // the line that could not be read is kept aside with its reason, and shown with the connection
    expect((await t.workspace.request({ method: 'GET', url: '/api/feeds/snds' })).json().connection).toMatchObject({
      fetchedDay: DAY1,
      lastError: null,
      setAside: { count: 1, latestReason: '1 fields, SNDS rows have at least 11' },
    });
    expect(first.health?.providerHeld).toEqual([`${t.workspace.id} example.test`]);
    const rampDay = await warmupDay(ann);

    const seen = await verdicts(t.workspace);
    expect(seen.hold).toMatchObject({ signal: 'gmail_spam_rate', day: addDays(DAY1, -1), reason: HELD });
    expect(seen.gmail).toEqual([{ day: addDays(DAY1, -1), spamRate: 0.004, compliance: null }]);
    expect(seen.snds).toMatchObject([{ ip: '192.0.2.7', filterResult: 'green' }]);
    const annNow = await mailbox(ann);
    expect(annNow.outlook.attention).toContainEqual({ kind: 'provider_hold', message: HELD });
    expect(annNow.outlook.readyForCampaigns).toBe(false);
    expect((await mailbox(bob)).outlook.attention.map((a: { kind: string }) => a.kind)).not.toContain('provider_hold');
    // the other workspace sees nothing of it
    expect(await verdicts(other)).toMatchObject({ hold: null, gmail: [], snds: [] });
    expect((await events()).map((e) => [e.type, JSON.parse(e.payload).data.state])).toEqual([
      ['domain.provider_signal', 'held'],
    ]);

    // the same day again stores it once and changes nothing
    const again = await run(DAY1, '07');
    expect(again.feeds).toEqual({ fetched: 0, failed: 0, stored: 0, setAside: 0 });
    expect(await t.database.db.selectFrom('postmaster_days').selectAll().execute()).toHaveLength(1);
    expect(await t.database.db.selectFrom('snds_days').selectAll().execute()).toHaveLength(1);

    // the next days the held domain's mailbox stays on its ramp day; the other domain's ramps on
    const bobDay = await warmupDay(bob);
    await run(addDays(DAY1, 1));
    expect(await warmupDay(ann)).toBe(rampDay);
    expect(await warmupDay(bob)).toBe(bobDay + 1);
    expect((await events()).length).toBe(1);
  });

  it('a clean day lets the ramp go on again, and says so', async () => {
    const day = addDays(DAY1, 2);
    world.spamRates = [{ day: addDays(day, -1), spamRate: 0.001 }];
    world.snds = [sndsLine('192.0.2.7', addDays(day, -1), 'GREEN')];
    const rampDay = await warmupDay(ann);
    const cleared = await run(day);
    expect(cleared.health?.providerHeld).toEqual([]);
    expect((await verdicts(t.workspace)).hold).toBeNull();
    expect((await mailbox(ann)).outlook.attention.map((a: { kind: string }) => a.kind)).not.toContain('provider_hold');
    expect((await events()).map((e) => JSON.parse(e.payload).data.state)).toEqual(['held', 'cleared']);
    await run(addDays(day, 1));
    expect(await warmupDay(ann)).toBe(rampDay + 1);
  });

  it('a red SNDS day for an address the domain sends from holds it; a red address it does not send from does not', async () => {
    const day = addDays(DAY1, 4);
    world.snds = [sndsLine('192.0.2.99', addDays(day, -1), 'RED', '0.5%', 2)];
    expect((await run(day)).health?.providerHeld).toEqual([]);
    world.snds = [sndsLine('192.0.2.7', day, 'RED', '0.5%', 2)];
    expect((await run(addDays(day, 1))).health?.providerHeld).toEqual([`${t.workspace.id} example.test`]);
    expect((await verdicts(t.workspace)).hold).toMatchObject({
      signal: 'snds_red',
      reason: `Microsoft SNDS rates 192.0.2.7, an address example.test's mail left from, red on ${day}: warmup holds this domain's volume until SNDS no longer rates it red.`,
    });
  });

  it('a feed that cannot be fetched is shown as an error and slows nothing', async () => {
    const day = addDays(DAY1, 13);
    world.sndsDown = true;
    world.spamRates = [{ day: addDays(day, -1), spamRate: 0.0005 }];
    const summary = await run(day);
    expect(summary.feeds).toMatchObject({ fetched: 1, failed: 1 });
    // the red day of a week ago is no longer a signal, and no fetch means no new one
    expect(summary.health?.providerHeld).toEqual([]);
    const seen = await verdicts(t.workspace);
    expect(seen.hold).toBeNull();
    expect(seen.feeds.snds).toMatchObject({ lastError: 'the provider answered 500', fetchedDay: addDays(DAY1, 5) });
    world.sndsDown = false;
  });

  it('a domain Gmail finds not compliant is not ready for campaigns, though nothing is held', async () => {
    const day = addDays(DAY1, 14);
    world.snds = [];
    world.spamRates = [{ day: addDays(day, -1), spamRate: 0.0005 }];
    world.compliance = {
      complianceData: { rowData: [{ status: { status: 'NEEDS_WORK' } }, { status: { status: 'COMPLIANT' } }] },
    };
    try {
      expect((await run(day)).health?.providerHeld).toEqual([]);
      const attention = (await mailbox(ann)).outlook.attention as Array<{ kind: string; message: string }>;
      expect(attention.filter((item) => item.kind.startsWith('provider_'))).toEqual([
        {
          kind: 'provider_warning',
          message: `Gmail Postmaster Tools reports example.test as not meeting Gmail's sender requirements (${addDays(day, -1)}): fix what its Compliance status page names before sending campaigns.`,
        },
      ]);
      expect((await mailbox(ann)).outlook.readyForCampaigns).toBe(false);
      expect((await verdicts(t.workspace)).gmail[0]).toEqual({
        day: addDays(day, -1),
        spamRate: 0.0005,
        compliance: 'needs_work',
      });
    } finally {
      world.compliance = {};
    }
  });

  it('keeps feed rows 90 days', async () => {
    const day = addDays(DAY1, 14);
    const old = {
      workspace_id: t.workspace.id,
      filter_result: 'red',
      complaint_rate: '0.4%',
      complaint_rate_max: 0.004,
    };
    const counts = {
      trap_hits: 0,
      rcpt_commands: 1,
      data_commands: 1,
      message_recipients: 1,
      fetched_at: `${DAY1}T00:00:00.000Z`,
    };
    await t.database.db
      .insertInto('snds_days')
      .values([
        { ...old, ...counts, ip: '192.0.2.50', day: addDays(day, -91) },
        { ...old, ...counts, ip: '192.0.2.51', day: addDays(day, -90) },
      ])
      .execute();
    await run(day);
    const ips = await t.database.db.selectFrom('snds_days').select('ip').where('ip', 'like', '192.0.2.5_').execute();
    expect(ips).toEqual([{ ip: '192.0.2.51' }]);
  });

  it('disconnecting removes the key and what it fetched, and lifts its hold on the next health run', async () => {
    const day = addDays(DAY1, 15);
    world.spamRates = [];
    world.snds = [sndsLine('192.0.2.7', addDays(day, -1), 'RED', '0.5%', 2)];
    expect((await run(day)).health?.providerHeld).toEqual([`${t.workspace.id} example.test`]);
    expect((await t.workspace.request({ method: 'DELETE', url: '/api/feeds/snds' })).statusCode).toBe(204);
    const health = jobs.find((job) => job.name === 'health')!;
    // not an ignore-schedule run: the mailboxes are due because the feed went
    await health.run({
      now: () => new Date(`${day}T07:00:00.000Z`),
      ignoreSchedule: false,
      signal: new AbortController().signal,
    });
    expect((await verdicts(t.workspace)).hold).toBeNull();
    expect((await t.workspace.request({ method: 'GET', url: '/api/feeds/snds' })).json()).toEqual({ connection: null });
    expect(await t.database.db.selectFrom('snds_days').selectAll().execute()).toEqual([]);
  });
});

describe('the feeds secrets in the logs', () => {
  it('logs neither the SNDS key nor the Google token, at trace level, even when the input is refused', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = pino({ level: 'trace', redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } }, sink);
    const app = await createTestApp({ logger });
    try {
      const put = (url: string, payload: Record<string, unknown>) =>
        app.workspace.request({ method: 'PUT', url, payload });
      expect((await put('/api/feeds/snds', { key: SNDS_KEY })).statusCode).toBe(200);
      expect(
        (await put('/api/feeds/postmaster', { refreshToken: REFRESH, domains: ['example.test'] })).statusCode,
      ).toBe(200);
      // refused input: the problem names the field, not the value
      const refused = await put('/api/feeds/snds', { key: `${SNDS_KEY}!` });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).not.toContain(SNDS_KEY);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join('\n')).not.toContain(SNDS_KEY);
      expect(lines.join('\n')).not.toContain(REFRESH);
    } finally {
      await app.close();
    }
  });
});

describe("Gmail Postmaster Tools connected through Google's consent page (an OAuth stand-in)", () => {
  it('asks for the Postmaster scope, stores the refresh token encrypted with the domains, and the token works', async () => {
    const publicUrl = `http://127.0.0.1:${41_000 + (process.pid % 9_000)}`;
    const standIn = await startOAuthStandIn({ redirectUris: [`${publicUrl}/oauth/callback`], refreshLikeGoogle: true });
    const oauth = loadOAuthSettings({
      WARMUP_PUBLIC_URL: publicUrl,
      WARMUP_OAUTH_GOOGLE_CLIENT_ID: standIn.clientId,
      WARMUP_OAUTH_GOOGLE_CLIENT_SECRET: standIn.clientSecret,
      WARMUP_OAUTH_GOOGLE_ISSUER: standIn.issuer,
    });
    const app = await createTestApp({ oauth });
    try {
      const admin = await createPerson(app, app.workspace.id, 'admin');
      const payload = { domains: ['Example.test'] };
      // an API key cannot start it: the consent must come back to the browser that started it
      const byKey = await app.workspace.request({ method: 'POST', url: '/api/feeds/postmaster/authorize', payload });
      expect(byKey.statusCode).not.toBe(200);
      const started = await admin.request({ method: 'POST', url: '/api/feeds/postmaster/authorize', payload });
      expect(started.statusCode, started.body).toBe(200);
      const authorizationUrl = new URL(started.json().authorization.authorizationUrl as string);
      expect(authorizationUrl.searchParams.get('scope')).toBe(POSTMASTER_SCOPE);
      expect(authorizationUrl.searchParams.get('access_type')).toBe('offline');

      const back = await standIn.consent(authorizationUrl.href, 'postmaster@example.test');
      const finished = await app.app.inject({
        method: 'GET',
        url: `${back.pathname}${back.search}`,
        headers: { cookie: admin.cookie },
      });
      expect(finished.statusCode, finished.body).toBe(303);
      expect(finished.headers.location).toBe(`${publicUrl}/domains?feeds=connected`);
      // the state works once
      const replay = await app.app.inject({
        method: 'GET',
        url: `${back.pathname}${back.search}`,
        headers: { cookie: admin.cookie },
      });
      expect(replay.statusCode).not.toBe(303);

      const connection = (await app.workspace.request({ method: 'GET', url: '/api/feeds/postmaster' })).json()
        .connection;
      expect(connection).toMatchObject({ feed: 'postmaster', configured: true, domains: ['example.test'] });
      const row = await app.database.db
        .selectFrom('feed_connections')
        .select('secret_encrypted')
        .executeTakeFirstOrThrow();
      const key = loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: '/nonexistent' });
      const refreshToken = decryptSecret(key, row.secret_encrypted!, feedSecretContext(app.workspace.id, 'postmaster'));
      // what the feeds job does each day (main.ts): a fresh access token from the stored refresh token
      const { accessToken } = await createOAuthClient(oauth).refresh('google', refreshToken, new Date());
      expect(await standIn.introspect(accessToken)).toMatchObject({ active: true, sub: 'postmaster@example.test' });
    } finally {
      await app.close();
      await standIn.close();
    }
  });
});
