/**
 * Token limits through the real server with the stock client: tokens per
 * minute per key (prompt plus completion), refused at admission once spent,
 * the `x-ratelimit-*-tokens` headers, and the key fields that set them. The
 * shared (Redis) version of the same is in `shared-limits.test.ts`.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { engineConfig, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

let engine: ScriptedEngine;
let taskgate: TestGateway;
/** A gateway whose config gives every key 100000 tokens per minute unless the key says otherwise. */
let withDefault: TestGateway;

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});
const ask = { model: 'model-0', messages: [{ role: 'user' as const, content: 'hi' }] };

beforeAll(async () => {
  engine = await startScriptedEngine();
  taskgate = await startTestGateway(engineConfig([engine.baseUrl]));
  withDefault = await startTestGateway(engineConfig([engine.baseUrl], { extra: 'limits:\n  tokens_per_minute: 100000\n' }));
});
afterAll(async () => {
  await taskgate.stop();
  await withDefault.stop();
  await engine.close();
});

function tokenHeaders(response: Response) {
  return {
    limit: response.headers.get('x-ratelimit-limit-tokens'),
    remaining: response.headers.get('x-ratelimit-remaining-tokens'),
    reset: response.headers.get('x-ratelimit-reset-tokens'),
  };
}

describe('token limits', () => {
  it('counts prompt and completion tokens, reports them in the headers, and refuses once the budget is spent', async () => {
    // 12 tokens a minute (5 s a token) and 10 requests (6 s a request): nothing refills while the test runs.
    const key = await taskgate.createKey({ tokensPerMinute: 12, requestsPerMinute: 10 });
    const client = taskgate.client(key.text);
    engine.script({ kind: 'reply', content: 'ok', usage: usage(4, 2) });

    const first = await client.chat.completions.create(ask).withResponse();
    expect(tokenHeaders(first.response)).toEqual({ limit: '12', remaining: '12', reset: '0' });
    expect(first.response.headers.get('x-ratelimit-limit-requests')).toBe('10');

    const second = await client.chat.completions.create(ask).withResponse();
    const headers = tokenHeaders(second.response);
    expect(headers).toMatchObject({ limit: '12', remaining: '6' });
    // 6 tokens at 5 s: full again within 30 s.
    expect(Number(headers.reset)).toBeGreaterThan(25);
    expect(Number(headers.reset)).toBeLessThanOrEqual(30);

    // 12 spent: not one token left, so the next call is refused before it reaches the engine.
    const served = engine.requests.length;
    const refused = await taskgate.postChat(ask, { key: key.text });
    expect(refused.status).toBe(429);
    expect(engine.requests.length).toBe(served);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(tokenHeaders(refused)).toMatchObject({ limit: '12', remaining: '0' });
    // A call refused for tokens took no request.
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('8');
    const body = (await refused.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(body.error.message).toContain('12 tokens per minute');
    expect(await taskgate.traceOf(refused.headers.get('x-request-id'))).toMatchObject({
      httpStatus: 429,
      errorClass: 'rate_limit_exceeded',
    });

    await expect(client.chat.completions.create(ask)).rejects.toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('lets the budget go below zero: one big call delays the next ones', async () => {
    const key = await taskgate.createKey({ tokensPerMinute: 100 });
    engine.script({ kind: 'reply', content: 'long', usage: usage(100, 150) });
    const big = await taskgate.postChat(ask, { key: key.text });
    expect(big.status).toBe(200);
    const refused = await taskgate.postChat(ask, { key: key.text });
    expect(refused.status).toBe(429);
    // 250 tokens of a 100-token budget (600 ms a token): 150 s until it is full, 90.6 s until one token fits.
    expect(Number(refused.headers.get('x-ratelimit-reset-tokens'))).toBeGreaterThan(140);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(80);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(91);
  });

  it('puts the token headers on a streamed head, and spends a stream’s tokens once it ends', async () => {
    const key = await taskgate.createKey({ tokensPerMinute: 10 });
    const client = taskgate.client(key.text);
    engine.script({ kind: 'reply', content: 'streamed words', usage: usage(3, 1) });
    const { data: stream, response } = await client.chat.completions.create({ ...ask, stream: true }).withResponse();
    expect(tokenHeaders(response)).toMatchObject({ limit: '10', remaining: '10' });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('streamed words');

    const next = await client.chat.completions.create(ask).withResponse();
    expect(tokenHeaders(next.response)).toMatchObject({ limit: '10', remaining: '6' });
  });

  it('gives a key without a token limit no token headers', async () => {
    engine.script({ kind: 'reply', content: 'ok' });
    const key = await taskgate.createKey();
    const response = await taskgate.postChat(ask, { key: key.text });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('600');
    expect(tokenHeaders(response)).toEqual({ limit: null, remaining: null, reset: null });
  });

  it('applies limits.tokens_per_minute to keys without their own, and a key’s own over it', async () => {
    engine.script({ kind: 'reply', content: 'ok', usage: usage(3, 2) });
    const inheriting = await withDefault.createKey();
    const own = await withDefault.createKey({ tokensPerMinute: 10 });
    expect(tokenHeaders(await withDefault.postChat(ask, { key: inheriting.text }))).toMatchObject({ limit: '100000', remaining: '100000' });
    expect(tokenHeaders(await withDefault.postChat(ask, { key: own.text }))).toMatchObject({ limit: '10', remaining: '10' });
    // Every authenticated reply of such a key carries them, not only calls.
    const models = await fetch(`${withDefault.baseUrl}/models`, { headers: { authorization: `Bearer ${own.text}` } });
    expect(models.status).toBe(200);
    expect(tokenHeaders(models)).toMatchObject({ limit: '10', remaining: '5' });
  });
});

describe('keys with their own limits', () => {
  const post = (body: unknown) =>
    fetch(`${taskgate.baseUrl}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${taskgate.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('POST /v1/keys takes requests_per_minute and tokens_per_minute, and the key views show both', async () => {
    const created = await post({ name: 'limited', requests_per_minute: 30, tokens_per_minute: 20_000 });
    expect(created.status).toBe(201);
    const key = (await created.json()) as { id: string; key: string; requests_per_minute: number; tokens_per_minute: number };
    expect(key).toMatchObject({ requests_per_minute: 30, tokens_per_minute: 20_000 });
    const listed = (await (
      await fetch(`${taskgate.baseUrl}/keys?limit=100`, { headers: { authorization: `Bearer ${taskgate.adminKey}` } })
    ).json()) as { data: Array<Record<string, unknown>> };
    expect(listed.data.find((entry) => entry.id === key.id)).toMatchObject({ requests_per_minute: 30, tokens_per_minute: 20_000 });
    const defaults = (await (await post({ name: 'defaults' })).json()) as Record<string, unknown>;
    expect(defaults).toMatchObject({ requests_per_minute: null, tokens_per_minute: null });

    engine.script({ kind: 'reply', content: 'ok' });
    const response = await taskgate.postChat(ask, { key: key.key });
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('30');
    expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('20000');
  });

  it.each([
    ['tokens_per_minute', 0],
    ['tokens_per_minute', 1.5],
    ['tokens_per_minute', '1000'],
    ['tokens_per_minute', 2_000_000_000],
    ['requests_per_minute', -1],
    ['requests_per_minute', 'fast'],
  ])('refuses %s = %j with a 400 naming the field', async (field, value) => {
    const response = await post({ [field]: value });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { param: string; message: string } };
    expect(body.error.param).toBe(field);
    expect(body.error.message).toContain(field);
  });
});
