/**
 * What every reply carries, as docs/api.md ("Headers") promises it:
 * `x-request-id` on every reply of every endpoint, errors included; the scope headers on every
 * reply of the chat endpoint: the scope the call was counted against, or,
 * refused before its body was read (401, 413, 415, 429, a body that is not
 * JSON), the one its headers give (a 401 counts nothing, it only echoes);
 * and `Server-Timing` (the gateway's own time and the wait on the engine) on
 * every reply of `POST /v1/chat/completions`, streams and errors included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { ADMIN_KEY, engineConfig, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

let engine: ScriptedEngine;
let taskgate: TestGateway;
let limitedKey: string;

beforeAll(async () => {
  engine = await startScriptedEngine();
  taskgate = await startTestGateway(engineConfig([engine.baseUrl], { extra: `limits: { max_body_bytes: ${maxBodyBytes} }` }));
  limitedKey = (await taskgate.createKey({ requestsPerMinute: 1 })).text;
  engine.script({ kind: 'reply', content: 'ok' });
});
afterAll(async () => {
  await taskgate?.stop();
  await engine?.close();
});

const maxBodyBytes = 4096;
const scoped = { 'x-taskgate-project': 'shop', 'x-taskgate-workload': 'summarise' };
const chatBody = JSON.stringify({ model: 'model-0', messages: [{ role: 'user', content: 'Hi' }] });
/** Too large, and naming a workload the call cannot be counted against: it is never read. */
const hugeBody = JSON.stringify({ model: 'model-0', task: 'unread', messages: [{ role: 'user', content: 'x'.repeat(maxBodyBytes) }] });

function chat(options: {
  body?: string;
  key?: string | null;
  contentType?: string;
  method?: string;
  scope?: Record<string, string>;
}): Promise<Response> {
  const headers: Record<string, string> = { ...(options.scope ?? scoped), 'content-type': options.contentType ?? 'application/json' };
  if (options.key !== null) headers.authorization = `Bearer ${options.key ?? ADMIN_KEY}`;
  return fetch(`${taskgate.baseUrl}/chat/completions`, {
    method: options.method ?? 'POST',
    headers,
    body: options.method === 'GET' ? undefined : (options.body ?? chatBody),
  });
}

function expectRequestId(response: Response): void {
  expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9a-z]{9}[0-9a-f]{16}$/);
}

/** The scope a reply says the call was counted against. */
function scopeOf(response: Response): { project: string | null; workload: string | null } {
  return { project: response.headers.get('x-taskgate-project'), workload: response.headers.get('x-taskgate-workload') };
}

/** `gateway;dur=…, upstream;dur=…`, returned as numbers. */
function serverTiming(response: Response): { gateway: number; upstream: number } {
  const match = /^gateway;dur=(\d+(?:\.\d+)?), upstream;dur=(\d+(?:\.\d+)?)$/.exec(response.headers.get('server-timing') ?? '');
  expect(match, `server-timing: ${response.headers.get('server-timing')}`).not.toBeNull();
  return { gateway: Number(match![1]), upstream: Number(match![2]) };
}

describe('chat replies', () => {
  it.each([
    ['200', () => chat({}), 200],
    ['400 for a bad field', () => chat({ body: JSON.stringify({ model: 'model-0', messages: [], temperature: 5 }) }), 400],
    ['404 for an unknown model', () => chat({ body: JSON.stringify({ model: 'nope', messages: [{ role: 'user', content: 'Hi' }] }) }), 404],
  ] as const)('carry the request id and the scope once the body is read: %s', async (_name, send, status) => {
    const response = await send();
    expect(response.status).toBe(status);
    expectRequestId(response);
    expect(scopeOf(response)).toEqual({ project: 'shop', workload: 'summarise' });
    const timing = serverTiming(response);
    // Only the 200 reached the engine.
    if (status === 200) expect(timing.upstream).toBeGreaterThan(0);
    else expect(timing.upstream).toBe(0);
  });

  it.each([
    ['415 for another content type', (scope?: Record<string, string>) => chat({ contentType: 'text/plain', scope }), 415],
    ['400 for a body that is not JSON', (scope?: Record<string, string>) => chat({ body: '{"model": ', scope }), 400],
    ['413 for a body over limits.max_body_bytes', (scope?: Record<string, string>) => chat({ body: hugeBody, scope }), 413],
  ] as const)(
    'carry the scope their headers give, and count the call against it, when refused before the body is read: %s',
    async (_name, send, status) => {
      const response = await send();
      expect(response.status).toBe(status);
      expectRequestId(response);
      expect(scopeOf(response)).toEqual({ project: 'shop', workload: 'summarise' });
      expect(serverTiming(response).upstream).toBe(0);
      expect(await taskgate.traceOf(response.headers.get('x-request-id'))).toMatchObject({
        project: 'shop',
        workload: 'summarise',
        httpStatus: status,
      });

      // No scope header: the defaults, as for any call that names no workload.
      const unscoped = await send({});
      expect(unscoped.status).toBe(status);
      expect(scopeOf(unscoped)).toEqual({ project: 'default', workload: 'main' });
      expect(await taskgate.traceOf(unscoped.headers.get('x-request-id'))).toMatchObject({ project: 'default', workload: 'main' });

      // Only the workload given: the project's default beside it.
      const workloadOnly = await send({ 'x-taskgate-workload': 'summarise' });
      expect([workloadOnly.headers.get('x-taskgate-project'), workloadOnly.headers.get('x-taskgate-workload')]).toEqual([
        'default',
        'summarise',
      ]);
    },
  );

  it("carry no scope while a scope header is malformed: the body's problem is named first, the header's once the body can be read", async () => {
    const malformed = { 'x-taskgate-project': 'Shop!', 'x-taskgate-workload': 'summarise' };
    const unsupported = await chat({ contentType: 'text/plain', scope: malformed });
    expect(unsupported.status).toBe(415);
    expect(unsupported.headers.get('x-taskgate-project')).toBeNull();
    expect(unsupported.headers.get('x-taskgate-workload')).toBeNull();
    expect(await taskgate.traceOf(unsupported.headers.get('x-request-id'))).toMatchObject({ project: null, workload: null });
    const named = await chat({ scope: malformed });
    expect(named.status).toBe(400);
    expect(((await named.json()) as { error: { param: string } }).error.param).toBe('x-taskgate-project');
    expect(named.headers.get('x-taskgate-project')).toBeNull();
  });

  it.each([
    ['401 without a key', () => chat({ key: null }), 401],
    ['401 with an unknown key', () => chat({ key: 'tg_live_unknown' }), 401],
  ] as const)('echo the scope their headers give, counting nothing: %s', async (_name, send, status) => {
    const before = (await taskgate.traces()).length;
    const response = await send();
    expect(response.status).toBe(status);
    expectRequestId(response);
    expect(scopeOf(response)).toEqual({ project: 'shop', workload: 'summarise' });
    expect(serverTiming(response).upstream).toBe(0);
    expect(await taskgate.traceOf(response.headers.get('x-request-id'))).toBeUndefined();
    expect((await taskgate.traces()).length).toBe(before);
  });

  it('carry the request id but no scope on a 405, which the chat handler never sees', async () => {
    const response = await chat({ method: 'GET' });
    expect(response.status).toBe(405);
    expectRequestId(response);
    expect(response.headers.get('x-taskgate-project')).toBeNull();
  });

  it("carry the request id, rate-limit headers and the headers' scope on a 429, refused before the body is read", async () => {
    expect((await chat({ key: limitedKey })).status).toBe(200);
    const limited = await chat({ key: limitedKey });
    expect(limited.status).toBe(429);
    expectRequestId(limited);
    expect(limited.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(scopeOf(limited)).toEqual({ project: 'shop', workload: 'summarise' });
    expect(serverTiming(limited).upstream).toBe(0);
    expect(await taskgate.traceOf(limited.headers.get('x-request-id'))).toMatchObject({
      project: 'shop',
      workload: 'summarise',
      httpStatus: 429,
    });
  });

  it('carry Server-Timing on a stream (upstream: the wait for the first chunk, which comes 150 ms late) and on an engine error', async () => {
    engine.scriptNext({ kind: 'stream', pieces: ['a', 'b'], firstChunkDelayMs: 150, gapMs: 100 });
    const started = performance.now();
    const stream = await chat({ body: JSON.stringify({ model: 'model-0', stream: true, messages: [{ role: 'user', content: 'Hi' }] }) });
    const headAfterMs = performance.now() - started;
    expect(stream.status).toBe(200);
    const timing = serverTiming(stream);
    expect(timing.upstream).toBeGreaterThanOrEqual(140);
    // The head left before the last piece was generated: its timing covers the first chunk only.
    expect(timing.gateway + timing.upstream).toBeLessThanOrEqual(headAfterMs);
    await stream.text();

    engine.scriptNext({ kind: 'status', status: 400, body: { error: { message: 'context length exceeded' } } });
    const failed = await chat({});
    expect(failed.status).toBe(400);
    expect(serverTiming(failed).upstream).toBeGreaterThan(0);
  });

  it("count the gateway's own time in taskgate_gateway_overhead_seconds", async () => {
    const metrics = await fetch(`${taskgate.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const text = await metrics.text();
    const count = (stream: string) =>
      Number(new RegExp(`^taskgate_gateway_overhead_seconds_count\\{stream="${stream}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    expect(count('false')).toBeGreaterThanOrEqual(10);
    expect(count('true')).toBeGreaterThanOrEqual(1);
  });
});

describe('every other endpoint', () => {
  const authorized = { authorization: `Bearer ${ADMIN_KEY}` };
  it.each([
    ['GET', '/v1/models', authorized, 200],
    ['GET', '/v1/models', {}, 401],
    ['GET', '/v1/projects', authorized, 200],
    ['GET', '/v1/projects/shop/workloads', authorized, 200],
    ['GET', '/v1/projects/shop/workloads/summarise', authorized, 200],
    ['GET', '/v1/projects/shop/workloads/summarise/traces', authorized, 200],
    ['GET', '/v1/projects/nowhere/workloads/summarise/routes', authorized, 404],
    ['GET', '/v1/traces/req_unknown', authorized, 404],
    ['GET', '/v1/keys', authorized, 200],
    ['DELETE', '/v1/keys', authorized, 405],
    ['GET', '/healthz', {}, 200],
    ['GET', '/readyz', {}, 200],
    ['GET', '/metrics', {}, 401],
    ['GET', '/metrics', authorized, 200],
    ['GET', '/dashboard', {}, 303],
    ['GET', '/dashboard/login', {}, 200],
    ['GET', '/nowhere', {}, 404],
  ] as const)('%s %s (%j) answers %i with a request id', async (method, path, headers, status) => {
    const response = await fetch(`${taskgate.origin}${path}`, { method, headers, redirect: 'manual' });
    expect(response.status).toBe(status);
    expectRequestId(response);
  });
});
