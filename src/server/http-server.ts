/**
 * The listening socket and its shutdown. On stop: refuse new connections,
 * let calls in flight finish for up to `graceMs`, then cut the rest (their
 * handlers see the client go away and trace the call as aborted), and resolve
 * once every handler has returned, so the trace writer can flush after it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpServer {
  readonly server: Server;
  readonly port: number;
  /** Calls whose handler has not returned yet. */
  inFlight(): number;
  stop(graceMs: number): Promise<void>;
}

export async function listen(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  options: { host: string; port: number },
): Promise<HttpServer> {
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0, headersTimeout: 60_000 }, (request, response) => {
    inFlight++;
    void handle(request, response).finally(() => {
      inFlight--;
      if (inFlight === 0 && drained !== null) drained();
    });
  });
  // A malformed request line or header never reaches a handler: answer it and move on.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });

  function waitForHandlers(timeoutMs: number): Promise<void> {
    if (inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  return {
    server,
    port: (server.address() as AddressInfo).port,
    inFlight: () => inFlight,
    async stop(graceMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await waitForHandlers(graceMs);
      server.closeAllConnections();
      await waitForHandlers(5_000);
      await closed;
    },
  };
}
