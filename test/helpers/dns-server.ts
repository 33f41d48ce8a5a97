// A real DNS server on 127.0.0.1 (dns2) answering from test zones, for the DNS checks and
// blocklists: the service's resolver is pointed at it (WARMUP_DNS_SERVERS), never the internet.
import dgram from 'node:dgram';
import dns2 from 'dns2';

const { Packet } = dns2;

export type ZoneRecord =
  | { type: 'MX'; exchange: string; priority: number }
  | { type: 'TXT'; data: string | string[] }
  | { type: 'A'; address: string }
  | { type: 'PTR'; domain: string };

export interface TestDnsServer {
  /** `127.0.0.1:port`, as WARMUP_DNS_SERVERS takes it. */
  address: string;
  /** The zones it answers from: tests may change them while it runs. */
  zones: Record<string, ZoneRecord[]>;
  close(): Promise<void>;
}

/** Answers from `zones` (name → records); names under down.test get SERVFAIL, unknown names NXDOMAIN. */
export async function startDnsServer(zones: Record<string, ZoneRecord[]>): Promise<TestDnsServer> {
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question!.name.toLowerCase();
      if (name === 'down.test' || name.endsWith('.down.test')) {
        response.header.rcode = 2;
      } else if (!(name in zones)) {
        response.header.rcode = 3;
      } else {
        for (const record of zones[name]!.filter((r) => Packet.TYPE[r.type] === question!.type)) {
          response.answers.push({
            name: question!.name,
            class: Packet.CLASS.IN,
            ttl: 60,
            ...record,
            type: Packet.TYPE[record.type],
          });
        }
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return { address: `127.0.0.1:${addresses.udp!.port}`, zones, close: () => server.close() };
}

/** A loopback UDP port nobody listens on. */
export async function deadDnsPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}
