// `warmup doctor` against a real database and real sockets: one line per check, a fix for every
// problem, exit 1 on a failure, and never a secret in what it prints. The first case runs the real
// command; the others call the same function in process (a child process costs seconds each).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { formatChecks, hasFailure, runDoctor } from '../../src/doctor.js';
import { insertReport } from '../../src/dmarc/dmarc.repository.js';
import { parseReportAttachment } from '../../src/dmarc/report-parser.js';
import { encryptSecret } from '../../src/secrets/secrets.js';
import { insertMailbox, insertWorkspace } from '../helpers/engine-fixtures.js';
import { freePort, runWarmup } from '../helpers/processes.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../helpers/test-database.js';
import { describeWithMailStack, requireMailStack } from '../mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../mailstack/users.js';

const SECRET_KEY = 'd'.repeat(64);
const PASSWORD = 'mailbox-password-never-printed';

let database: TestDatabase;
let listener: net.Server;
let listeningPort: number;
let closedPort: number;

/** A mailbox whose IMAP and SMTP servers are `imapPort` and `smtpPort` on 127.0.0.1, password encrypted. */
async function addMailbox(email: string, imapPort: number, smtpPort: number): Promise<void> {
  const workspaceId = await insertWorkspace(database.db);
  const row = await insertMailbox(database.db, workspaceId, { email });
  const server = (port: number) => JSON.stringify({ host: '127.0.0.1', port, secure: false, username: email });
  await database.db
    .updateTable('mailboxes')
    .set({
      imap: server(imapPort),
      smtp: server(smtpPort),
      password_encrypted: encryptSecret(Buffer.from(SECRET_KEY, 'hex'), PASSWORD, row.id),
    })
    .where('id', '=', row.id)
    .execute();
}

function doctorEnv(env: Record<string, string>): Record<string, string> {
  return { ...database.env, WARMUP_SECRET_KEY: SECRET_KEY, WARMUP_MAIL_ALLOWED_HOSTS: '127.0.0.1', ...env };
}

/** What `warmup doctor` prints and its exit code, computed in this process. */
async function doctor(overrides: Record<string, string>): Promise<{ code: number; stdout: string }> {
  const env = doctorEnv(overrides);
  const checks = await runDoctor(loadConfig(env), env);
  return { code: hasFailure(checks) ? 1 : 0, stdout: `${formatChecks(checks)}\n` };
}

beforeAll(async () => {
  database = await createTestDatabase();
  listener = net.createServer((socket) => socket.end());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listeningPort = (listener.address() as net.AddressInfo).port;
  closedPort = await freePort();
  await addMailbox('ada@example.test', listeningPort, listeningPort);
  // a peer's address kept as a partner, the newest row: no password, no servers of ours to check
  const peerWorkspace = await insertWorkspace(database.db);
  const standIn = await insertMailbox(database.db, peerWorkspace, { email: 'pia@peer.test' });
  await database.db
    .updateTable('mailboxes')
    .set({
      status: 'peer',
      peer_id: 'peer_doctor',
      imap: '{}',
      smtp: '{}',
      password_encrypted: '',
      created_at: '2099-01-01T00:00:00.000Z',
    })
    .where('id', '=', standIn.id)
    .execute();
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => listener?.close(resolve));
  await database?.close();
});

describe('warmup doctor', () => {
  it('a sound installation: every check ok, exit 0', async () => {
    const result = await runWarmup(['doctor'], doctorEnv({}));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(
      lines.every((line) => line.startsWith('ok ')),
      result.stdout,
    ).toBe(true);
    expect(result.stdout).toMatch(/^ok +database: .*schema up to date$/m);
    expect(result.stdout).toMatch(/^ok +secret key: WARMUP_SECRET_KEY, decrypts the stored passwords$/m);
    expect(result.stdout).toMatch(/^ok +mail servers: 1 of 1 accept connections$/m);
    if (testDialect === 'postgres') expect(result.stdout).toMatch(/^ok +clock: /m);
    expect(result.stdout).toMatch(/^ok +settings: set: .*WARMUP_SECRET_KEY/m);
    expect(result.stdout + result.stderr).not.toContain(SECRET_KEY);
    expect(result.stdout + result.stderr).not.toContain(PASSWORD);
  });

  it('names the checks, blocklists, webhooks, metrics and sign-in settings, never a secret of theirs', async () => {
    const secrets = { dqs: 'dqsKey0123abcd', token: 'metrics-token-0123456789', oidc: 'oidc-client-secret-xyz' };
    const result = await doctor({
      WARMUP_DNS_SERVERS: '127.0.0.1:5353',
      WARMUP_DNS_PAUSE_HOURS: '0',
      WARMUP_SPAMHAUS_DQS_KEY: secrets.dqs,
      WARMUP_METRICS_TOKEN: secrets.token,
      WARMUP_WEBHOOK_RETRY_SCHEDULE: '5,60',
      WARMUP_PUBLIC_URL: 'https://warmup.example.com',
      WARMUP_OIDC_ISSUER: 'https://id.example.com',
      WARMUP_OIDC_CLIENT_ID: 'warmup',
      WARMUP_OIDC_CLIENT_SECRET: secrets.oidc,
    });
    expect(result.stdout).toMatch(
      /^ok +settings: set: .*WARMUP_SPAMHAUS_DQS_KEY, .*WARMUP_METRICS_TOKEN, .*WARMUP_OIDC_CLIENT_SECRET/m,
    );
    expect(result.stdout).toMatch(
      /^ok +DNS checks: asked through 127\.0\.0\.1:5353; failing SPF or DMARC never pauses warmup/m,
    );
    expect(result.stdout).toMatch(/^ok +blocklists: 3 address list\(s\), 1 domain list\(s\); Spamhaus DQS key set$/m);
    expect(result.stdout).toMatch(/^ok +webhooks: retried after 2 wait\(s\)/m);
    expect(result.stdout).toMatch(/^ok +metrics: GET \/metrics with the token set$/m);
    expect(result.stdout).toMatch(/^ok +OpenID Connect sign-in: on/m);
    for (const secret of Object.values(secrets)) expect(result.stdout).not.toContain(secret);

    // a metrics port with no token serves nothing: said, with the fix
    const port = await doctor({ WARMUP_METRICS_PORT: '9464' });
    expect(port.stdout).toMatch(/^WARN +metrics: WARMUP_METRICS_PORT is 9464 but WARMUP_METRICS_TOKEN is not set/m);
    expect(port.stdout).toMatch(/fix: set WARMUP_METRICS_TOKEN/);
    expect(port.stdout).toMatch(/^ok +blocklists: .*Spamhaus DQS key not set/m);
  });

  it('a secret key that does not decrypt the stored passwords fails, with the fix', async () => {
    const result = await doctor({ WARMUP_SECRET_KEY: 'e'.repeat(64) });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^FAIL +secret key: WARMUP_SECRET_KEY does not decrypt the stored mailbox passwords\n +fix: use the key the passwords were stored with/m,
    );
    expect(result.stdout).not.toContain('e'.repeat(64));
  });

  it('names a mail server nobody answers on, and how many mailboxes use it', async () => {
    await addMailbox('bob@example.test', closedPort, listeningPort);
    try {
      const result = await doctor({});
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(
        new RegExp(
          `^FAIL +mail server 127\\.0\\.0\\.1:${closedPort}: used by 1 mailbox; cannot connect to 127\\.0\\.0\\.1:${closedPort} \\(ECONNREFUSED\\)\\n +fix: `,
          'm',
        ),
      );
      expect(result.stdout).toMatch(/^ok +mail servers: 1 of 2 accept connections$/m);
    } finally {
      await database.db.deleteFrom('mailboxes').where('email', '=', 'bob@example.test').execute();
    }
  });

  it('an internal mail server the mail policy refuses points at WARMUP_MAIL_ALLOWED_HOSTS', async () => {
    const result = await doctor({ WARMUP_MAIL_ALLOWED_HOSTS: '' });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(`^FAIL +mail server 127\\.0\\.0\\.1:${listeningPort}: used by 1 mailbox; an internal address`, 'm'),
    );
    expect(result.stdout).toMatch(/fix: if this is your own mail server, add it to WARMUP_MAIL_ALLOWED_HOSTS/);
  });

  it('a fresh data folder is fine: the first start makes the database', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-doctor-'));
    try {
      const checks = await runDoctor(loadConfig({ WARMUP_DATA_DIR: dataDir }), {});
      const result = { code: hasFailure(checks) ? 1 : 0, stdout: formatChecks(checks) };
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`ok    database: no database in ${dataDir} yet: the first start makes it`);
      expect(fs.readdirSync(dataDir)).toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('says which DMARC report folder fails or stays quiet and which provider feed fails or is stale, never a key', async () => {
    const db = database.db;
    const now = Date.now();
    const ago = (days: number) => new Date(now - days * 86_400_000).toISOString();
    const keyCipher = 'snds-key-ciphertext-never-printed';
    const workspace = async (name: string, email: string) => {
      const id = await insertWorkspace(db, name);
      // paused: the mail-server check passes them by, so the report's only warnings are these
      return { id, mailbox: (await insertMailbox(db, id, { email, status: 'paused' })).id };
    };
    const acme = await workspace('Acme', 'rua@acme.test');
    const beta = await workspace('Beta', 'rua@beta.test');
    const gamma = await workspace('Gamma', 'rua@gamma.test');
    const source = (ws: { id: string; mailbox: string }, values: { last_error?: string; updated_at: string }) =>
      db
        .insertInto('dmarc_sources')
        .values({ workspace_id: ws.id, mailbox_id: ws.mailbox, folder: 'DMARC', checked_at: ago(0), ...values })
        .execute();
    await source(acme, { last_error: 'Mailbox does not exist: DMARC', updated_at: ago(1) });
    await source(beta, { updated_at: ago(5) });
    await source(gamma, { updated_at: ago(20) });
    const parsed = parseReportAttachment(
      Buffer.from(`<feedback><report_metadata><org_name>google.com</org_name><report_id>1</report_id>
        <date_range><begin>${Math.floor(now / 1000) - 86_400}</begin><end>${Math.floor(now / 1000)}</end></date_range>
        </report_metadata><policy_published><domain>gamma.test</domain><p>none</p></policy_published>
        <record><row><source_ip>192.0.2.1</source_ip><count>1</count><policy_evaluated><disposition>none</disposition>
        <dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>gamma.test</header_from>
        </identifiers></record></feedback>`),
    );
    if (!parsed.ok) throw new Error(parsed.reason);
    await insertReport(db, gamma.id, parsed.report, ago(1));
    const feed = (ws: { id: string }, values: { feed: string; last_error?: string; fetched_day?: string }) =>
      db
        .insertInto('feed_connections')
        .values({
          workspace_id: ws.id,
          secret_encrypted: keyCipher,
          checked_at: ago(0),
          updated_at: ago(10),
          ...values,
        })
        .execute();
    await feed(acme, { feed: 'snds', last_error: 'SNDS refused the key (HTTP 403)' });
    await feed(beta, { feed: 'postmaster', fetched_day: ago(4).slice(0, 10) });
    await feed(gamma, { feed: 'snds', fetched_day: ago(0).slice(0, 10) });
    try {
      const result = await doctor({});
      expect(result.code, result.stdout).toBe(0);
      const lines = result.stdout.split('\n');
      const line = (start: string) => lines.find((l) => l.startsWith(start));
      expect(line('WARN  DMARC reports: workspace "Acme"')).toBe(
        'WARN  DMARC reports: workspace "Acme", rua@acme.test folder DMARC: Mailbox does not exist: DMARC',
      );
      expect(line('WARN  DMARC reports: workspace "Beta"')).toBe(
        'WARN  DMARC reports: workspace "Beta", rua@beta.test folder DMARC: no report has arrived in 5 days',
      );
      expect(result.stdout).toContain('fix: publish rua=mailto:rua@beta.test in the _dmarc TXT record of each domain');
      expect(result.stdout).toMatch(/^ok +DMARC reports: 1 workspace\(s\) read their reports$/m);
      expect(line('WARN  provider feeds: workspace "Acme"')).toBe(
        'WARN  provider feeds: workspace "Acme", Microsoft SNDS: SNDS refused the key (HTTP 403)',
      );
      expect(line('WARN  provider feeds: workspace "Beta"')).toBe(
        `WARN  provider feeds: workspace "Beta", Gmail Postmaster Tools: last fetched on ${ago(4).slice(0, 10)}`,
      );
      expect(result.stdout).toMatch(/^ok +provider feeds: 1 feed\(s\) fetched lately$/m);
      expect(result.stdout).not.toContain(keyCipher);
    } finally {
      for (const table of ['feed_connections', 'dmarc_sources'] as const) await db.deleteFrom(table).execute();
      await db.deleteFrom('dmarc_reports').execute();
    }
  });

  it('checks each peer: reachable, not pending for long, its last error; and that peers can call this installation back', async () => {
    const db = database.db;
    const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    let key = 0;
    const peer = (
      url: string,
      state: string,
      values: { last_error?: string; created_at?: string; handshake_at?: string },
    ) =>
      db
        .insertInto('peers')
        .values({
          id: `peer_${++key}`,
          url,
          public_key: String(key).repeat(43).slice(0, 43),
          state: state as 'active',
          offer_domains: '[]',
          offer_mailboxes: 0,
          daily_ceiling: 0,
          created_at: ago(0),
          updated_at: ago(0),
          ...values,
        })
        .execute();
    await peer(`http://127.0.0.1:${listeningPort}`, 'active', { handshake_at: '2026-11-01T00:00:00.000Z' });
    await peer(`http://127.0.0.1:${closedPort}`, 'active', {});
    await peer(`http://127.0.0.1:${listeningPort}/b`, 'pending', {
      created_at: ago(3),
      last_error: 'the peer answered 401 unknown_key',
    });
    await peer('https://paused.example', 'paused', {});
    await peer('https://gone.example', 'removed', {});
    try {
      const without = await doctor({});
      expect(without.code).toBe(1);
      expect(without.stdout).toMatch(/^FAIL {2}peers: 4 peer\(s\), but WARMUP_PUBLIC_URL is not set/m);

      const { code, stdout } = await doctor({
        WARMUP_PUBLIC_URL: 'https://warmup.example.com',
        WARMUP_MAIL_ALLOWED_HOSTS: '127.0.0.1,localhost',
      });
      expect(code, stdout).toBe(0);
      const peerLines = stdout.split('\n').filter((line) => /^(ok|WARN|FAIL) +peer /.test(line));
      // sorted by URL, so the two random ports come in either order
      expect(peerLines).toHaveLength(4);
      expect(peerLines).toEqual(
        expect.arrayContaining([
          `ok    peer http://127.0.0.1:${listeningPort}: active, reachable, last handshake 2026-11-01T00:00:00.000Z`,
          `WARN  peer http://127.0.0.1:${closedPort}: cannot connect to 127.0.0.1:${closedPort} (ECONNREFUSED)`,
          `WARN  peer http://127.0.0.1:${listeningPort}/b: pending since ${ago(3).slice(0, 10)}: the peer has not added this installation yet (the peer answered 401 unknown_key)`,
          'ok    peer https://paused.example: paused here: nothing flows either way',
        ]),
      );
      expect(stdout).toContain(
        "      fix: ask the peer's operator to add this installation's URL and key (`warmup peer key` prints them)",
      );
      expect(stdout).not.toContain('gone.example');
    } finally {
      await db.deleteFrom('peers').execute();
    }
  });
});

describeWithMailStack('warmup doctor: the SMTP server of email alerts, on the test mail stack', () => {
  const [notices] = MAIL_USERS.alerts;

  function alertEnv(password: string): Record<string, string> {
    const stack = requireMailStack();
    return {
      WARMUP_ALERT_SMTP_HOST: stack.host,
      WARMUP_ALERT_SMTP_PORT: String(stack.submissionPort),
      WARMUP_ALERT_SMTP_USER: notices!.email,
      WARMUP_ALERT_SMTP_PASSWORD: password,
      WARMUP_ALERT_FROM: notices!.email,
      WARMUP_MAIL_CA_FILE: stack.caCert,
    };
  }

  it('says the server answers and takes the login, without printing the password', async () => {
    const result = await doctor(alertEnv(notices!.password));
    const port = requireMailStack().submissionPort;
    expect(result.stdout).toMatch(
      new RegExp(`^ok +email alerts: 127\\.0\\.0\\.1:${port} \\(starttls\\) answers and accepts the login of`, 'm'),
    );
    expect(result.stdout).toMatch(/^ok +settings: set: .*WARMUP_ALERT_SMTP_PASSWORD/m);
    expect(result.stdout).not.toContain(notices!.password);
  });

  it('fails a refused login with the fix, and a closed port with another, never printing the password', async () => {
    const wrong = 'wrong-alert-password-123';
    const refused = await doctor(alertEnv(wrong));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^FAIL +email alerts: /m);
    expect(refused.stdout).toMatch(/fix: check WARMUP_ALERT_SMTP_USER and WARMUP_ALERT_SMTP_PASSWORD/);
    expect(refused.stdout).not.toContain(wrong);

    const closed = await doctor({ ...alertEnv(wrong), WARMUP_ALERT_SMTP_PORT: String(closedPort) });
    expect(closed.code).toBe(1);
    expect(closed.stdout).toMatch(/fix: check WARMUP_ALERT_SMTP_HOST, WARMUP_ALERT_SMTP_PORT/);
    expect(closed.stdout).not.toContain(wrong);
  });

  it('without the settings, says email alerts are off', async () => {
    const result = await doctor({});
    expect(result.stdout).toMatch(/^ok +email alerts: off \(WARMUP_ALERT_SMTP_HOST not set\)/m);
  });
});
