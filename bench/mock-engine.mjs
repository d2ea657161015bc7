#!/usr/bin/env node
/**
 * A minimal, fast OpenAI-compatible engine for benchmarks: the "model" answers
 * every call with the same small reply, immediately. It runs on bare node:http
 * with every byte it sends precomputed, so the cost of a call here is close to
 * the floor of what any HTTP server spends, and what taskgate adds on top of it
 * stands out.
 *
 *   POST /v1/chat/completions   a fixed `chat.completion` (with usage), or with
 *                               `stream: true` a fixed 23-event SSE stream: role
 *                               delta, 20 content deltas, the finish chunk, the
 *                               usage chunk (empty `choices`, only when
 *                               `stream_options.include_usage`), `data: [DONE]`.
 *   GET  /v1/models             one model.
 *
 * Standalone:  node bench/mock-engine.mjs [--port N] [--host H] [--gap-ms MS]
 *   prints one JSON line `{"mock_engine":"listening","url":"http://H:N/v1",...}`
 *   on stdout once it listens, and stops on SIGTERM or SIGINT.
 * Imported:    const engine = await startMockEngine({ port: 0 }); ...; await engine.close();
 *
 * `--gap-ms` waits that long between two stream events (not before the first),
 * so a benchmark can tell a gateway that passes events through as they arrive
 * from one that buffers the stream.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

/** The model name the mock reports; the gateway replaces it with its canonical id. */
export const mockModelName = 'bench-model';

const created = 1_700_000_000;
const completionId = 'chatcmpl-mock0000000000000000000000';
/** 20 content pieces, one per content delta; joined they form the JSON reply's content. */
const contentPieces = Array.from({ length: 20 }, (_, index) => (index === 0 ? 'Benchmark' : ` word${index}`));
const usage = { prompt_tokens: 256, completion_tokens: 20, total_tokens: 276 };

const completionBody = Buffer.from(
  JSON.stringify({
    id: completionId,
    object: 'chat.completion',
    created,
    model: mockModelName,
    choices: [{ index: 0, message: { role: 'assistant', content: contentPieces.join('') }, logprobs: null, finish_reason: 'stop' }],
    usage,
  }),
);

/** One SSE event of a `chat.completion.chunk`, as bytes. */
function chunkEvent(choices, extra = {}) {
  return Buffer.from(
    `data: ${JSON.stringify({ id: completionId, object: 'chat.completion.chunk', created, model: mockModelName, choices, ...extra })}\n\n`,
  );
}

/** The events every stream sends, in order, before the optional usage chunk. */
const streamEvents = [
  chunkEvent([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
  ...contentPieces.map((piece) => chunkEvent([{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }])),
  chunkEvent([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
];
const usageEvent = chunkEvent([], { usage });
const doneEvent = Buffer.from('data: [DONE]\n\n');
/** The whole stream, with and without the usage chunk, for the no-gap case: still one write per event (see below). */
const streamWithUsage = [...streamEvents, usageEvent, doneEvent];
const streamWithoutUsage = [...streamEvents, doneEvent];

const modelsBody = Buffer.from(
  JSON.stringify({ object: 'list', data: [{ id: mockModelName, object: 'model', created, owned_by: 'bench' }] }),
);

const jsonHeaders = { 'content-type': 'application/json' };
const streamHeaders = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/** Requests larger than this are refused, so a broken client cannot make the mock buffer without bound. */
const maxBodyBytes = 1024 * 1024;

/**
 * @typedef {object} MockEngineOptions
 * @property {number} [port]   0 (the default) picks a free port.
 * @property {string} [host]   default 127.0.0.1.
 * @property {number} [gapMs]  delay between two stream events; default 0 (all written at once).
 */

/**
 * @typedef {object} MockEngine
 * @property {import('node:http').Server} server
 * @property {number} port
 * @property {string} url   the base URL, ending in `/v1`.
 * @property {() => Promise<void>} close
 */

/**
 * Starts the mock engine and resolves once it listens.
 * @param {MockEngineOptions} [options]
 * @returns {Promise<MockEngine>}
 */
export async function startMockEngine(options = {}) {
  const host = options.host ?? '127.0.0.1';
  const gapMs = options.gapMs ?? 0;
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (request, response) => {
    if (request.method === 'POST' && request.url === '/v1/chat/completions') {
      readJson(request, (body) => {
        if (body === null) {
          response
            .writeHead(400, jsonHeaders)
            .end('{"error":{"message":"invalid JSON body","type":"invalid_request_error","param":null,"code":null}}');
        } else if (body.stream === true) {
          const includeUsage = body.stream_options?.include_usage === true;
          sendStream(response, includeUsage ? streamWithUsage : streamWithoutUsage, gapMs);
        } else {
          response.writeHead(200, jsonHeaders).end(completionBody);
        }
      });
      return;
    }
    if (request.method === 'GET' && request.url === '/v1/models') {
      response.writeHead(200, jsonHeaders).end(modelsBody);
      return;
    }
    request.resume();
    response.writeHead(404, jsonHeaders).end('{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}');
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve(undefined);
    });
  });
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  return {
    server,
    port,
    url: `http://${host}:${port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Reads a JSON body and calls back with the parsed object, or null when it is
 * not JSON or too large.
 * @param {import('node:http').IncomingMessage} request
 * @param {(body: any) => void} onBody
 */
function readJson(request, onBody) {
  /** @type {Buffer[]} */
  const parts = [];
  let size = 0;
  request.on('data', (part) => {
    size += part.length;
    if (size <= maxBodyBytes) parts.push(part);
  });
  request.on('end', () => {
    if (size > maxBodyBytes) return onBody(null);
    try {
      const body = JSON.parse(parts.length === 1 ? parts[0].toString() : Buffer.concat(parts).toString());
      onBody(body !== null && typeof body === 'object' ? body : null);
    } catch {
      onBody(null);
    }
  });
}

/**
 * Writes the events one `write` each, as a real engine emits tokens one by
 * one; the gateway then sees events arrive in separate network reads, or
 * coalesced, as on a busy real server.
 * @param {import('node:http').ServerResponse} response
 * @param {Buffer[]} events
 * @param {number} gapMs
 */
function sendStream(response, events, gapMs) {
  response.writeHead(200, streamHeaders);
  if (gapMs <= 0) {
    for (let index = 0; index < events.length - 1; index++) response.write(events[index]);
    response.end(events[events.length - 1]);
    return;
  }
  let next = 0;
  const timer = setInterval(() => {
    if (response.destroyed) {
      clearInterval(timer);
      return;
    }
    const event = events[next++];
    if (next === events.length) {
      clearInterval(timer);
      response.end(event);
    } else {
      response.write(event);
    }
  }, gapMs);
  // The first event goes out at once: only the gaps between events are delayed.
  response.write(events[next++]);
  response.on('close', () => clearInterval(timer));
}

async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      'gap-ms': { type: 'string', default: '0' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write('Usage: node bench/mock-engine.mjs [--port N] [--host H] [--gap-ms MS]\n');
    return;
  }
  const port = Number(values.port);
  const gapMs = Number(values['gap-ms']);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port must be 0-65535, got ${values.port}`);
  if (!Number.isFinite(gapMs) || gapMs < 0) throw new Error(`--gap-ms must be a number >= 0, got ${values['gap-ms']}`);
  const engine = await startMockEngine({ port, host: values.host, gapMs });
  process.stdout.write(
    `${JSON.stringify({ mock_engine: 'listening', url: engine.url, port: engine.port, pid: process.pid, gap_ms: gapMs })}\n`,
  );
  const stop = () => {
    engine.close().then(() => process.exit(0));
    // Never hang on a client that keeps a stream open.
    setTimeout(() => process.exit(0), 2_000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error) => {
    process.stderr.write(`mock-engine: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
