// Local stand-ins for the providers' feeds, on loopback: Microsoft SNDS (CSV by key) and Gmail
// Postmaster Tools v2 (JSON by bearer token), serving what a test tells them to, in the published
// formats. Each records the requests it was sent, so a test can see what was asked.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FeedRequestSeen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

export interface FeedStandIn {
  url: string;
  requests: FeedRequestSeen[];
  /** What the next requests are answered with. */
  answer: (request: FeedRequestSeen, response: http.ServerResponse) => void;
  close(): Promise<void>;
}

export async function startFeedStandIn(): Promise<FeedStandIn> {
  const requests: FeedRequestSeen[] = [];
  const standIn: FeedStandIn = {
    url: '',
    requests,
    answer: (_request, response) => response.writeHead(404).end(),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const seen = {
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      standIn.answer(seen, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = standIn.close;
  standIn.close = () => {
    server.closeAllConnections();
    return close();
  };
  return standIn;
}

/** An SNDS row in Microsoft's published column order (see src/feeds/snds-csv.ts). */
export function sndsLine(ip: string, day: string, colour: 'GREEN' | 'YELLOW' | 'RED', complaint = '< 0.1%', traps = 0) {
  const [year, month, date] = day.split('-');
  const us = `${month}/${date}/${year}`;
  const trapPeriod = traps > 0 ? `${us} 3:00 AM,${us} 9:00 PM` : ',';
  return `${ip},${us} 1:00 AM,${us} 11:00 PM,1520,1498,1510,${colour},${complaint},${trapPeriod},${traps},mail.example.test,bounce@example.test,`;
}

/** A Postmaster Tools v2 domainStats:query answer with one spam rate per day. */
export function domainStatsAnswer(domain: string, days: Array<{ day: string; spamRate: number }>) {
  return {
    domainStats: days.map(({ day, spamRate }, i) => {
      const [year, month, date] = day.split('-').map(Number);
      return {
        name: `domains/${domain}/domainStats/s${i}`,
        value: { floatValue: spamRate },
        date: { year, month, day: date },
        metric: 'spamRate',
      };
    }),
  };
}
