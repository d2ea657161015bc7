/**
 * taskgate itself, started from dist/ with a fresh config and data directory
 * (tracing on, with bodies, as in production), and the traces it stored: on
 * SQLite + in-memory limits (the default), optionally exporting a span per
 * call over OTLP/HTTP, or on PostgreSQL + Redis, as one process or several
 * sharing the database and Redis.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { hasExited, keepTail, freePort, startChild, stopChild } from './child-processes.mjs';
import { heapTuningModule, taskgateEntry } from './repository-paths.mjs';

/** Node flags as typed in one option (`--after-flags="--a --b=1"`): split on spaces. @param {string} text */
export function nodeFlagsOf(text) {
  return text.split(' ').filter((flag) => flag !== '');
}

/** An admin key for every taskgate of a run: the processes on one database must share it. */
export function newAdminKey() {
  return `tg_bench_${randomBytes(24).toString('hex')}`;
}

/**
 * How taskgate reaches its engines (`engines[].transport`): its own HTTP/1.1
 * client, the default, or undici, the reference implementation.
 * @typedef {'http1' | 'undici'} Transport
 */

/** @param {{ mockUrl: string, gapMockUrl: string, otlpEndpoint?: string, transport?: Transport }} mocks */
function benchConfig({ mockUrl, gapMockUrl, otlpEndpoint, transport = 'http1' }) {
  // The default is left unsaid: the default run's config stays as it was, and an older build (ab-builds.mjs) still accepts it.
  const transportLine = transport === 'http1' ? '' : `\n    transport: ${transport}`;
  // Limits so high the rate limiter never refuses; tracing on, with bodies, as in production.
  return `server:
  host: 127.0.0.1
  shutdown_timeout_ms: 2000
engines:
  - id: mock
    type: openai
    base_url: ${mockUrl}${transportLine}
  - id: mock-gap
    type: openai
    base_url: ${gapMockUrl}${transportLine}
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
${otlpEndpoint === undefined ? '' : `telemetry:\n  otlp: { endpoint: "${otlpEndpoint}", protocol: http/protobuf }\n`}`;
}

/**
 * taskgate on SQLite (in the data directory) and in-memory limits; exporting spans to `otlpEndpoint` when given;
 * reaching both engines over `transport` (default http1).
 * @param {{ directory: string, mockUrl: string, gapMockUrl: string, adminKey: string, cpuProfileDirectory?: string, otlpEndpoint?: string, entry?: string, extraNodeFlags?: string[], transport?: Transport }} setup
 */
export async function startTaskgate({
  directory,
  mockUrl,
  gapMockUrl,
  adminKey,
  cpuProfileDirectory,
  otlpEndpoint,
  entry,
  extraNodeFlags = [],
  transport = 'http1',
}) {
  // 250 µs sampling instead of the default 1 ms: a call costs a few hundred µs, so 1 ms samples blur it.
  const nodeFlags = [
    ...extraNodeFlags,
    ...(cpuProfileDirectory === undefined ? [] : ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', cpuProfileDirectory]),
  ];
  // Empty values (taskgate reads them as unset), so a TASKGATE_DATABASE_URL or TASKGATE_REDIS_URL in the shell cannot move this one off SQLite + memory.
  // OTEL_* likewise: only the config says whether spans are exported, and where.
  const environment = {
    TASKGATE_DATABASE_URL: '',
    TASKGATE_REDIS_URL: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: '',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
    OTEL_SDK_DISABLED: '',
  };
  return startTaskgateProcess({
    directory,
    config: benchConfig({ mockUrl, gapMockUrl, otlpEndpoint, transport }),
    nodeFlags,
    adminKey,
    environment,
    entry,
  });
}

/**
 * `count` taskgate processes on one PostgreSQL database and one Redis (the
 * same config and admin key, each its own port and data directory), started
 * one after the other, so the first takes the router's lease and runs the
 * migrations alone. Each is pushed onto `started` as soon as it runs.
 * @param {{ directory: string, mockUrl: string, gapMockUrl: string, adminKey: string, databaseUrl: string, redisUrl: string, count: number }} setup
 * @param {{ child: import('node:child_process').ChildProcess }[]} started
 */
export async function startSharedTaskgates({ directory, mockUrl, gapMockUrl, adminKey, databaseUrl, redisUrl, count }, started) {
  const processes = [];
  for (let index = 1; index <= count; index++) {
    const own = join(directory, `shared-${index}`);
    mkdirSync(own, { recursive: true });
    const taskgate = await startTaskgateProcess({
      directory: own,
      config: benchConfig({ mockUrl, gapMockUrl }),
      adminKey,
      environment: { TASKGATE_DATABASE_URL: databaseUrl, TASKGATE_REDIS_URL: redisUrl },
    });
    started.push(taskgate);
    processes.push(taskgate);
  }
  return processes;
}

/**
 * `dist/cli/main.js serve` in its own process with this config text, a fresh
 * data directory, this admin key (a new one if none) and these environment
 * variables, once `/healthz` answers.
 *
 * `entry`: another build's `dist/cli/main.js` (bench/ab-builds.mjs), else this one's.
 *
 * @param {{ directory: string, config: string, nodeFlags?: string[], adminKey?: string, environment?: Record<string, string>, entry?: string }} setup
 */
export async function startTaskgateProcess({
  directory,
  config,
  nodeFlags = [],
  adminKey = newAdminKey(),
  environment = {},
  entry = taskgateEntry,
}) {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first (npm run bench does it)`);
  // The serving heap flags on node's command line, as `npm start` gives them: without them `serve` would serve
  // from a child process, and the pid measured here would be its idle launcher's. Flags given in `nodeFlags` win.
  const { missingHeapTuningFlags } = await import(pathToFileURL(heapTuningModule).href);
  nodeFlags = [...nodeFlags, ...missingHeapTuningFlags(nodeFlags)];
  const configPath = join(directory, 'taskgate.yaml');
  writeFileSync(configPath, config);
  const port = await freePort();
  const child = startChild(
    process.execPath,
    [
      ...nodeFlags,
      entry,
      'serve',
      '--config',
      configPath,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--data-dir',
      join(directory, 'data'),
    ],
    { cwd: directory, env: { ...process.env, TASKGATE_ADMIN_KEY: adminKey, NODE_OPTIONS: '', ...environment } },
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
