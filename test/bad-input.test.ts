/**
 * Every bad input the gateway issue lists gets its status and a clear
 * OpenAI-shaped error naming the problem; none is a 5xx, none crashes the
 * process, and every one after authentication leaves a trace.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { ADMIN_KEY, engineConfig, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

let engine: ScriptedEngine;
let taskgate: TestGateway;

beforeAll(async () => {
  engine = await startScriptedEngine();
  taskgate = await startTestGateway(engineConfig([engine.baseUrl], { extra: 'limits: { max_body_bytes: 65536 }' }));
});
afterAll(async () => {
  await taskgate.stop();
  await engine.close();
});

interface Attempt {
  status: number;
  body: { error?: { message: string; type: string; param: string | null; code: string } };
  headers: Headers;
}

async function post(
  body: string | undefined,
  headers: Record<string, string> = {},
  method = 'POST',
  path = '/chat/completions',
): Promise<Attempt> {
  const response = await fetch(`${taskgate.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Attempt['body']), headers: response.headers };
}

const message = [{ role: 'user', content: 'hi' }];
const valid = { model: 'model-0', messages: message };
const json = (value: unknown) => JSON.stringify(value);

const badBodies: Array<[string, string | undefined, number, string | null, RegExp]> = [
  ['malformed JSON', '{"model": "model-0",', 400, null, /JSON/i],
  ['empty body', '', 400, null, /empty/i],
  ['top-level array', '[1,2]', 400, null, /object/i],
  ['missing model', json({ messages: message }), 400, 'model', /model/],
  ['non-string model', json({ model: 42, messages: message }), 400, 'model', /model/],
  ['missing messages', json({ model: 'model-0' }), 400, 'messages', /messages/],
  ['empty messages', json({ model: 'model-0', messages: [] }), 400, 'messages', /messages/],
  ['unknown role', json({ model: 'model-0', messages: [{ role: 'wizard', content: 'x' }] }), 400, 'messages[0].role', /role/],
  ['numeric content', json({ model: 'model-0', messages: [{ role: 'user', content: 5 }] }), 400, 'messages[0].content', /content/],
  [
    'tool message without tool_call_id',
    json({ model: 'model-0', messages: [...message, { role: 'tool', content: 'x' }] }),
    400,
    'messages[1].tool_call_id',
    /tool_call_id/,
  ],
  ['unknown top-level field', json({ ...valid, frobnicate: true }), 400, 'frobnicate', /frobnicate/],
  ['temperature 5', json({ ...valid, temperature: 5 }), 400, 'temperature', /temperature/],
  ['top_p 2', json({ ...valid, top_p: 2 }), 400, 'top_p', /top_p/],
  ['max_tokens -1', json({ ...valid, max_tokens: -1 }), 400, 'max_tokens', /max_tokens/],
  ['max_tokens 1.5', json({ ...valid, max_tokens: 1.5 }), 400, 'max_tokens', /max_tokens/],
  [
    'max_tokens 1e400',
    '{"model":"model-0","messages":[{"role":"user","content":"hi"}],"max_tokens":1e400}',
    400,
    'max_tokens',
    /max_tokens/,
  ],
  ['stop with 5 entries', json({ ...valid, stop: ['a', 'b', 'c', 'd', 'e'] }), 400, 'stop', /stop/],
  [
    'metadata with 17 pairs',
    json({ ...valid, metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v'])) }),
    400,
    'metadata',
    /16/,
  ],
  ['metadata with a non-string value', json({ ...valid, metadata: { count: 3 } }), 400, 'metadata.count', /string/],
  ['task not matching its pattern', json({ ...valid, task: 'Not Valid!' }), 400, 'task', /task/],
  ['task of 10k characters', json({ ...valid, task: 'a'.repeat(10_000) }), 400, 'task', /task/],
  ['stream as the string "true"', json({ ...valid, stream: 'true' }), 400, 'stream', /stream/],
  ['stream_options without stream', json({ ...valid, stream_options: { include_usage: true } }), 400, 'stream_options', /stream/],
  [
    'JSON nested 10,000 deep',
    `{"model":"model-0","messages":[{"role":"user","content":"hi"}],"metadata":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
    400,
    null,
    /./,
  ],
  [
    'a top-level __proto__ key',
    '{"model":"model-0","messages":[{"role":"user","content":"hi"}],"__proto__":{"polluted":true}}',
    400,
    '__proto__',
    /__proto__/,
  ],
];

describe('bad request bodies', () => {
  it.each(badBodies)('%s → %i naming the problem', async (_name, body, status, param, pattern) => {
    const attempt = await post(body);
    expect(attempt.status).toBe(status);
    expect(attempt.body.error?.type).toBe('invalid_request_error');
    if (param !== null) expect(attempt.body.error?.param).toBe(param);
    expect(attempt.body.error?.message).toMatch(pattern);
    expect(attempt.headers.get('x-request-id')).toMatch(/^req_/);
    expect(attempt.headers.get('x-ratelimit-limit-requests')).not.toBeNull();
  });

  it('unknown model → 404 naming the model', async () => {
    const attempt = await post(json({ ...valid, model: 'no-such-model' }));
    expect(attempt.status).toBe(404);
    expect(attempt.body.error).toMatchObject({ param: 'model', code: 'model_not_found' });
    expect(attempt.body.error?.message).toContain('no-such-model');
  });

  it('never merges __proto__ into objects', async () => {
    const attempt = await post('{"model":"model-0","messages":[{"role":"user","content":"hi"}],"metadata":{"__proto__":"x"}}');
    expect(attempt.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('stores NUL characters in content instead of failing', async () => {
    const attempt = await post(json({ model: 'model-0', messages: [{ role: 'user', content: 'before\u0000after' }] }));
    expect(attempt.status).toBe(200);
    const trace = await taskgate.traceOf(attempt.headers.get('x-request-id'));
    expect(trace?.requestBody).toContain('before\\u0000after');
  });

  it.each([
    ['a project slug of ../', { 'x-taskgate-project': '../' }, 'x-taskgate-project'],
    ['an upper-case project slug', { 'x-taskgate-project': 'Shop' }, 'x-taskgate-project'],
    ['a 10k-character workload name', { 'x-taskgate-workload': 'w'.repeat(10_000) }, 'x-taskgate-workload'],
    ['a workload with a slash', { 'x-taskgate-workload': 'a/b' }, 'x-taskgate-workload'],
  ])('%s → 400 naming the header', async (_name, headers, param) => {
    const attempt = await post(json(valid), headers);
    expect(attempt.status).toBe(400);
    expect(attempt.body.error?.param).toBe(param);
  });
});

describe('bad requests at the HTTP level', () => {
  it('wrong content type → 415', async () => {
    const attempt = await post('model=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(attempt.status).toBe(415);
    expect(attempt.body.error?.message).toContain('application/json');
  });

  it('GET on the endpoint → 405 with Allow', async () => {
    const attempt = await post(undefined, {}, 'GET');
    expect(attempt.status).toBe(405);
    expect(attempt.headers.get('allow')).toBe('POST');
  });

  it('an unknown path → 404', async () => {
    const attempt = await post(json(valid), {}, 'POST', '/chat/complete');
    expect(attempt.status).toBe(404);
    expect(attempt.body.error?.code).toBe('unknown_path');
  });

  it('a body over the limit → 413, refused before the whole body is sent', async () => {
    const declaredBytes = 50 * 1024 * 1024;
    const result = await new Promise<{ status: number; sentBytes: number }>((resolve, reject) => {
      let sentBytes = 0;
      const outgoing = httpRequest(`${taskgate.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', 'content-length': declaredBytes },
      });
      outgoing.on('response', (response) => {
        response.resume();
        resolve({ status: response.statusCode ?? 0, sentBytes });
        outgoing.destroy();
      });
      outgoing.on('error', (error) => (sentBytes > 0 ? undefined : reject(error)));
      const piece = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (sentBytes < declaredBytes && !outgoing.destroyed) {
          sentBytes += piece.length;
          if (!outgoing.write(piece)) return void outgoing.once('drain', pump);
        }
      };
      pump();
    });
    expect(result.status).toBe(413);
    expect(result.sentBytes).toBeLessThan(declaredBytes);
  });

  it('a chunked body over the limit → 413', async () => {
    const big = JSON.stringify({ model: 'model-0', messages: [{ role: 'user', content: 'x'.repeat(100_000) }] });
    const response = await fetch(`${taskgate.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
  });

  it('leaves a trace for every authenticated bad call, and still serves afterwards', async () => {
    const attempt = await post(json({ ...valid, temperature: 5 }));
    const trace = await taskgate.traceOf(attempt.headers.get('x-request-id'));
    expect(trace).toMatchObject({ status: 'error', httpStatus: 400, errorClass: expect.any(String) });
    expect((await post(json(valid))).status).toBe(200);
  });
});
