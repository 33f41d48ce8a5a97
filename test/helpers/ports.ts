import net from 'node:net';

/** A port nothing listens on: bound by us, then released. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A TCP server that accepts connections and never says a word (a black-holed mail server), or
 * says only `greeting` and then nothing more (a mail server that hangs once the session started).
 */
export async function silentServer(
  opts: { greeting?: string } = {},
): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  const server = net.createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    if (opts.greeting !== undefined) socket.write(opts.greeting);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    connections: () => count,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
