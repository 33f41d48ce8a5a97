// Bulk import of mailboxes from CSV: the file's format on its own, then whole imports against the
// real Postfix + Dovecot of the test run (right and wrong passwords, duplicates, a second run).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { ValidationError } from '../http/errors.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { describeWithMailStack, requireMailStack, type MailStack } from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../../test/mailstack/users.js';
import { IMPORT_COLUMNS, importMailboxes, parseMailboxCsv } from './mailboxes.import.js';
import type { ImportRowResult } from './mailboxes.schemas.js';

const [ivan, iris, ida, igor] = MAIL_USERS.mailboxImport;
const WRONG_PASSWORD = 'Wr0ng-Import-Passw0rd-5519';
const SAMPLE = fileURLToPath(new URL('../../docs/mailboxes-import.csv', import.meta.url));

describe('parseMailboxCsv', () => {
  it('turns rows into create bodies: provider presets, custom hosts, one username for both, warmup columns', () => {
    const rows = parseMailboxCsv(
      [
        'Email,Name,Provider,App Password,user,imap_host,imap_port,imap_secure,smtp_host,smtp_port,smtp_secure,daily_limit,weekdays_only,send_window_start',
        'a@example.com,Ann,gmail,abcd efgh ijkl mnop,,,,,,,,,,',
        'b@example.org,"Bee, Jr.",,pw-b,login-b,imap.example.org,993,true,smtp.example.org,465,yes,25,no,09:00',
      ].join('\r\n'),
    );
    expect(rows).toEqual([
      {
        line: 2,
        email: 'a@example.com',
        body: {
          email: 'a@example.com',
          name: 'Ann',
          provider: 'gmail',
          password: 'abcd efgh ijkl mnop',
          connectionType: 'imap',
        },
      },
      {
        line: 3,
        email: 'b@example.org',
        body: {
          email: 'b@example.org',
          name: 'Bee, Jr.',
          provider: 'custom',
          password: 'pw-b',
          connectionType: 'imap',
          imap: { host: 'imap.example.org', port: 993, secure: true, username: 'login-b' },
          smtp: { host: 'smtp.example.org', port: 465, secure: true, username: 'login-b' },
          warmup: { dailyLimit: 25, weekdaysOnly: false, sendWindow: { start: '09:00' } },
        },
      },
    ]);
  });

  it('names the columns of a bad row, and never its password', () => {
    const rows = parseMailboxCsv(
      [
        'email,password,provider,daily_limit,timezone,imap_port',
        'not-an-address,SecretPw-1,gmail,,,',
        'c@example.com,SecretPw-2,aol,,,',
        'd@example.com,SecretPw-3,gmail,many,,',
        'e@example.com,,gmail,,,',
        'f@example.com,SecretPw-4,,,,',
        'g@example.com,SecretPw-5,gmail,9999,,',
      ].join('\n'),
    );
    expect(rows.map((row) => [row.line, row.body, row.error])).toEqual([
      [2, undefined, 'email must be an email address, like name@example.com'],
      [3, undefined, 'provider must be one of gmail, outlook, yahoo, zoho, icloud, fastmail, custom'],
      [4, undefined, 'daily_limit must be a whole number'],
      [5, undefined, 'password is required'],
      [6, undefined, 'provider is required (or imap_host and smtp_host for a custom server)'],
      [7, undefined, 'daily_limit must be at most 500'],
    ]);
    expect(JSON.stringify(rows.map((row) => row.error))).not.toMatch(/SecretPw/);
  });

  it('reads a file separated by semicolons or tabs as well as commas', () => {
    for (const separator of [';', '\t', ',']) {
      const rows = parseMailboxCsv(
        [
          ['email', 'password', 'provider'],
          ['a@example.com', 'pw;1,2', 'gmail'],
        ]
          .map((cells) => cells.map((cell) => (cell.includes(separator) ? `"${cell}"` : cell)).join(separator))
          .join('\n'),
      );
      expect(rows.map((row) => [row.error, row.body?.email, row.body?.password])).toEqual([
        [undefined, 'a@example.com', 'pw;1,2'],
      ]);
    }
  });

  it('refuses a whole file with an unknown column, a missing email or password column, no rows, or bad CSV', () => {
    const refusal = (text: string): string => {
      try {
        parseMailboxCsv(text);
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return (error as Error).message;
      }
      throw new Error('the file was accepted');
    };
    expect(refusal('email,pasword\na@example.com,x\n')).toMatch(/unknown column "pasword" \(did you mean password\?\)/);
    expect(refusal('email,password,smtp_hots\na@example.com,x,y\n')).toMatch(/did you mean smtp_host\?/);
    expect(refusal('email,password,colour\na@example.com,x,y\n')).not.toMatch(/did you mean/);
    expect(refusal('email,name\na@example.com,x\n')).toMatch(/needs an password column/);
    expect(refusal('email,password,email\na,b,c\n')).toMatch(/email appears twice/);
    expect(refusal('email,password\n')).toMatch(/no mailbox rows/);
    expect(refusal('email,password\n"a@example.com,x\n')).toMatch(/not valid CSV/);
    expect(refusal('email,password\na@example.com,x,extra\n')).toMatch(/not valid CSV/);
    expect(() => parseMailboxCsv('email,password\na@example.com,x\nb@example.com,y\nc@example.com,z\n', 2)).toThrow(
      /at most 2 mailboxes/,
    );
  });

  it('reads the sample file of the docs, which names every documented column', () => {
    const text = fs.readFileSync(SAMPLE, 'utf8');
    const header = text.split(/\r?\n/)[0]!.split(',');
    expect(header).toEqual([...IMPORT_COLUMNS]);
    const rows = parseMailboxCsv(text);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) expect(row.error, `line ${row.line}`).toBeUndefined();
  });

  it('runs at most `concurrency` rows at a time and answers every row in file order', async () => {
    const rows = parseMailboxCsv(
      ['email,password,provider', ...Array.from({ length: 12 }, (_, i) => `u${i}@example.com,pw,gmail`)].join('\n'),
    );
    let running = 0;
    let most = 0;
    const service = {
      remainingMailboxes: async () => ({ remaining: 100, limit: 100 }),
      create: async (_workspaceId: string, body: { email: string }) => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setImmediate(resolve));
        running -= 1;
        return { id: `mbx_${body.email}` } as never;
      },
    };
    const seen: ImportRowResult[] = [];
    const result = await importMailboxes(service, 'ws', rows, { concurrency: 3, onRow: (row) => seen.push(row) });
    expect(most).toBe(3);
    expect(seen).toHaveLength(12);
    expect(result.rows.map((row) => row.line)).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
    expect(result).toMatchObject({ total: 12, created: 12, existing: 0, failed: 0 });
  });
});

describeWithMailStack('POST /api/mailboxes/import against the real mail stack', () => {
  let stack: MailStack;
  let t: TestApp;
  const responses: string[] = [];

  function csvLine(email: string, password: string, extra = ''): string {
    return `${email},${password},custom,${stack.host},${stack.imapPort},false,${stack.host},${stack.submissionPort},false${extra}`;
  }
  const HEADER = 'email,password,provider,imap_host,imap_port,imap_secure,smtp_host,smtp_port,smtp_secure';

  async function upload(csv: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const res = await t.workspace.request({
      method: 'POST',
      url: '/api/mailboxes/import',
      headers: { 'content-type': 'text/csv', ...headers },
      payload: csv,
    });
    responses.push(res.body);
    return res;
  }

  beforeAll(async () => {
    stack = requireMailStack();
    t = await createTestApp({ limits: { maxImportBytes: 64 * 1024 } });
  });

  afterAll(async () => {
    // No password of the file (right or wrong) ever left in an answer.
    const all = responses.join('\n');
    for (const secret of [ivan.password, iris.password, ida.password, igor.password, WRONG_PASSWORD]) {
      expect(all).not.toContain(secret);
    }
    await t.close();
  });

  afterEach(async () => {
    await t.database.db.deleteFrom('mailboxes').execute();
  });

  it('creates the good rows, fails the wrong password with the server answer, and reports duplicates', async () => {
    const csv = [
      HEADER,
      csvLine(ivan.email, ivan.password),
      csvLine(iris.email, iris.password),
      csvLine(ida.email, WRONG_PASSWORD),
      csvLine(ivan.email.toUpperCase(), ivan.password),
      csvLine(igor.email, igor.password, ''),
      `${igor.email.replace('igor', 'nobody')},,custom,,,,,,`,
    ].join('\n');
    const res = await upload(csv);
    expect(res.statusCode, res.body).toBe(200);
    const result = res.json().import;
    expect(result).toMatchObject({ total: 6, created: 3, existing: 1, failed: 2 });
    const byLine = new Map<number, ImportRowResult>(result.rows.map((row: ImportRowResult) => [row.line, row]));
    expect(byLine.get(2)).toMatchObject({ email: ivan.email, result: 'created', error: null });
    expect(byLine.get(3)).toMatchObject({ email: iris.email, result: 'created' });
    expect(byLine.get(4)).toMatchObject({ email: ida.email, result: 'failed', mailboxId: null });
    expect(byLine.get(4)!.error).toMatch(/login refused|authentication failed|AUTHENTICATIONFAILED|535/i);
    expect(byLine.get(5)).toMatchObject({ result: 'exists', error: 'the same address is on line 2 of this file' });
    expect(byLine.get(6)).toMatchObject({ email: igor.email, result: 'created' });
    expect(byLine.get(7)).toMatchObject({ result: 'failed' });
    expect(byLine.get(7)!.error).toMatch(/password is required/);

    // the created mailboxes are real, active and wait for the engine's round trip
    const list = (await t.workspace.request({ method: 'GET', url: '/api/mailboxes?limit=100' })).json();
    responses.push(JSON.stringify(list));
    expect(list.mailboxes.map((m: { email: string }) => m.email).sort()).toEqual(
      [ivan.email, iris.email, igor.email].sort(),
    );
    for (const mailbox of list.mailboxes) {
      expect(mailbox.status).toBe('active');
      expect(mailbox.pool.member).toBe(false);
      expect(byLine.get(mailbox.email === ivan.email ? 2 : mailbox.email === iris.email ? 3 : 6)!.mailboxId).toBe(
        mailbox.id,
      );
    }
    const credentials = await t.services.mailboxes.getCredentials(byLine.get(2)!.mailboxId!);
    expect(credentials.imap.password).toBe(ivan.password);

    // the same file again creates nothing twice
    const again = await upload(csv);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().import).toMatchObject({ total: 6, created: 0, existing: 4, failed: 2 });
    const count = await t.database.db.selectFrom('mailboxes').select('id').execute();
    expect(count).toHaveLength(3);
  });

  it('streams one line per row and then the totals with Accept: application/x-ndjson', async () => {
    const csv = [HEADER, csvLine(ivan.email, ivan.password), csvLine(ida.email, WRONG_PASSWORD)].join('\n');
    const res = await upload(csv, { accept: 'application/x-ndjson' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = res.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(3);
    expect(
      lines
        .slice(0, 2)
        .map((line) => line.row.result)
        .sort(),
    ).toEqual(['created', 'failed']);
    expect(lines[2].import).toMatchObject({ total: 2, created: 1, existing: 0, failed: 1 });
  });

  it('answers a bad file, an empty one, a JSON body and a file over WARMUP_MAX_IMPORT_BYTES as problem+json, importing nothing', async () => {
    expectProblem(await upload('email,pasword\na@b.test,x\n'), 400, 'validation_error', '/body');
    // a request with no body at all (so no media type to refuse) is an empty file, not a server error
    const empty = await t.workspace.request({ method: 'POST', url: '/api/mailboxes/import' });
    expectProblem(empty, 400, 'validation_error', '/body');
    const json = await t.workspace.request({
      method: 'POST',
      url: '/api/mailboxes/import',
      payload: { email: ivan.email },
    });
    expectProblem(json, 415, 'unsupported_media_type');
    const big = [HEADER, ...Array.from({ length: 1_500 }, (_, i) => csvLine(`u${i}@import-one.test`, 'x'))].join('\n');
    expect(Buffer.byteLength(big)).toBeGreaterThan(64 * 1024);
    const problem = expectProblem(await upload(big), 413, 'payload_too_large');
    expect(problem.detail).toMatch(/64 KiB \(WARMUP_MAX_IMPORT_BYTES\)/);
    expect(await t.database.db.selectFrom('mailboxes').select('id').execute()).toHaveLength(0);
  });

  it('fails the rows past the workspace mailbox limit and keeps the ones before it', async () => {
    const limited = await createTestApp({ limits: { maxMailboxes: 1 } });
    try {
      const res = await limited.workspace.request({
        method: 'POST',
        url: '/api/mailboxes/import',
        headers: { 'content-type': 'text/csv' },
        payload: [HEADER, csvLine(ivan.email, ivan.password), csvLine(iris.email, iris.password)].join('\n'),
      });
      responses.push(res.body);
      expect(res.statusCode, res.body).toBe(200);
      const result = res.json().import;
      expect(result).toMatchObject({ total: 2, created: 1, failed: 1 });
      const failed = result.rows.find((row: ImportRowResult) => row.result === 'failed');
      expect(failed.error).toMatch(/limit of 1 mailboxes/);
    } finally {
      await limited.close();
    }
  });
});
