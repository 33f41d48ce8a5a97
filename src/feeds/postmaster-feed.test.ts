// Gmail Postmaster Tools v2 against a stand-in on loopback that answers in the documented JSON shapes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { domainStatsAnswer, startFeedStandIn, type FeedStandIn } from '../../test/helpers/feed-stand-ins.js';
import { fetchPostmaster, readCompliance, readDomainStats } from './postmaster-feed.js';

const LOOPBACK = { allowedHosts: ['127.0.0.1'], plaintextHosts: [] };
let standIn: FeedStandIn;
beforeAll(async () => {
  standIn = await startFeedStandIn();
});
afterAll(() => standIn.close());

it('queries the spam rate of the last days and the compliance status with the bearer token', async () => {
  standIn.answer = (request, response) => {
    if (request.authorization !== 'Bearer access-1') return response.writeHead(401).end();
    if (request.method === 'POST' && request.url === '/v2/domains/example.test/domainStats:query') {
      return response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(domainStatsAnswer('example.test', [{ day: '2026-11-27', spamRate: 0.004 }])));
    }
    if (request.method === 'GET' && request.url === '/v2/domains/example.test/complianceStatus') {
      return response.writeHead(200).end(
        JSON.stringify({
          name: 'domains/example.test/complianceStatus',
          complianceData: { rowData: [{ requirement: 'SPF', status: { status: 'COMPLIANT' } }] },
        }),
      );
    }
    return response.writeHead(404).end();
  };
  const answer = await fetchPostmaster(
    { baseUrl: standIn.url, accessToken: 'access-1', domain: 'example.test', today: '2026-11-28' },
    { policy: LOOPBACK, timeoutMs: 2_000 },
  );
  expect(answer).toEqual({ days: [{ day: '2026-11-27', spamRate: 0.004 }], compliance: 'compliant' });
  const query = JSON.parse(standIn.requests[0].body) as Record<string, unknown>;
  expect(query).toMatchObject({
    metricDefinitions: [{ name: 'spamRate', baseMetric: { standardMetric: 'SPAM_RATE' } }],
    aggregationGranularity: 'DAILY',
  });
  expect(JSON.stringify(query.timeQuery)).toContain('{"year":2026,"month":11,"day":25}');
});

it('reads no rate from a value out of range, another metric or a date that is not one; garbage is an error', () => {
  expect(
    readDomainStats({
      domainStats: [
        { metric: 'spamRate', date: { year: 2026, month: 11, day: 26 }, value: { floatValue: 7 } },
        { metric: 'other', date: { year: 2026, month: 11, day: 26 }, value: { floatValue: 0.5 } },
        { metric: 'spamRate', date: 'yesterday', value: { floatValue: 0.5 } },
        { metric: 'spamRate', date: { year: 2026, month: 11, day: 25 }, value: { doubleValue: 0.001 } },
      ],
    }),
  ).toEqual([
    { day: '2026-11-26', spamRate: null },
    { day: '2026-11-25', spamRate: 0.001 },
  ]);
  expect(readDomainStats({})).toEqual([]);
  expect(() => readDomainStats({ domainStats: 'many' })).toThrow(/no list/);
  expect(readCompliance({ a: [{ status: 'NEEDS_WORK' }, { status: 'COMPLIANT' }] })).toBe('needs_work');
  expect(readCompliance({ nothing: true })).toBeNull();
  // deep nesting is walked without recursion, and only so far
  let deep: unknown = { status: 'NEEDS_WORK' };
  for (let i = 0; i < 100_000; i++) deep = { next: deep };
  expect(readCompliance(deep)).toBeNull();
});

it('tells a refused token by the status, never the body', async () => {
  standIn.answer = (_request, response) => response.writeHead(403).end('{"error":"PERMISSION_DENIED access-1"}');
  await expect(
    fetchPostmaster(
      { baseUrl: standIn.url, accessToken: 'access-1', domain: 'example.test', today: '2026-11-28' },
      { policy: LOOPBACK, timeoutMs: 2_000 },
    ),
  ).rejects.toThrow(/^the provider answered 403$/);
});
