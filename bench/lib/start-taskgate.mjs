/**
 * taskgate itself, started from dist/ with a fresh config and data directory
 * (tracing on, with bodies, as in production), and the traces it stored.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { hasExited, keepTail, freePort, startChild, stopChild } from './child-processes.mjs';
import { taskgateEntry } from './repository-paths.mjs';

/**
 * @param {{ directory: string, mockUrl: string, gapMockUrl: string, cpuProfileDirectory?: string }} setup
 */
export async function startTaskgate({ directory, mockUrl, gapMockUrl, cpuProfileDirectory }) {
  // Limits so high the rate limiter never refuses; tracing on, with bodies, as in production.
  const config = `server:
  host: 127.0.0.1
  shutdown_timeout_ms: 2000
engines:
  - id: mock
    type: openai
    base_url: ${mockUrl}
  - id: mock-gap
    type: openai
    base_url: ${gapMockUrl}
models:
  - id: bench-model
    provider: bench
    served_by: [{ engine: mock, name: bench-model }]
    price: { input: 0.10, output: 0.30 }
    context_window: 32768
  - id: bench-model-gap
    provider: bench
    served_by: [{ engine: mock-gap, name: bench-model }]
    price: { input: 0.10, output: 0.30 }
    context_window: 32768
limits:
  requests_per_minute: 100000000
traces:
  bodies: true
logging:
  level: warn
`;
  // 250 µs sampling instead of the default 1 ms: a call costs a few hundred µs, so 1 ms samples blur it.
  const nodeFlags = cpuProfileDirectory === undefined ? [] : ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', cpuProfileDirectory];
  return startTaskgateProcess({ directory, config, nodeFlags });
}

/**
 * `dist/cli/main.js serve` in its own process with this config text, a fresh
 * data directory and admin key, once `/healthz` answers.
 *
 * @param {{ directory: string, config: string, nodeFlags?: string[] }} setup
 */
export async function startTaskgateProcess({ directory, config, nodeFlags = [] }) {
  if (!existsSync(taskgateEntry)) throw new Error(`${taskgateEntry} is missing: run npm run build first (npm run bench does it)`);
  const configPath = join(directory, 'taskgate.yaml');
  writeFileSync(configPath, config);
  const port = await freePort();
  const adminKey = `tg_bench_${randomBytes(24).toString('hex')}`;
  const child = startChild(
    process.execPath,
    [...nodeFlags, taskgateEntry, 'serve', '--config', configPath, '--port', String(port), '--host', '127.0.0.1', '--data-dir', join(directory, 'data')],
    { cwd: directory, env: { ...process.env, TASKGATE_ADMIN_KEY: adminKey, NODE_OPTIONS: '' } },
  );
  const log = keepTail(child.stderr);
  child.stdout?.resume();
  const origin = `http://127.0.0.1:${port}`;
  // With logging at warn the "listening" line is not printed: poll /healthz instead (at most 200 times, ~20 s).
  for (let attempt = 0; attempt < 200 && !hasExited(child); attempt++) {
    try {
      const response = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.status === 200) {
        return { child, pid: /** @type {number} */ (child.pid), origin, adminKey, log, sqlitePath: join(directory, 'data', 'taskgate.db') };
      }
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  await stopChild(child, 2_000);
  throw new Error(`taskgate did not become healthy within 20 s:\n${log.text}`);
}

/** @param {string} sqlitePath */
export function countTraces(sqlitePath) {
  try {
    // A devDependency-free check: better-sqlite3 is one of taskgate's own dependencies.
    const require = createRequire(import.meta.url);
    const Database = require('better-sqlite3');
    const database = new Database(sqlitePath, { readonly: true, fileMustExist: true });
    try {
      return /** @type {{ count: number }} */ (database.prepare('SELECT count(*) AS count FROM traces').get()).count;
    } finally {
      database.close();
    }
  } catch {
    return null;
  }
}

