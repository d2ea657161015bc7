/**
 * The promises of docs/reliability.md that the HTTP layer and the store keep,
 * tried through the real server the way a careless client or a failing disk
 * would: the parser's refusals carry a body and a request id, JSON endpoints
 * take JSON only, another account's traces are a 404, a full disk degrades
 * the service without failing calls, a body can neither trickle forever nor
 * pile up connections, and a client still sending an oversized body reads
 * its 413.
 */
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingStore, type RefusingStore } from './helpers/refusing-store.js';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { ADMIN_KEY, engineConfig, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the server closed the connection after the reply. */
  closed: boolean;
}

/** Writes `bytes` on a fresh socket and reads until the server closes it (or `waitMs` passes). */
function exchange(port: number, bytes: string | Buffer, waitMs = 5_000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      finish();
    });
    const timer = setTimeout(finish, waitMs);
    function finish(): void {
      clearTimeout(timer);
      socket.destroy();
      try {
        resolve({ ...parseReply(Buffer.concat(chunks).toString('latin1')), closed });
      } catch (error) {
        reject(error);
      }
    }
    socket.write(bytes);
  });
}

function parseReply(text: string): Omit<RawReply, 'closed'> {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) throw new Error(`no HTTP reply: ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine?.split(' ')[1]), headers, body: text.slice(end + 4) };
}

function expectOpenAIError(reply: { status: number; headers: Record<string, string>; body: string }, status: number, code: string): void {
  expect(reply.status).toBe(status);
  expect(reply.headers['x-request-id']).toMatch(/^req_/);
  expect(reply.headers['content-type']).toBe('application/json');
  const body = JSON.parse(reply.body) as { error: { message: string; type: string; param: unknown; code: string } };
  expect(body.error).toMatchObject({ code, type: expect.any(String), param: null });
  expect(body.error.message.length).toBeGreaterThan(10);
}

let engine: ScriptedEngine;
let taskgate: TestGateway;
let port: number;

beforeAll(async () => {
  engine = await startScriptedEngine();
  taskgate = await startTestGateway(
    engineConfig([engine.baseUrl], { extra: 'limits: { max_body_bytes: 65536 }\nserver: { request_timeout_ms: 1500 }' }),
  );
  port = taskgate.gateway.port;
});
afterAll(async () => {
  await taskgate.stop();
  await engine.close();
});

const chatHead = (extra = '') =>
  `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${ADMIN_KEY}\r\ncontent-type: application/json\r\n${extra}`;

describe('requests the HTTP parser refuses', () => {
  it('headers over the limit → 431 with an OpenAI error body and a request id', async () => {
    const reply = await exchange(port, `${chatHead()}x-padding: ${'a'.repeat(100 * 1024)}\r\ncontent-length: 2\r\n\r\n{}`);
    expectOpenAIError(reply, 431, 'request_headers_too_large');
    expect(reply.closed).toBe(true);
  });

  it.each([
    ['a control byte', '\u0001'],
    ['DEL', '\u007f'],
    ['NUL', '\u0000'],
  ])('%s in a header value → 400 with an OpenAI error body and a request id', async (_name, byte) => {
    const reply = await exchange(port, Buffer.from(`${chatHead()}x-note: a${byte}b\r\ncontent-length: 2\r\n\r\n{}`, 'latin1'));
    expectOpenAIError(reply, 400, 'malformed_http');
  });

  it('a request line that is not HTTP → 400 with a body, and the server keeps serving', async () => {
    expectOpenAIError(await exchange(port, 'HELLO THERE\r\n\r\n'), 400, 'malformed_http');
    const ok = await taskgate.postChat({ model: 'model-0', messages: [{ role: 'user', content: 'still there?' }] });
    expect(ok.status).toBe(200);
  });
});

describe('requests that try to confuse the parser', () => {
  it.each([
    ['Content-Length with Transfer-Encoding (request smuggling)', 'content-length: 2\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['two different Content-Lengths', 'content-length: 2\r\ncontent-length: 40\r\n\r\n{}'],
    ['an unknown Transfer-Encoding', 'transfer-encoding: gzip, chunked, identity\r\n\r\n0\r\n\r\n'],
  ])('%s → 400 with a body, and no call reaches the engine', async (_name, rest) => {
    const before = engine.requests.length;
    expectOpenAIError(await exchange(port, `${chatHead()}${rest}`), 400, 'malformed_http');
    expect(engine.requests.length).toBe(before);
  });

  it('headers sent a byte at a time → 408 with a body once request_timeout_ms is over', async () => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    const head = `${chatHead()}x-slow: ${'s'.repeat(200)}\r\n`;
    let sent = 0;
    const timer = setInterval(() => socket.writable && sent < head.length && socket.write(head[sent++] as string), 50);
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(timer);
    expect(sent).toBeLessThan(head.length);
    expectOpenAIError(parseReply(Buffer.concat(chunks).toString('latin1')), 408, 'request_timeout');
  });
});

describe('load and aborts', () => {
  it('1,000 calls at concurrency 50 are all answered and leave exactly 1,000 traces', async () => {
    const before = (await taskgate.traces('load-account')).length;
    const { text } = await taskgate.createKey({ account: 'load-account', requestsPerMinute: 100_000 });
    let next = 0;
    const statuses: number[] = [];
    const ids = new Set<string>();
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < 1_000) {
          next += 1;
          const response = await taskgate.postChat(
            { model: 'model-0', messages: [{ role: 'user', content: 'load' }], stream: next % 2 === 0 },
            { key: text },
          );
          await response.text();
          statuses.push(response.status);
          ids.add(response.headers.get('x-request-id') as string);
        }
      }),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1_000);
    expect(ids.size).toBe(1_000);
    await taskgate.gateway.traces.flush();
    const account = await taskgate.gateway.store.accounts.ensureAccount('load-account');
    expect(await taskgate.gateway.store.traces.count(account.id, {})).toBe(before + 1_000);
  });

  it('50 streams cut by their clients each cancel their generation and leave one aborted trace', async () => {
    engine.script({ kind: 'stream', pieces: Array.from({ length: 40 }, (_, index) => `piece ${index} `), gapMs: 50 });
    const abortsBefore = engine.abortedRequests;
    const ids = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const controller = new AbortController();
        const response = await taskgate.postChat(
          { model: 'model-0', messages: [{ role: 'user', content: 'cut me' }], stream: true },
          { signal: controller.signal },
        );
        await response.body!.getReader().read();
        controller.abort();
        return response.headers.get('x-request-id') as string;
      }),
    );
    await engine.waitForAbortedRequests(abortsBefore + 50, 10_000);
    engine.script({ kind: 'reply' });
    await expect
      .poll(async () => (await Promise.all(ids.map((id) => taskgate.traceOf(id)))).filter((trace) => trace?.status === 'aborted').length, {
        timeout: 5_000,
      })
      .toBe(50);
  });
});

describe('endpoints that take a JSON body', () => {
  const writes: Array<[string, string, unknown]> = [
    ['POST', '/v1/keys', { name: 'ci' }],
    ['PUT', '/v1/projects/default/retention', { bodies: 'none' }],
    ['PUT', '/v1/projects/default/workloads/typed/eval', { pass_rate: 0.55, sample_rate: 1 }],
    ['PUT', '/v1/projects/default/workloads/typed/routes/model-0/pin', { model: 'model-0' }],
    ['POST', '/v1/feedback', { request_id: 'req_x', pass: true }],
  ];

  it.each(writes)('%s %s answers 415 to text/plain and changes nothing', async (method, path, body) => {
    // The project exists, so the 415 is not a 404 in disguise.
    await taskgate.postChat(
      { model: 'model-0', messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-taskgate-workload': 'typed' } },
    );
    const response = await fetch(`${taskgate.origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'text/plain' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unsupported_media_type');
  });

  it('the contract refused for its content type is not stored', async () => {
    const response = await fetch(`${taskgate.baseUrl}/projects/default/workloads/typed/eval`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(await response.json()).toMatchObject({ version: 0, default: true });
  });
});

describe('another account', () => {
  it("asking for another account's traces is a 404 with the body of a project that never existed", async () => {
    await taskgate.postChat(
      { model: 'model-0', messages: [{ role: 'user', content: 'mine' }] },
      { headers: { 'x-taskgate-project': 'secret', 'x-taskgate-workload': 'payroll' } },
    );
    const other = await taskgate.createKey({ account: 'other-account', role: 'admin' });
    const read = async (project: string) => {
      const response = await fetch(`${taskgate.baseUrl}/projects/${project}/workloads/payroll/traces`, {
        headers: { authorization: `Bearer ${other.text}` },
      });
      return { status: response.status, error: ((await response.json()) as { error: { code: string; message: string } }).error };
    };
    const theirs = await read('secret');
    const nowhere = await read('never-was');
    expect(theirs.status).toBe(404);
    expect(theirs.error.code).toBe(nowhere.error.code);
    expect(theirs.error.message.replace('secret', 'never-was')).toBe(nowhere.error.message);
  });
});

describe('a body that does not arrive', () => {
  /** Opens a socket, sends the head of a call with a declared body, then one byte every `gapMs`; resolves with the reply and when the socket closed. */
  function trickle(head: string, gapMs: number): Promise<RawReply & { closedAfterMs: number }> {
    return new Promise((resolve) => {
      const startedAt = Date.now();
      const socket: Socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', () => undefined);
      const timer = setInterval(() => socket.writable && socket.write('x'), gapMs);
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ ...parseReply(Buffer.concat(chunks).toString('latin1')), closed: true, closedAfterMs: Date.now() - startedAt });
      });
      socket.write(`${head}content-length: 1000\r\n\r\n`);
    });
  }

  it('a body sent a byte at a time gets a 408 and its connection closed, with a trace', async () => {
    const reply = await trickle(chatHead(), 100);
    expectOpenAIError(reply, 408, 'request_timeout');
    expect(reply.headers.connection).toBe('close');
    // The server hung up: the trickle did not hold the socket past the bound (1.5 s here, plus Node's checking interval).
    expect(reply.closedAfterMs).toBeLessThan(10_000);
    const trace = await taskgate.traceOf(reply.headers['x-request-id'] as string);
    expect(trace).toMatchObject({ status: 'error', httpStatus: 408, errorClass: 'request_timeout' });
  });

  it('a refused call stops reading the trickling body and closes the connection', async () => {
    const reply = await trickle(
      'POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer tg_wrong\r\ncontent-type: application/json\r\n',
      100,
    );
    expectOpenAIError(reply, 401, 'invalid_api_key');
    expect(reply.closedAfterMs).toBeLessThan(10_000);
  });

  it('past the cap of slow connections (over a second without a whole request), the oldest are shed with a 408 and a prompt client on the same address is served', async () => {
    const capped = await startTestGateway(engineConfig([engine.baseUrl], { extra: 'server: { max_slow_connections_per_address: 3 }' }));
    const cappedPort = capped.gateway.port;
    const held: Array<{ socket: Socket; reply: Buffer[]; closed: boolean }> = [];
    try {
      // A burst of 12 new connections at once is not slow: all are served.
      const agent = new Agent({ keepAlive: true, maxSockets: 12 });
      const burst = await Promise.all(
        Array.from(
          { length: 12 },
          () =>
            new Promise<number>((resolve, reject) => {
              httpRequest(`${capped.origin}/healthz`, { agent }, (response) => {
                response.resume();
                response.on('end', () => resolve(response.statusCode ?? 0));
              })
                .on('error', reject)
                .end();
            }),
        ),
      );
      agent.destroy();
      expect(burst).toEqual(Array(12).fill(200));
      // Five connections that send part of a head and then nothing, opened 150 ms apart: oldest first.
      for (let index = 0; index < 5; index++) {
        const socket = connect(cappedPort, '127.0.0.1');
        const entry = { socket, reply: [] as Buffer[], closed: false };
        socket.on('data', (chunk: Buffer) => entry.reply.push(chunk));
        socket.on('error', () => undefined);
        socket.on('close', () => (entry.closed = true));
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(chatHead());
        held.push(entry);
        await sleep(150);
      }
      // Once the newest is slow too, the address holds 5 against a cap of 3: the two oldest are shed, each with a 408.
      await expect.poll(() => held.map((entry) => entry.closed), { timeout: 5_000 }).toEqual([true, true, false, false, false]);
      for (const entry of held.slice(0, 2)) {
        const reply = parseReply(Buffer.concat(entry.reply).toString('latin1'));
        expectOpenAIError(reply, 408, 'request_timeout');
        expect(reply.headers.connection).toBe('close');
      }
      // The address still holds 3 slow connections; a new connection from it is served, a call included.
      const healthz = `GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`;
      expect((await exchange(cappedPort, healthz)).status).toBe(200);
      const call = await capped.postChat({ model: 'model-0', messages: [{ role: 'user', content: 'next to slow ones' }] });
      expect(call.status).toBe(200);
      await call.text();
      expect(held.map((entry) => entry.closed)).toEqual([true, true, false, false, false]);
    } finally {
      for (const entry of held) entry.socket.destroy();
      await capped.stop();
    }
  });

  it('a slow body whose request a handler already has is cut when shed (no second reply over the handler)', async () => {
    const capped = await startTestGateway(engineConfig([engine.baseUrl], { extra: 'server: { max_slow_connections_per_address: 1 }' }));
    const held: Array<{ socket: Socket; reply: Buffer[]; closed: boolean }> = [];
    try {
      for (let index = 0; index < 2; index++) {
        const socket = connect(capped.gateway.port, '127.0.0.1');
        const entry = { socket, reply: [] as Buffer[], closed: false };
        socket.on('data', (chunk: Buffer) => entry.reply.push(chunk));
        socket.on('error', () => undefined);
        socket.on('close', () => (entry.closed = true));
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(`${chatHead()}content-length: 1000\r\n\r\n{`);
        held.push(entry);
        await sleep(150);
      }
      await expect.poll(() => held.map((entry) => entry.closed), { timeout: 5_000 }).toEqual([true, false]);
      expect(Buffer.concat(held[0]!.reply).length).toBe(0);
    } finally {
      for (const entry of held) entry.socket.destroy();
      await capped.stop();
    }
  });
});

describe('a body over the limit', () => {
  const oversized = JSON.stringify({ model: 'model-0', messages: [{ role: 'user', content: 'x'.repeat(300 * 1024) }] });

  it('a client that writes the whole body before reading gets the 413, not a broken pipe', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const outgoing = httpRequest(`${taskgate.origin}/v1/chat/completions`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${ADMIN_KEY}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(oversized),
          },
        });
        outgoing.on('error', reject);
        outgoing.on('response', (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        });
        outgoing.end(oversized);
      });
      expect(result.status).toBe(413);
      expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'request_too_large' } });
    }
  });

  it('fetch and the openai SDK read the 413 every time (so the SDK does not retry it)', async () => {
    for (let attempt = 0; attempt < 6; attempt++) {
      const response = await fetch(`${taskgate.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: oversized,
      });
      expect(response.status).toBe(413);
      await response.text();
    }
    const client = new OpenAI({ apiKey: ADMIN_KEY, baseURL: taskgate.baseUrl, maxRetries: 2 });
    const before = engine.requests.length;
    for (let attempt = 0; attempt < 3; attempt++) {
      const failure = await client.chat.completions
        .create({ model: 'model-0', messages: [{ role: 'user', content: 'x'.repeat(300 * 1024) }] })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    }
    expect(engine.requests.length).toBe(before);
  });
});

describe('a store that refuses writes (a full disk)', () => {
  let failing: RefusingStore;
  let degraded: TestGateway;

  beforeAll(async () => {
    degraded = await startTestGateway(
      engineConfig([engine.baseUrl]),
      {},
      {
        wrapStore: (store) => {
          failing = refusingStore(store);
          return failing.store;
        },
      },
    );
  });
  afterAll(() => degraded.stop());

  const readiness = async () => {
    const response = await fetch(`${degraded.origin}/readyz`);
    return { status: response.status, body: (await response.json()) as { degraded: string[]; store_writes: string } };
  };

  it('answers the first calls of new workloads, says it is degraded, and writes everything once the store takes writes again', async () => {
    const client = degraded.client();
    await client.chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'before' }] });
    expect((await readiness()).body.degraded).toEqual([]);
    failing.refuseWrites(true);
    const ids: string[] = [];
    for (const workload of ['brand-new', 'another-new', 'brand-new']) {
      const { data, response } = await client.chat.completions
        .create(
          { model: 'model-0', messages: [{ role: 'user', content: 'hello' }] },
          { headers: { 'x-taskgate-project': 'fresh', 'x-taskgate-workload': workload } },
        )
        .withResponse();
      expect(data.choices[0]?.message.content).toEqual(expect.any(String));
      ids.push(response.headers.get('x-request-id') as string);
    }
    expect(failing.refused()).toBeGreaterThan(0);

    // The store refused the traces' batch by now: the process says so and keeps serving.
    await expect.poll(async () => (await readiness()).body.degraded, { timeout: 5_000 }).toContain('store');
    const ready = await readiness();
    expect(ready.status).toBe(200);
    expect(ready.body.store_writes).toMatch(/traces and 2 new workloads wait in memory/);
    const metrics = await (await fetch(`${degraded.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text();
    expect(metrics).toMatch(/^taskgate_store_writes_failing 1$/m);
    expect(metrics).toMatch(/^taskgate_store_unwritten_workloads 2$/m);
    expect(metrics).toMatch(/^taskgate_trace_writer_queue_length [1-9]/m);
    await expect
      .poll(() => degraded.logLines.some((line) => line.includes('trace batch write failed') && /"waiting_in_memory":[1-9]/.test(line)), {
        timeout: 5_000,
      })
      .toBe(true);

    // A management write the store cannot take is a 503 to retry, not a 500; reads still work.
    const put = await fetch(`${degraded.baseUrl}/projects/default/workloads/main/eval`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ pass_rate: 0.9 }),
    });
    expect(put.status).toBe(503);
    expect(put.headers.get('retry-after')).toBe('5');
    expect(((await put.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'store_unavailable',
      message: expect.stringContaining('disk is full'),
    });
    expect((await fetch(`${degraded.baseUrl}/projects`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status).toBe(200);

    failing.refuseWrites(false);
    await expect.poll(async () => (await readiness()).body.degraded, { timeout: 10_000 }).toEqual([]);
    const traces = await degraded.traces();
    for (const id of ids) expect(traces.find((trace) => trace.requestId === id)).toMatchObject({ status: 'ok', project: 'fresh' });
    await expect
      .poll(
        async () => {
          const response = await fetch(`${degraded.baseUrl}/projects/fresh/workloads`, {
            headers: { authorization: `Bearer ${ADMIN_KEY}` },
          });
          return ((await response.json()) as { data?: Array<{ name: string }> }).data?.map((workload) => workload.name).sort();
        },
        { timeout: 10_000 },
      )
      .toEqual(['another-new', 'brand-new']);
  });

  it('a store that does not answer at all leaves the process serving known keys, /readyz 200 listing the store as degraded, until it is back', async () => {
    failing.goDown(true);
    const down = await fetch(`${degraded.origin}/readyz`);
    expect(down.status).toBe(200);
    expect((await down.json()) as { store: string; degraded: string[] }).toMatchObject({
      store: expect.stringMatching(/unable to open database file/),
      degraded: expect.arrayContaining(['store']),
    });
    expect((await degraded.postChat({ model: 'model-0', messages: [{ role: 'user', content: 'while down' }] })).status).toBe(200);
    failing.goDown(false);
    expect((await readiness()).status).toBe(200);
    expect((await degraded.postChat({ model: 'model-0', messages: [{ role: 'user', content: 'back' }] })).status).toBe(200);
  });
});
