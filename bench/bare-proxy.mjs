#!/usr/bin/env node
/**
 * The floor a gateway is compared with: a bare node:http + undici
 * pass-through that does nothing but forward. No auth, no validation, no
 * trace; the request body goes upstream as received and the reply comes back
 * chunk by chunk as it arrives. Whatever taskgate spends above this is the
 * cost of its own work.
 *
 *   node bench/bare-proxy.mjs --upstream http://127.0.0.1:A [--gap-upstream http://127.0.0.1:B] [--port N]
 *
 * `/v1/...` goes to --upstream and `/gap/v1/...` to --gap-upstream (the mock
 * with gaps between stream events). Prints one JSON line
 * `{"bare_proxy":"listening","port":N,...}` on stdout once it listens; stops on
 * SIGTERM or SIGINT.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    'gap-upstream': { type: 'string' },
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});
if (values.upstream === undefined) {
  process.stderr.write('Usage: node bench/bare-proxy.mjs --upstream ORIGIN [--gap-upstream ORIGIN] [--port N]\n');
  process.exit(2);
}

// The same undici settings taskgate uses for an engine (256 connections, no pipelining).
const upstream = new Pool(values.upstream, { connections: 256, pipelining: 1 });
const gapUpstream = values['gap-upstream'] === undefined ? upstream : new Pool(values['gap-upstream'], { connections: 256, pipelining: 1 });

const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (request, response) => {
  /** @type {Buffer[]} */
  const parts = [];
  request.on('data', (part) => parts.push(part));
  request.on('end', () => {
    forward(request, response, parts).catch(() => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
      response.end();
    });
  });
});

/**
 * @param {import('node:http').IncomingMessage} request
 * @param {import('node:http').ServerResponse} response
 * @param {Buffer[]} parts  the request body
 */
async function forward(request, response, parts) {
  const gap = request.url?.startsWith('/gap/') === true;
  const path = gap ? (request.url ?? '/').slice(4) : (request.url ?? '/');
  const reply = await (gap ? gapUpstream : upstream).request({
    method: /** @type {import('undici').Dispatcher.HttpMethod} */ (request.method ?? 'GET'),
    path,
    headers: { 'content-type': 'application/json' },
    body: parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : Buffer.concat(parts),
  });
  /** @type {Record<string, string>} */
  const headers = {};
  const contentType = reply.headers['content-type'];
  if (typeof contentType === 'string') headers['content-type'] = contentType;
  // A whole reply keeps its length (no chunked encoding); a stream is chunked, as from the engine.
  const contentLength = reply.headers['content-length'];
  if (typeof contentLength === 'string') headers['content-length'] = contentLength;
  response.writeHead(reply.statusCode, headers);
  for await (const chunk of reply.body) response.write(chunk);
  response.end();
}

server.listen(Number(values.port), values.host, () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(
    `${JSON.stringify({ bare_proxy: 'listening', port: address.port, url: `http://${values.host}:${address.port}/v1`, pid: process.pid })}\n`,
  );
});

const stop = () => {
  server.close();
  server.closeAllConnections();
  Promise.allSettled([upstream.close(), gapUpstream.close()]).then(() => process.exit(0));
  // Never hang on a connection that will not close.
  setTimeout(() => process.exit(0), 2_000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
