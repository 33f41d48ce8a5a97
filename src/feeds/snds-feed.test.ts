// Microsoft SNDS fetched from a stand-in on loopback: the attacker's answers first (huge, slow,
// garbage), then the published format.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFeedStandIn, sndsLine, type FeedStandIn } from '../../test/helpers/feed-stand-ins.js';
import type { MailPolicy } from '../mail/policy.js';
import { FeedFetchError } from './feed-http.js';
import { MAX_LINE_CHARS, MAX_ROWS, parseSndsCsv } from './snds-csv.js';
import { fetchSnds, sndsDate } from './snds-feed.js';

const LOOPBACK: MailPolicy = { allowedHosts: ['127.0.0.1'], plaintextHosts: [] };
const KEY = '3f2504e0-4f89-11d3-9a0c-0305e82c3301';

describe('SNDS over HTTP, against a stand-in', () => {
  let standIn: FeedStandIn;
  beforeAll(async () => {
    standIn = await startFeedStandIn();
  });
  afterAll(() => standIn.close());
  afterEach(() => {
    standIn.requests.length = 0;
  });
  const fetch = (limits: { timeoutMs?: number; maxBytes?: number; policy?: MailPolicy } = {}) =>
    fetchSnds(
      { baseUrl: `${standIn.url}/snds/data.aspx`, key: KEY },
      { policy: LOOPBACK, timeoutMs: 2_000, ...limits },
    );

  it('stops reading an answer past the size cap, whether it says its length or not', async () => {
    const huge = `${sndsLine('192.0.2.1', '2026-11-27', 'GREEN')}\r\n`.repeat(40_000);
    standIn.answer = (_request, response) => response.writeHead(200, { 'content-type': 'text/csv' }).end(huge);
    await expect(fetch({ maxBytes: 1024 * 1024 })).rejects.toThrow(/larger than 1048576 bytes/);
    // chunked, no content-length: counted as it arrives
    standIn.answer = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/csv' });
      for (let i = 0; i < 40; i++) response.write(huge.slice(0, 100_000));
      response.end();
    };
    await expect(fetch({ maxBytes: 1024 * 1024 })).rejects.toThrow(/larger than 1048576 bytes/);
  });

  it('gives up on an answer that trickles in past the deadline, though each byte comes in time', async () => {
    let timer: NodeJS.Timeout | undefined;
    standIn.answer = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/csv' });
      timer = setInterval(() => response.write('1'), 100);
      response.on('close', () => clearInterval(timer));
    };
    const started = Date.now();
    await expect(fetch({ timeoutMs: 700 })).rejects.toThrow(/no complete answer within 1 s/);
    expect(Date.now() - started).toBeLessThan(2_000);
    clearInterval(timer);
  });

  it('sets garbage lines aside with a reason, keeps the good ones, and never fails on them', async () => {
    const lines = [
      sndsLine('192.0.2.1', '2026-11-27', 'GREEN'),
      'not,a,row',
      'garbage without commas',
      sndsLine('192.0.2.999', '2026-11-27', 'RED'),
      sndsLine('192.0.2.2', '2026-11-27', 'RED').replace('RED', 'PURPLE'),
      sndsLine('192.0.2.3', '2026-02-30', 'RED'),
      sndsLine('192.0.2.4', '2026-11-27', 'RED').replace('1520', '15x0'),
      'x'.repeat(MAX_LINE_CHARS + 10),
      sndsLine('2001:db8::5', '2026-11-27', 'YELLOW', '0.3%', 4),
    ];
    standIn.answer = (_request, response) => response.writeHead(200).end(lines.join('\r\n'));
    const parsed = await fetch();
    expect(parsed.rows.map((row) => [row.ip, row.filterResult])).toEqual([
      ['192.0.2.1', 'green'],
      ['2001:db8::5', 'yellow'],
    ]);
    expect(parsed.setAside.map((row) => row.reason)).toEqual([
      '3 fields, SNDS rows have at least 11',
      '1 fields, SNDS rows have at least 11',
      'the first field is not an IP address',
      'the filter result is not GREEN, YELLOW or RED',
      'the activity start is not a date (MM/DD/YYYY)',
      'a message count is not a number',
      `a line of more than ${MAX_LINE_CHARS} characters`,
    ]);
    expect(parsed.setAside.every((row) => row.line.length <= 200)).toBe(true);
  });

  it('asks with the key and the MMDDYY date, and reads the published columns', async () => {
    standIn.answer = (_request, response) =>
      response
        .writeHead(200, { 'content-type': 'text/csv' })
        .end(
          [sndsLine('192.0.2.7', '2026-11-27', 'RED', '0.4%', 3), sndsLine('192.0.2.8', '2026-11-27', 'GREEN')].join(
            '\r\n',
          ),
        );
    const parsed = await fetchSnds(
      { baseUrl: `${standIn.url}/snds/data.aspx`, key: KEY, day: '2026-11-27' },
      { policy: LOOPBACK, timeoutMs: 2_000 },
    );
    expect(standIn.requests.map((r) => r.url)).toEqual([`/snds/data.aspx?key=${KEY}&date=112726`]);
    expect(parsed.setAside).toEqual([]);
    expect(parsed.rows[0]).toEqual({
      ip: '192.0.2.7',
      day: '2026-11-27',
      filterResult: 'red',
      complaintRate: '0.4%',
      complaintRateMax: 0.004,
      trapHits: 3,
      rcptCommands: 1520,
      dataCommands: 1498,
      messageRecipients: 1510,
    });
    expect(parsed.rows[1]).toMatchObject({ filterResult: 'green', complaintRate: '< 0.1%', complaintRateMax: 0.001 });
    expect(sndsDate('2026-01-05')).toBe('010526');
  });

  it('refuses to reach loopback unless the operator allows it, and tells no address or key', async () => {
    const error = await fetch({ policy: { allowedHosts: [], plaintextHosts: [] } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FeedFetchError);
    expect((error as Error).message).toBe('could not connect to the provider');
    expect(standIn.requests).toEqual([]);
  });

  it('answers a non-2xx with its status, not its body', async () => {
    standIn.answer = (_request, response) => response.writeHead(403).end(`bad key ${KEY}`);
    const error = (await fetch().catch((e: unknown) => e)) as FeedFetchError;
    expect(error.message).toBe('the provider answered 403');
    expect(error.message).not.toContain(KEY);
  });
});

describe('parseSndsCsv', () => {
  it('reads at most MAX_ROWS lines, in time linear in the input', () => {
    const line = sndsLine('192.0.2.1', '2026-11-27', 'GREEN');
    const small = `${line}\n`.repeat(MAX_ROWS / 4);
    const big = `${line}\n`.repeat(MAX_ROWS);
    const time = (text: string) => {
      const started = process.hrtime.bigint();
      parseSndsCsv(text);
      return Number(process.hrtime.bigint() - started);
    };
    time(small);
    const ratio = time(big) / time(small);
    expect(ratio).toBeLessThan(12);
    const over = parseSndsCsv(`${line}\n`.repeat(MAX_ROWS + 5));
    expect(over.rows).toHaveLength(MAX_ROWS);
    expect(over.setAside.at(-1)?.reason).toMatch(/more than 20000 lines/);
  });

  it('takes a pathological line (many commas, no newline) in linear time', () => {
    const started = Date.now();
    const parsed = parseSndsCsv(','.repeat(3_000_000));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(parsed.rows).toEqual([]);
    expect(parsed.setAside).toHaveLength(1);
  });
});
