/**
 * A small HTTP file server on 127.0.0.1 for download tests: serves buffers the
 * test made, honours `Range: bytes=N-`, records every request, and has
 * switches for the ways real servers and networks misbehave.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ServedRequest {
  path: string;
  /** The Range header as sent, or null. */
  range: string | null;
  status: number;
}

export interface FileServerSwitches {
  /** The next file reply sends this many body bytes, then the connection is destroyed. One shot. */
  dropNextAfterBytes: number | null;
  /** File replies send this many body bytes, then nothing more (the connection stays open). */
  stallAfterBytes: number | null;
  /** Answer every ranged request with the whole file and 200, as some servers do. */
  ignoreRange: boolean;
  /** Answer every request with this status and no file (404, 401, 500...). */
  status: number | null;
}

export interface FileServer {
  /** `http://127.0.0.1:<port>`. */
  baseUrl: string;
  /** Served files by URL path, e.g. `/files/a.gguf`; `/redirect/<path>` answers 302 to `/<path>`. */
  files: Map<string, Buffer>;
  requests: ServedRequest[];
  switches: FileServerSwitches;
  close(): Promise<void>;
}

export async function startFileServer(): Promise<FileServer> {
  const files = new Map<string, Buffer>();
  const requests: ServedRequest[] = [];
  const switches: FileServerSwitches = { dropNextAfterBytes: null, stallAfterBytes: null, ignoreRange: false, status: null };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
    const range = request.headers.range ?? null;
    const record = (status: number) => requests.push({ path, range, status });

    if (switches.status !== null) {
      record(switches.status);
      response.writeHead(switches.status, { 'content-type': 'text/plain' }).end(`status ${switches.status}\n`);
      return;
    }
    if (path.startsWith('/redirect/')) {
      record(302);
      response.writeHead(302, { location: path.slice('/redirect'.length) }).end();
      return;
    }
    const file = files.get(path);
    if (file === undefined) {
      record(404);
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }

    const start = range === null || switches.ignoreRange ? 0 : rangeStart(range);
    if (start !== null && start >= file.length && start > 0) {
      record(416);
      response.writeHead(416, { 'content-range': `bytes */${file.length}` }).end();
      return;
    }
    const from = start ?? 0;
    const body = file.subarray(from);
    const partial = from > 0;
    record(partial ? 206 : 200);
    response.writeHead(partial ? 206 : 200, {
      'content-type': 'application/octet-stream',
      'content-length': String(body.length),
      'accept-ranges': 'bytes',
      ...(partial ? { 'content-range': `bytes ${from}-${file.length - 1}/${file.length}` } : {}),
    });
    sendBody(response, body, switches);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    files,
    requests,
    switches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sendBody(response: ServerResponse, body: Buffer, switches: FileServerSwitches): void {
  const drop = switches.dropNextAfterBytes;
  if (drop !== null) {
    switches.dropNextAfterBytes = null;
    response.write(body.subarray(0, drop), () => response.socket?.destroy());
    return;
  }
  if (switches.stallAfterBytes !== null) {
    response.write(body.subarray(0, switches.stallAfterBytes));
    return;
  }
  response.end(body);
}

/** N of `bytes=N-` (or `bytes=N-M`); null for any other form, which is then ignored. */
function rangeStart(range: string): number | null {
  const match = /^bytes=(\d+)-\d*$/.exec(range);
  return match === null ? null : Number(match[1]);
}

/** Port that nothing listens on: opened, then closed. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
