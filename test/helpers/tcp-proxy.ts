/**
 * A TCP proxy on loopback between a client and a server, for tests of what
 * the client does when the server goes away: `cut()` destroys every
 * connection through it and stops listening, so new connections are refused
 * (ECONNREFUSED), as when PostgreSQL restarts; `restore()` listens again on
 * the same port.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** The loopback port clients connect to. */
  readonly port: number;
  /** Cuts every connection and refuses new ones until `restore()`. */
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;

  const listen = (onPort: number) =>
    new Promise<void>((resolve, reject) => {
      const listening = createServer((client) => {
        const upstream = connect({ host: target.host, port: target.port });
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          // Either side failing ends both, as a real network cut would.
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream);
        upstream.pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      listening.once('error', reject);
      listening.listen({ host: '127.0.0.1', port: onPort }, () => {
        server = listening;
        const address = listening.address();
        if (address !== null && typeof address === 'object') port = address.port;
        resolve();
      });
    });

  const stop = () =>
    new Promise<void>((resolve) => {
      const listening = server;
      server = null;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      if (listening === null) resolve();
      else listening.close(() => resolve());
    });

  await listen(0);
  return {
    get port() {
      return port;
    },
    cut: stop,
    restore: () => (server === null ? listen(port) : Promise.resolve()),
    close: stop,
  };
}
