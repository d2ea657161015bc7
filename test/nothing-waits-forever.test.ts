/**
 * Nothing waits forever: calls beyond an engine's slots wait in a queue bounded
 * in length and time (503 `engine_overloaded` with `retry-after`), and a
 * streaming client that stops reading is disconnected after
 * `server.stream_stall_timeout_ms`, its generation cancelled at the engine and
 * its slot freed, so it cannot hold the engine from everyone else. Through the
 * real server, a stock `openai` client and raw `node:http` clients that stop
 * reading.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { ADMIN_KEY, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

let engine: ScriptedEngine;
let taskgate: TestGateway;

beforeAll(async () => {
  engine = await startScriptedEngine({ name: 'busy' });
  taskgate = await startTestGateway(`engines:
  - { id: busy, type: openai, base_url: "${engine.baseUrl}", max_concurrency: 2, max_queue: 1, queue_timeout_ms: 1500, timeout_ms: 10000, idle_timeout_ms: 10000 }
models:
  - { id: model-0, served_by: [{ engine: busy }], price: { input: 1, output: 1 }, context_window: 4096 }
server: { stream_stall_timeout_ms: 400 }`);
});
afterAll(async () => {
  await taskgate.stop();
  await engine.close();
});

/** A stream of some 25 MB, more than the sockets between the engine and a client that stops reading can hold. */
const endlessStream = { kind: 'stream' as const, pieces: Array.from({ length: 400 }, () => 'x'.repeat(64 * 1024)), gapMs: 5 };

/** Opens a streamed call and reads its head, then nothing more. */
function stalledStream(): Promise<{ request: ClientRequest; response: IncomingMessage }> {
  const url = new URL(`${taskgate.baseUrl}/chat/completions`);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' } },
      (response) => {
        response.pause();
        resolve({ request, response });
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ model: 'model-0', messages: [{ role: 'user', content: 'hi' }], stream: true }));
  });
}

describe('a streaming client that stops reading', () => {
  it('is disconnected after stream_stall_timeout_ms; its generation is cancelled, its trace says client_stalled, and a waiting call is served', async () => {
    engine.script(endlessStream);
    const abortedBefore = engine.abortedRequests;
    const stalled = await Promise.all([stalledStream(), stalledStream()]);
    // Both slots are taken; a third call waits in the queue, then is served once the stalled ones are cut.
    engine.scriptNext({ kind: 'reply', content: 'served after the stalled ones' });
    const waiting = taskgate
      .client(undefined, { maxRetries: 0 })
      .chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'hi' }] });
    // A client that reads nothing does not read the server's close either: the engine side shows it.
    await engine.waitForAbortedRequests(abortedBefore + 2, 5_000);
    expect((await waiting).choices[0]?.message.content).toBe('served after the stalled ones');
    for (const { response } of stalled) {
      const trace = await eventually(() => taskgate.traceOf(String(response.headers['x-request-id'])), 'the stalled call’s trace');
      expect(trace).toMatchObject({ status: 'aborted', errorClass: 'client_stalled', stream: true });
    }
    for (const { request } of stalled) request.destroy();
  });

  it('a client that reads slowly but keeps reading is never cut', async () => {
    engine.script({ kind: 'stream', pieces: Array.from({ length: 20 }, () => 'y'.repeat(64 * 1024)), gapMs: 1 });
    const { response } = await stalledStream();
    let bytes = 0;
    response.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      response.pause();
      setTimeout(() => response.resume(), 100);
    });
    response.resume();
    await new Promise<void>((resolve) => response.once('end', () => resolve()));
    expect(bytes).toBeGreaterThan(20 * 64 * 1024);
    const trace = await eventually(() => taskgate.traceOf(String(response.headers['x-request-id'])), 'the slow reader’s trace');
    expect(trace).toMatchObject({ status: 'ok', errorClass: null });
  });
});

describe('the queue before an engine', () => {
  it('past max_concurrency calls wait; past max_queue they get 503 engine_overloaded with retry-after at once; a waiter gives up after queue_timeout_ms', async () => {
    engine.script({ kind: 'hang' });
    const controller = new AbortController();
    const busy = [1, 2].map(() =>
      taskgate
        .postChat({ model: 'model-0', messages: [{ role: 'user', content: 'hi' }] }, { signal: controller.signal })
        .catch(() => undefined),
    );
    await eventually(() => (engine.requests.filter((request) => !request.aborted).length >= 2 ? true : undefined), 'both slots taken');
    const startedAt = Date.now();
    const queued = taskgate.postChat({ model: 'model-0', messages: [{ role: 'user', content: 'hi' }] });
    await sleep(100);
    const refused = await taskgate.postChat({ model: 'model-0', messages: [{ role: 'user', content: 'hi' }] });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('engine_overloaded');
    const timedOut = await queued;
    expect(timedOut.status).toBe(503);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1_400);
    expect(((await timedOut.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'engine_overloaded' });
    expect(await taskgate.traceOf(timedOut.headers.get('x-request-id'))).toMatchObject({
      httpStatus: 503,
      errorClass: 'engine_overloaded',
    });
    controller.abort();
    await Promise.all(busy);
    engine.script({ kind: 'reply', content: 'free again' });
    const after = await taskgate.client().chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'hi' }] });
    expect(after.choices[0]?.message.content).toBe('free again');
  });
});
