/** What a caller sees when engines fail, stall or go away, and what the traces say. */
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { startTestGateway, type TestGateway } from './helpers/test-gateway.js';

let primary: ScriptedEngine;
let secondary: ScriptedEngine;
let solo: ScriptedEngine;
let taskgate: TestGateway;

beforeAll(async () => {
  [primary, secondary, solo] = await Promise.all([
    startScriptedEngine({ name: 'primary' }),
    startScriptedEngine({ name: 'secondary' }),
    startScriptedEngine({ name: 'solo' }),
  ]);
  // model-0 on two replicas (failover), model-2 alone on the third engine.
  const config = `engines:
  - { id: engine-a, type: openai, base_url: "${primary.baseUrl}", connect_timeout_ms: 1000, timeout_ms: 800, idle_timeout_ms: 500 }
  - { id: engine-b, type: openai, base_url: "${secondary.baseUrl}", connect_timeout_ms: 1000, timeout_ms: 800, idle_timeout_ms: 500 }
  - { id: engine-c, type: openai, base_url: "${solo.baseUrl}", connect_timeout_ms: 1000, timeout_ms: 800, idle_timeout_ms: 500, circuit_breaker: { failures: 1000 } }
  - { id: engine-dead, type: openai, base_url: "http://127.0.0.1:9/v1", connect_timeout_ms: 500 }
models:
  - { id: model-0, served_by: [{ engine: engine-a }, { engine: engine-b }], price: { input: 1, output: 1 }, context_window: 4096 }
  - { id: model-2, served_by: [{ engine: engine-c }], price: { input: 1, output: 1 }, context_window: 4096 }
  - { id: model-dead, served_by: [{ engine: engine-dead }], price: { input: 1, output: 1 }, context_window: 4096 }
server: { stream_ping_interval_ms: 200 }`;
  taskgate = await startTestGateway(config);
});
afterAll(async () => {
  await taskgate.stop();
  await Promise.all([primary.close(), secondary.close(), solo.close()]);
});
beforeEach(() => {
  for (const engine of [primary, secondary, solo]) engine.script({ kind: 'reply', content: 'fine' });
});

const ask = (model: string, extra: Record<string, unknown> = {}) =>
  taskgate.client().chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'hi' }],
    ...extra,
  } as never) as unknown as Promise<OpenAI.ChatCompletion>;

describe('errors before the head', () => {
  it('passes an engine 4xx through as 400 with its message', async () => {
    solo.script({
      kind: 'status',
      status: 400,
      body: { object: 'error', message: "This model's maximum context length is 4096 tokens.", type: 'BadRequestError', code: 400 },
    });
    const error = await ask('model-2').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as APIError).message).toContain('maximum context length');
  });

  it('maps an engine 5xx to 502 and garbage to 502', async () => {
    solo.script({ kind: 'status', status: 500, body: { error: { message: 'CUDA out of memory' } } });
    expect(((await ask('model-2').catch((caught: unknown) => caught)) as APIError).status).toBe(502);
    solo.script({ kind: 'garbage' });
    expect(((await ask('model-2').catch((caught: unknown) => caught)) as APIError).status).toBe(502);
  });

  it('maps an unreachable engine to 503', async () => {
    const error = (await ask('model-dead').catch((caught: unknown) => caught)) as APIError;
    expect(error.status).toBe(503);
  });

  it('maps a slow engine to 504 and traces it', async () => {
    solo.script({ kind: 'hang' });
    const response = await taskgate.postChat({ model: 'model-2', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(504);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('engine_timeout');
    expect(await taskgate.traceOf(response.headers.get('x-request-id'))).toMatchObject({
      status: 'error',
      httpStatus: 504,
      errorClass: 'engine_timeout',
      replica: 'engine-c',
    });
  });

  it('sends a call a replica refused (503) to the other replica, once, and traces both attempts', async () => {
    primary.script({ kind: 'status', status: 503, body: { error: { message: 'overloaded' } } });
    secondary.script({ kind: 'status', status: 503, body: { error: { message: 'overloaded' } } });
    const before = primary.requests.length + secondary.requests.length;
    const response = await taskgate.postChat({ model: 'model-0', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('engine_unavailable');
    expect(primary.requests.length + secondary.requests.length - before).toBe(2);
    const trace = await taskgate.traceOf(response.headers.get('x-request-id'));
    expect(trace?.attempts?.map((attempt) => attempt.outcome)).toEqual(['engine_unavailable', 'engine_unavailable']);
    expect(new Set(trace?.attempts?.map((attempt) => attempt.replica))).toEqual(new Set(['engine-a', 'engine-b']));

    primary.script({ kind: 'status', status: 503, body: { error: { message: 'loading' } } });
    secondary.script({ kind: 'reply', content: 'from the other replica' });
    for (let index = 0; index < 4; index++) {
      expect((await ask('model-0')).choices[0]?.message.content).toBe('from the other replica');
    }
  });

  it('never sends a call again once an engine had it: a connection closed after the request is a 502, one generation', async () => {
    primary.script({ kind: 'destroy' });
    secondary.script({ kind: 'destroy' });
    const before = primary.requests.length + secondary.requests.length;
    const response = await taskgate.postChat({ model: 'model-0', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('engine_connection_closed');
    expect(primary.requests.length + secondary.requests.length - before).toBe(1);
    expect(await taskgate.traceOf(response.headers.get('x-request-id'))).toMatchObject({
      httpStatus: 502,
      errorClass: 'engine_connection_closed',
      attempts: null,
    });
  });

  it('fails a stream before its head with a proper status', async () => {
    solo.script({ kind: 'status', status: 500, body: { error: { message: 'nope' } } });
    const error = await ask('model-2', { stream: true }).catch((caught: unknown) => caught);
    expect((error as APIError).status).toBe(502);
  });
});

describe('errors after the head', () => {
  it('ends the stream with an error event, never a clean close, and traces a failure', async () => {
    solo.script({ kind: 'stream', pieces: ['one ', 'two ', 'three'], errorAfter: 2 });
    const response = await taskgate.postChat({ model: 'model-2', messages: [{ role: 'user', content: 'hi' }], stream: true });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('event: error');
    expect(text).not.toContain('[DONE]');
    expect(await taskgate.traceOf(response.headers.get('x-request-id'))).toMatchObject({ status: 'error', httpStatus: 200, stream: true });

    solo.script({ kind: 'stream', pieces: ['one ', 'two ', 'three'], errorAfter: 2 });
    const stream = await ask('model-2', { stream: true });
    const consume = async () => {
      for await (const chunk of stream as unknown as AsyncIterable<unknown>) void chunk;
    };
    await expect(consume()).rejects.toBeInstanceOf(OpenAI.APIError);
  });

  it('ends with an error event when the engine drops the connection mid-stream', async () => {
    solo.script({ kind: 'stream', pieces: ['a', 'b', 'c'], gapMs: 50, dropAfter: 2 });
    const response = await taskgate.postChat({ model: 'model-2', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const text = await response.text();
    expect(text).toContain('event: error');
    expect(text).not.toContain('[DONE]');
  });

  it('times out a stream that goes quiet for longer than idle_timeout_ms, pinging meanwhile', async () => {
    solo.script({ kind: 'stream', pieces: ['start', 'never'], gapMs: 1_500 });
    const response = await taskgate.postChat({ model: 'model-2', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const text = await response.text();
    expect(text).toContain(': ping');
    expect(text).toContain('engine_timeout');
    expect(text).not.toContain('[DONE]');
  });
});

describe('client aborts', () => {
  it('a client that goes away mid-stream cancels the upstream call and is traced as aborted', async () => {
    solo.script({ kind: 'stream', pieces: Array.from({ length: 50 }, (_, index) => `piece ${index} `), gapMs: 100 });
    const abortsBefore = solo.abortedRequests;
    const controller = new AbortController();
    const response = await taskgate.postChat(
      { model: 'model-2', messages: [{ role: 'user', content: 'hi' }], stream: true },
      { signal: controller.signal },
    );
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    for (let attempt = 0; attempt < 40 && solo.abortedRequests === abortsBefore; attempt++) await sleep(50);
    expect(solo.abortedRequests).toBe(abortsBefore + 1);
    await sleep(100);
    expect(await taskgate.traceOf(response.headers.get('x-request-id'))).toMatchObject({ status: 'aborted', errorClass: 'client_closed' });
  });

  it('a client that goes away before a non-streamed reply cancels the upstream call', async () => {
    solo.script({ kind: 'reply', content: 'late', delayMs: 600 });
    const abortsBefore = solo.abortedRequests;
    const controller = new AbortController();
    const pending = taskgate
      .postChat({ model: 'model-2', messages: [{ role: 'user', content: 'hi' }] }, { signal: controller.signal })
      .catch(() => undefined);
    await sleep(150);
    controller.abort();
    await pending;
    for (let attempt = 0; attempt < 40 && solo.abortedRequests === abortsBefore; attempt++) await sleep(50);
    expect(solo.abortedRequests).toBe(abortsBefore + 1);
  });
});
