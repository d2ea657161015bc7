/**
 * How fast the stores take traces, and how long pruning an expired day takes.
 *
 * Inserts: `store.traces.insertBatch` called one batch at a time, as the trace
 * writer (src/store/trace-writer.ts) calls it, with its default batch of 256,
 * until `--traces` traces are stored or `--seconds` of insert time have gone
 * by. Each trace is a realistic call: ~1 KB request and reply bodies, a mix
 * of projects, workloads, models, statuses and streams, started 5 ms apart
 * (so the batches update the per-minute rollups as live traffic does). Only
 * the time inside `insertBatch` is counted; making the traces is not.
 *
 * Pruning: `--prune-rows` calls on one UTC day ten days back, then
 * `store.retention.pruneTraces(null, end of that day, --prune-batch)` called
 * until it deletes nothing, as the pruner does (without its pauses).
 * SQLite deletes rows in batches; PostgreSQL drops the day's partition. On
 * PostgreSQL the same is also timed for a day without a partition of its own
 * (its rows in the default partition, deleted in batches), for comparison.
 *
 * SQLite runs on a file in a temporary directory, PostgreSQL in a fresh
 * schema; both are removed at the end, on failure and on Ctrl-C. PostgreSQL is
 * skipped, with a printed line, when it does not answer.
 *
 *   npm run bench:store -- [--traces N] [--seconds S] [--batch N] [--prune-rows N]
 *                          [--prune-batch N] [--postgres-url URL] [--skip-postgres]
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { DAY_MS, type TracePartitions } from '../src/store/postgres/postgres-partitions.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store, Trace } from '../src/store/store.js';
import { cleanUpOnInterrupt, removeOnInterrupt, runOnce } from './lib/child-processes.mjs';
import { log } from './lib/log.mjs';
import { defaultPostgresUrl } from './lib/options.mjs';

const usage = `Usage: npm run bench:store -- [options]

Options:
  --traces N          traces inserted per back end, at most (default 50000)
  --seconds S         seconds of insert time per back end, at most (default 20)
  --batch N           traces per insertBatch (default 256, the trace writer's)
  --prune-rows N      calls on the expired day that is pruned (default 50000)
  --prune-batch N     batch size of pruneTraces (default 1000, the pruner's)
  --postgres-url URL  PostgreSQL to run in (a fresh schema, dropped after; default ${defaultPostgresUrl})
  --skip-postgres     SQLite only
  -h, --help          this help`;

interface Options {
  traces: number;
  seconds: number;
  batch: number;
  pruneRows: number;
  pruneBatch: number;
  postgresUrl: string;
  skipPostgres: boolean;
}

interface InsertResult {
  backend: string;
  batch: number;
  traces: number;
  seconds: number;
}
interface PruneResult {
  backend: string;
  how: string;
  rows: number;
  calls: number;
  seconds: number;
}

async function main(): Promise<void> {
  const options = readOptions();
  if (options === null) return;
  keepInterruptCleanupAlive();
  const loadAtStart = loadavg()[0] ?? 0;
  const inserts: InsertResult[] = [];
  const prunes: PruneResult[] = [];
  const notes: string[] = [];

  const directory = mkdtempSync(join(tmpdir(), 'taskgate-bench-store-'));
  removeOnInterrupt(directory);
  const sqlite = createSqliteStore({ path: join(directory, 'bench.db') });
  try {
    await sqlite.migrate();
    log('sqlite: inserting');
    inserts.push(await measureInserts('SQLite', sqlite, options));
    prunes.push(await measurePrune('SQLite', 'rows deleted in batches', sqlite, options, 10));
  } finally {
    await sqlite.close();
    rmSync(directory, { recursive: true, force: true });
  }

  const reason = options.skipPostgres ? '--skip-postgres' : await postgresMissing(options.postgresUrl);
  if (reason !== null) {
    const line = `SKIPPED PostgreSQL: ${reason}`;
    process.stdout.write(`${line}\n`);
    notes.push(line);
  } else {
    const schema = `taskgate_bench_store_${randomBytes(4).toString('hex')}`;
    const store = createPostgresStore({ url: options.postgresUrl, schema, poolSize: 4 });
    const cleanup = runOnce(async () => {
      await store.close().catch(() => undefined);
      await dropSchema(options.postgresUrl, schema);
    });
    const unregister = cleanUpOnInterrupt(cleanup);
    try {
      await store.migrate();
      notes.push(`PostgreSQL ${await serverVersion(options.postgresUrl)}`);
      log('postgresql: inserting');
      inserts.push(await measureInserts('PostgreSQL', store, options));
      // The day in the default partition first: its cutoff leaves the partitioned day (younger) alone.
      prunes.push(await measurePrune('PostgreSQL', 'rows deleted in batches (day in the default partition)', store, options, 20));
      prunes.push(await measurePrune('PostgreSQL', 'partition dropped', store, options, 10, store.partitions));
    } finally {
      await cleanup();
      unregister();
    }
  }

  const loadAtEnd = loadavg()[0] ?? 0;
  process.stdout.write(
    `\n${report(inserts, prunes, [...notes, `${cpus().length} cores, Node ${process.version}, 1-minute load average ${loadAtStart.toFixed(2)} at start, ${loadAtEnd.toFixed(2)} at end`])}\n`,
  );
}

/** Batches of `options.batch` until the count or the time is reached; only insertBatch is timed. */
async function measureInserts(backend: string, store: Store, options: Options): Promise<InsertResult> {
  const make = traceMaker(`${backend}-inserts`, Date.now());
  // Warm-up, not counted: statements prepared, connections open.
  for (let index = 0; index < 5; index += 1) await store.traces.insertBatch(make.batch(options.batch));
  let traces = 0;
  let elapsedMs = 0;
  while (traces < options.traces && elapsedMs < options.seconds * 1_000) {
    const batch = make.batch(Math.min(options.batch, options.traces - traces));
    const started = performance.now();
    const inserted = await store.traces.insertBatch(batch);
    elapsedMs += performance.now() - started;
    if (inserted !== batch.length) throw new Error(`${backend}: ${inserted} of ${batch.length} traces stored`);
    traces += inserted;
  }
  return { backend, batch: options.batch, traces, seconds: elapsedMs / 1_000 };
}

/**
 * Stores `pruneRows` calls spread over the UTC day `daysBack` days ago
 * (untimed; with `partitions`, that day gets its partition first), then times
 * pruneTraces until it deletes nothing, and checks that exactly those calls went.
 */
async function measurePrune(
  backend: string,
  how: string,
  store: Store,
  options: Options,
  daysBack: number,
  partitions?: TracePartitions,
): Promise<PruneResult> {
  const day = Math.floor(Date.now() / DAY_MS) * DAY_MS - daysBack * DAY_MS;
  if (partitions !== undefined) await partitions.create(day);
  const make = traceMaker(`${backend}-prune-${daysBack}`, day);
  log(`${backend}: storing ${options.pruneRows} calls ${daysBack} days back`);
  for (let stored = 0; stored < options.pruneRows; stored += 1_000)
    await store.traces.insertBatch(make.batch(Math.min(1_000, options.pruneRows - stored), DAY_MS / options.pruneRows));
  log(`${backend}: pruning them (${how})`);
  let rows = 0;
  let calls = 0;
  const started = performance.now();
  for (let deleted = -1; deleted !== 0; calls += 1) {
    deleted = await store.retention.pruneTraces(null, day + DAY_MS, options.pruneBatch);
    rows += deleted;
  }
  const seconds = (performance.now() - started) / 1_000;
  if (rows !== options.pruneRows) throw new Error(`${backend}: pruning deleted ${rows} calls, not ${options.pruneRows}`);
  if (partitions !== undefined && (await partitions.list()).some((partition) => partition.range?.from === day)) {
    throw new Error(`${backend}: the day's partition is still there`);
  }
  return { backend, how, rows, calls, seconds };
}

const words =
  'the a gateway model project workload trace token latency reply request route store batch minute cost account key stream queue policy retention partition summary invoice order customer shipment'.split(
    ' ',
  );

/** Realistic traces: request ids unique to `run`, started `spacingMs` apart from `startAt`, ~1 KB bodies each way. */
function traceMaker(run: string, startAt: number) {
  let sequence = 0;
  const digest = createHash('sha256').update(run).digest();
  let seed = digest.readUInt32BE(0);
  const tag = digest.toString('hex').slice(0, 6);
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) >>> 0;
    return seed / 2 ** 32;
  };
  const text = (length: number) => {
    let result = '';
    while (result.length < length) result += `${words[Math.floor(random() * words.length)]} `;
    return result.slice(0, length);
  };
  const one = (spacingMs: number): Trace => {
    const index = (sequence += 1);
    const roll = random();
    const status = roll < 0.97 ? 'ok' : roll < 0.99 ? 'error' : 'aborted';
    const stream = random() < 0.5;
    const model = random() < 0.7 ? 'qwen2.5-0.5b-instruct' : 'qwen2.5-7b-instruct';
    const requestBody = JSON.stringify({
      model: 'qwen2.5-7b-instruct',
      messages: [
        { role: 'system', content: text(200) },
        { role: 'user', content: text(650) },
      ],
      max_tokens: 256,
      temperature: 0.2,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    });
    const replyBody = JSON.stringify({
      id: `chatcmpl-${run}-${index}`,
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: text(780) }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 210, completion_tokens: 160, total_tokens: 370 },
    });
    return {
      requestId: `req_${tag}${index.toString(36).padStart(6, '0')}${randomBytes(6).toString('hex')}`,
      accountId: 'acct_bench',
      keyId: 'key_bench',
      environment: random() < 0.9 ? 'production' : 'staging',
      project: `project-${Math.floor(random() * 3)}`,
      workload: `workload-${Math.floor(random() * 4)}`,
      user: random() < 0.3 ? `user-${Math.floor(random() * 100)}` : null,
      requestedModel: 'qwen2.5-7b-instruct',
      servedModel: model,
      replica: `replica-${Math.floor(random() * 2)}`,
      attempts: null,
      status,
      errorClass: status === 'ok' ? null : status === 'error' ? 'upstream_error' : 'client_closed',
      errorMessage: status === 'error' ? 'upstream answered 502' : null,
      httpStatus: status === 'error' ? 502 : 200,
      finishReason: status === 'ok' ? 'stop' : null,
      promptTokens: 150 + Math.floor(random() * 120),
      completionTokens: Math.floor(random() * 300),
      costUsd: random() * 0.001,
      latencyMs: 200 + random() * 2_000,
      ttftMs: stream ? 20 + random() * 200 : null,
      stream,
      metadata: random() < 0.2 ? { ticket: `T-${index}` } : null,
      startedAt: Math.floor(startAt + (index - 1) * spacingMs),
      requestBody,
      replyBody,
      engineSeconds: stream ? 0.4 : null,
      measuredCostUsd: stream ? 0.000_02 : null,
    };
  };
  return { batch: (size: number, spacingMs = 5) => Array.from({ length: size }, () => one(spacingMs)) };
}

function report(inserts: InsertResult[], prunes: PruneResult[], notes: string[]): string {
  const number = (value: number, digits = 0) =>
    value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return [
    '| Back end | Batch size | Traces | Seconds | Inserts/s |',
    '|---|---:|---:|---:|---:|',
    ...inserts.map(
      (row) =>
        `| ${row.backend} | ${row.batch} | ${number(row.traces)} | ${number(row.seconds, 2)} | ${number(row.traces / row.seconds)} |`,
    ),
    '',
    '| Back end | Pruning one expired day | Calls deleted | pruneTraces calls | Seconds |',
    '|---|---|---:|---:|---:|',
    ...prunes.map((row) => `| ${row.backend} | ${row.how} | ${number(row.rows)} | ${row.calls} | ${number(row.seconds, 3)} |`),
    '',
    ...notes.map((note) => `- ${note}`),
  ].join('\n');
}

async function postgresMissing(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return `${url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')} does not answer (${error instanceof Error ? error.message : String(error)}); pass --postgres-url`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? 'unknown';
  } finally {
    await client.end();
  }
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

function readOptions(): Options | null {
  const { values } = parseArgs({
    options: {
      traces: { type: 'string', default: '50000' },
      seconds: { type: 'string', default: '20' },
      batch: { type: 'string', default: '256' },
      'prune-rows': { type: 'string', default: '50000' },
      'prune-batch': { type: 'string', default: '1000' },
      'postgres-url': { type: 'string', default: defaultPostgresUrl },
      'skip-postgres': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return null;
  }
  const positive = (name: string, text: string) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive whole number, got "${text}"`);
    return value;
  };
  return {
    traces: positive('traces', values.traces),
    seconds: positive('seconds', values.seconds),
    batch: positive('batch', values.batch),
    pruneRows: positive('prune-rows', values['prune-rows']),
    pruneBatch: positive('prune-batch', values['prune-batch']),
    postgresUrl: values['postgres-url'],
    skipPostgres: values['skip-postgres'],
  };
}

/** As in bench/cpu-engine.ts: vite-node's signal-exit would otherwise kill the process before the cleanup ran. */
function keepInterruptCleanupAlive(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
