/** Keys, roles and request rates through the real server. */
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { engineConfig, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

let engine: ScriptedEngine;
let taskgate: TestGateway;

beforeAll(async () => {
  engine = await startScriptedEngine();
  taskgate = await startTestGateway(engineConfig([engine.baseUrl]));
});
afterAll(async () => {
  await taskgate.stop();
  await engine.close();
});

function call(authorization: string | undefined) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  return fetch(`${taskgate.baseUrl}/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'model-0', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

describe('authentication', () => {
  it('answers every kind of bad key with one identical 401', async () => {
    const revoked = await taskgate.createKey();
    const revoke = await fetch(`${taskgate.baseUrl}/keys/${revoked.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${taskgate.adminKey}` },
    });
    expect(revoke.status).toBe(200);

    const attempts = [undefined, 'Basic dXNlcjpwYXNz', 'Bearer ', 'Bearer', `Bearer tg_live_${'x'.repeat(43)}`, `Bearer ${revoked.text}`];
    const bodies = new Set<string>();
    for (const authorization of attempts) {
      const response = await call(authorization);
      expect(response.status).toBe(401);
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
      bodies.add(await response.text());
    }
    expect(bodies.size).toBe(1);
    expect(JSON.parse([...bodies][0] as string)).toMatchObject({ error: { type: 'authentication_error', code: 'invalid_api_key' } });
  });

  it('the stock client surfaces a 401 as AuthenticationError', async () => {
    await expect(
      taskgate.client('tg_live_nope').chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('a key revoked through the API stops working at once, and within a second when revoked from another process', async () => {
    const key = await taskgate.createKey();
    expect((await call(`Bearer ${key.text}`)).status).toBe(200);
    // As `taskgate keys revoke` does: straight in the store, not through this server.
    const account = await taskgate.gateway.store.accounts.ensureAccount('default');
    await taskgate.gateway.store.accounts.revokeKey(account.id, key.id, Date.now());
    await sleep(1_000);
    expect((await call(`Bearer ${key.text}`)).status).toBe(401);
  });

  it('inference keys cannot manage keys (403); admin keys can', async () => {
    const inference = await taskgate.createKey({ role: 'inference' });
    const refused = await fetch(`${taskgate.baseUrl}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${inference.text}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe('permission_error');

    const created = await fetch(`${taskgate.baseUrl}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${taskgate.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ environment: 'staging', name: 'ci', requests_per_minute: 5 }),
    });
    expect(created.status).toBe(201);
    const key = (await created.json()) as { key: string; id: string; environment: string; requests_per_minute: number };
    expect(key).toMatchObject({ environment: 'staging', requests_per_minute: 5 });
    expect(key.key).toMatch(/^tg_test_[A-Za-z0-9_-]{43}$/);
    const listed = await fetch(`${taskgate.baseUrl}/keys`, { headers: { authorization: `Bearer ${taskgate.adminKey}` } });
    const listText = await listed.text();
    expect(listText).toContain(key.id);
    expect(listText).not.toContain(key.key);
  });

  it('never writes a key, an Authorization header or a prompt into a log line', async () => {
    const secretPrompt = 'my-secret-prompt-text-4471';
    engine.script({ kind: 'status', status: 500, body: { error: { message: 'boom' } } });
    await call(`Bearer ${taskgate.adminKey}`);
    await taskgate.postChat({ model: 'model-0', messages: [{ role: 'user', content: secretPrompt }] });
    engine.script({ kind: 'reply', content: 'ok' });
    const logs = taskgate.logLines.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(taskgate.adminKey);
    expect(logs).not.toContain(secretPrompt);
    expect(logs.toLowerCase()).not.toContain('bearer');
  });
});

describe('rate limits', () => {
  it('refuses past the per-key rate with 429, retry-after and the OpenAI error body, and traces it', async () => {
    const key = await taskgate.createKey({ requestsPerMinute: 3 });
    const statuses = [];
    let last: Response | undefined;
    for (let index = 0; index < 4; index++) {
      last = await call(`Bearer ${key.text}`);
      statuses.push(last.status);
      if (index < 3) expect(Number(last.headers.get('x-ratelimit-remaining-requests'))).toBe(2 - index);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(last?.headers.get('x-ratelimit-limit-requests')).toBe('3');
    expect(last?.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(Number(last?.headers.get('x-ratelimit-reset-requests'))).toBeGreaterThan(59);
    const body = (await last?.json()) as { error: { type: string; code: string } };
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    const refused = await taskgate.traceOf(last?.headers.get('x-request-id') ?? null);
    expect(refused).toMatchObject({ httpStatus: 429, errorClass: 'rate_limit_exceeded' });
  });

  it('the stock client sees RateLimitError', async () => {
    const key = await taskgate.createKey({ requestsPerMinute: 1 });
    const client = taskgate.client(key.text);
    await client.chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'x' }] });
    await expect(client.chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      OpenAI.RateLimitError,
    );
  });

  it('puts the rate-limit headers on a streamed head too', async () => {
    const key = await taskgate.createKey({ requestsPerMinute: 7 });
    const response = await taskgate.postChat(
      { model: 'model-0', messages: [{ role: 'user', content: 'x' }], stream: true },
      { key: key.text },
    );
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('7');
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('6');
    await response.text();
  });
});
