/** SIGTERM under load: calls in flight finish, nothing new is accepted, every call has its trace, exit 0. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { serveTaskgate } from './helpers/taskgate-process.js';
import { engineConfig } from './helpers/test-gateway.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

const adminKey = 'tg_live_shutdown_test_admin_key_0123456789';
let engine: ScriptedEngine;

beforeAll(async () => {
  engine = await startScriptedEngine();
});
afterAll(() => engine.close());

it('finishes calls in flight on SIGTERM, loses no trace and exits 0', async () => {
  const directory = temporaryDirectory('taskgate-shutdown-');
  const configPath = join(directory, 'taskgate.yaml');
  writeFileSync(configPath, engineConfig([engine.baseUrl]));
  const server = await serveTaskgate(['--config', configPath, '--data-dir', directory], { TASKGATE_ADMIN_KEY: adminKey });

  engine.script((body) =>
    body.stream === true ? { kind: 'stream', pieces: ['a', 'b', 'c', 'd'], gapMs: 100 } : { kind: 'reply', content: 'done', delayMs: 400 },
  );
  const calls = 40;
  const before = engine.requests.length;
  const results = Array.from({ length: calls }, (_, index) =>
    fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'model-0', messages: [{ role: 'user', content: `call ${index}` }], stream: index % 2 === 0 }),
    }).then(async (response) => ({ status: response.status, text: await response.text() })),
  );
  for (let attempt = 0; attempt < 100 && engine.requests.length - before < calls; attempt++) await sleep(20);
  expect(engine.requests.length - before).toBe(calls);

  server.child.kill('SIGTERM');
  const settled = await Promise.all(results);
  expect(await server.exited).toBe(0);
  expect(settled.map((result) => result.status)).toEqual(Array(calls).fill(200));
  expect(settled.filter((_, index) => index % 2 === 0).every((result) => result.text.trimEnd().endsWith('data: [DONE]'))).toBe(true);

  // After the stop, new connections are refused.
  await expect(fetch(`${server.baseUrl}/models`)).rejects.toThrow();

  const store = createSqliteStore({ path: join(directory, 'taskgate.db') });
  const account = await store.accounts.ensureAccount('default');
  expect(await store.traces.count(account.id, { status: 'ok' })).toBe(calls);
  await store.close();
});

it('kill -9 loses at most the traces of the last flush window (traces.flush_interval_ms)', async () => {
  const directory = temporaryDirectory('taskgate-sigkill-');
  const configPath = join(directory, 'taskgate.yaml');
  writeFileSync(configPath, `${engineConfig([engine.baseUrl])}\ntraces: { flush_interval_ms: 20 }\n`);
  const server = await serveTaskgate(['--config', configPath, '--data-dir', directory], { TASKGATE_ADMIN_KEY: adminKey });
  engine.script({ kind: 'reply', content: 'ok' });

  const answered: string[] = [];
  for (let index = 0; index < 30; index++) {
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'model-0', messages: [{ role: 'user', content: `call ${index}` }] }),
    });
    expect(response.status).toBe(200);
    answered.push(response.headers.get('x-request-id') as string);
  }
  // Well past the window: every answered call's trace is on disk, so the kill loses none.
  await sleep(500);
  server.child.kill('SIGKILL');
  await server.exited;

  const store = createSqliteStore({ path: join(directory, 'taskgate.db') });
  const account = await store.accounts.ensureAccount('default');
  const stored = await store.traces.list(account.id, {}, { limit: 100 });
  expect(stored.items.map((trace) => trace.requestId).sort()).toEqual([...answered].sort());
  await store.close();
});
