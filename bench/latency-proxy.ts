// A TCP proxy on loopback that holds every chunk for a fixed time in each direction, so a worker
// talking to the local mail stack waits on the network the way it waits on a real provider. Chunks
// keep their order: every one is held for the same time, and Node fires equal timers in the order
// they were set.
import net from 'node:net';

export interface LatencyProxy {
  port: number;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 and forwards to `target`, adding `oneWayMs` to every chunk each way. */
export async function startLatencyProxy(
  target: { host: string; port: number },
  oneWayMs: number,
): Promise<LatencyProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    relay(client, upstream, oneWayMs);
    relay(upstream, client, oneWayMs);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, resolve);
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function relay(from: net.Socket, to: net.Socket, delayMs: number): void {
  from.on('data', (chunk) => {
    setTimeout(() => {
      if (!to.destroyed) to.write(chunk);
    }, delayMs);
  });
  // the end travels as late as the last chunk did
  from.on('end', () => setTimeout(() => to.end(), delayMs));
}
