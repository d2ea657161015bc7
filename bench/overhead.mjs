#!/usr/bin/env node
/**
 * taskgate's overhead benchmark: what a call costs going through taskgate
 * compared with going straight to the engine.
 *
 * It starts two mock engines (bench/mock-engine.mjs, each in its own process,
 * so their CPU is never counted as taskgate's): one that answers at once, and
 * one that leaves `--ttfb-gap-ms` between stream events. Then it starts taskgate
 * (dist/, a fresh temporary data directory and config, tracing on) in front of
 * them, checks that both paths answer correctly, warms up, and measures:
 *
 *   1. saturation, JSON and streamed: `--connections` connections for
 *      `--duration` seconds, direct to the mock and through taskgate: req/s,
 *      p50/p99 latency, server CPU per request (utime+stime from
 *      /proc/<pid>/stat; taskgate's own, and the mock's separately), peak RSS
 *      (VmHWM, reset before each run when the kernel allows it);
 *   2. a fixed rate (`--rate`, 200 req/s) of JSON calls from an open-loop
 *      client: the latency taskgate adds when it is not saturated;
 *   3. time to first byte of streams at a low fixed rate (`--ttfb-rate`)
 *      against the mock with gaps between events, so a gateway that held
 *      events back would show it.
 *
 * The saturation load comes from wrk when it is installed (it costs less CPU
 * than autocannon on a small machine), else from autocannon (a devDependency).
 * The fixed-rate runs use undici directly. Results are printed as Markdown and
 * written to bench/results/ as JSON and Markdown.
 *
 *   npm run bench -- [--duration S] [--connections N] [--repeat N] [--quick] ...
 *   node bench/overhead.mjs --help
 *
 * Everything it starts is stopped when it ends, fails or is interrupted, and
 * every wait has a deadline.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { summariseProfile, formatProfileSummary } from './profile-summary.mjs';

const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));
const taskgateEntry = join(repositoryRoot, 'dist', 'cli', 'main.js');
const mockEngineEntry = join(repositoryRoot, 'bench', 'mock-engine.mjs');

const usage = `Usage: node bench/overhead.mjs [options]   (or: npm run bench -- [options])

Options:
  --duration S          seconds per measured run (default 10; --quick: 2)
  --connections N       connections of the saturation runs (default 32)
  --repeat N            measure everything N times and report medians (default 1)
  --rate R              requests per second of the fixed-rate JSON run (default 200)
  --ttfb-rate R         streams per second of the time-to-first-byte run (default 20)
  --ttfb-gap-ms MS      gap between stream events of the mock used for TTFB (default 20)
  --warmup S            seconds of warm-up load per path and kind (default 3; --quick: 1)
  --only KIND           json | stream | all (default all)
  --load-generator G    auto | wrk | autocannon (default auto: wrk when installed)
  --cpu-prof DIR        run taskgate under node --cpu-prof, write the profile to DIR
                        and print its hot spots (figures are then not comparable)
  --output DIR          where results go (default bench/results)
  --keep                keep the temporary data directory
  --quick               short runs, for a smoke check
  -h, --help            this help`;

// ---------------------------------------------------------------------------
// Options

/**
 * @typedef {object} Options
 * @property {number} durationSeconds
 * @property {number} connections
 * @property {number} repeat
 * @property {number} rate
 * @property {number} ttfbRate
 * @property {number} ttfbGapMs
 * @property {number} warmupSeconds
 * @property {'json' | 'stream' | 'all'} only
 * @property {'auto' | 'wrk' | 'autocannon'} loadGenerator
 * @property {string | undefined} cpuProfileDirectory
 * @property {string} outputDirectory
 * @property {boolean} keep
 * @property {boolean} quick
 */

/** @returns {Options | null} null when only help was asked for. */
function readOptions() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      connections: { type: 'string', default: '32' },
      repeat: { type: 'string', default: '1' },
      rate: { type: 'string', default: '200' },
      'ttfb-rate': { type: 'string', default: '20' },
      'ttfb-gap-ms': { type: 'string', default: '20' },
      warmup: { type: 'string' },
      only: { type: 'string', default: 'all' },
      'load-generator': { type: 'string', default: 'auto' },
      'cpu-prof': { type: 'string' },
      output: { type: 'string', default: join(repositoryRoot, 'bench', 'results') },
      keep: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return null;
  const quick = values.quick === true;
  const only = values.only;
  if (only !== 'json' && only !== 'stream' && only !== 'all') throw new Error(`--only must be json, stream or all, not ${only}`);
  const loadGenerator = values['load-generator'];
  if (loadGenerator !== 'auto' && loadGenerator !== 'wrk' && loadGenerator !== 'autocannon') {
    throw new Error(`--load-generator must be auto, wrk or autocannon, not ${loadGenerator}`);
  }
  return {
    durationSeconds: positiveNumber(values.duration ?? (quick ? '2' : '10'), '--duration', 3_600),
    connections: Math.round(positiveNumber(values.connections, '--connections', 10_000)),
    repeat: Math.round(positiveNumber(values.repeat, '--repeat', 100)),
    rate: positiveNumber(values.rate, '--rate', 100_000),
    ttfbRate: positiveNumber(values['ttfb-rate'], '--ttfb-rate', 10_000),
    ttfbGapMs: positiveNumber(values['ttfb-gap-ms'], '--ttfb-gap-ms', 10_000),
    warmupSeconds: positiveNumber(values.warmup ?? (quick ? '1' : '3'), '--warmup', 600),
    only,
    loadGenerator,
    cpuProfileDirectory: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    outputDirectory: resolve(values.output),
    keep: values.keep === true,
    quick,
  };
}

/** @param {string} text @param {string} name @param {number} maximum */
function positiveNumber(text, name, maximum) {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || value > maximum) throw new Error(`${name} must be a number in (0, ${maximum}], not ${text}`);
  return value;
}

// ---------------------------------------------------------------------------
// Child processes: every one is tracked, so any way out of this script stops them.

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();
/** The temporary directory, removed on the way out unless --keep. */
let temporaryDirectory = /** @type {string | null} */ (null);

/**
 * Settles like `promise`, or rejects with `message` after `ms` (calling
 * `onTimeout` first). The timer is cleared either way, so no deadline keeps
 * the process alive once the work is done.
 * @template T
 * @param {Promise<T>} promise @param {number} ms @param {string} message @param {() => void} [onTimeout]
 * @returns {Promise<T>}
 */
async function withDeadline(promise, ms, message, onTimeout) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new Error(message));
    }, ms);
  });
  try {
    return await Promise.race([promise, /** @type {Promise<never>} */ (expired)]);
  } finally {
    clearTimeout(timer);
  }
}

/** @param {import('node:child_process').ChildProcess} child */
function hasExited(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * @param {string} command
 * @param {string[]} args
 * @param {import('node:child_process').SpawnOptions} [options]
 */
function startChild(command, args, options = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  children.add(child);
  child.once('exit', () => children.delete(child));
  // A child that fails to spawn reports it on 'error'; the callers notice the exit.
  child.once('error', () => children.delete(child));
  return child;
}

/**
 * SIGTERM, then SIGKILL if the child is still there after `graceMs`.
 * @param {import('node:child_process').ChildProcess} child
 * @param {number} graceMs
 */
async function stopChild(child, graceMs) {
  if (hasExited(child) || child.pid === undefined) return;
  const exited = once(child, 'exit').catch(() => undefined);
  child.kill('SIGTERM');
  const stopped = await withDeadline(exited, graceMs, 'grace period over').then(
    () => true,
    () => false,
  );
  if (!stopped && !hasExited(child)) {
    child.kill('SIGKILL');
    await withDeadline(exited, 5_000, 'no exit after SIGKILL').catch(() => undefined);
  }
}

process.once('exit', () => {
  // Last resort (an uncaught error skipped the cleanup): nothing outlives the script.
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping everything it started\n`);
    Promise.allSettled([...children].map((child) => stopChild(child, 3_000))).finally(() => {
      if (temporaryDirectory !== null) rmSync(temporaryDirectory, { recursive: true, force: true });
      process.exit(130);
    });
  });
}

/**
 * Keeps the last `limit` characters a child wrote, for error messages.
 * @param {import('node:stream').Readable | null} stream
 * @param {number} [limit]
 */
function keepTail(stream, limit = 16_384) {
  const tail = { text: '' };
  stream?.setEncoding('utf8');
  stream?.on('data', (text) => {
    tail.text = (tail.text + text).slice(-limit);
  });
  return tail;
}

/** A free TCP port on loopback (there is a small window before taskgate binds it; a clash fails loudly). */
async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Starts bench/mock-engine.mjs in its own process and waits for its "listening" line.
 * @param {number} gapMs
 */
async function startMockEngineProcess(gapMs) {
  const child = startChild(process.execPath, [mockEngineEntry, '--port', '0', '--host', '127.0.0.1', '--gap-ms', String(gapMs)]);
  const errors = keepTail(child.stderr);
  const output = keepTail(child.stdout);
  // Bounded: 100 polls of 100 ms.
  for (let attempt = 0; attempt < 100 && !hasExited(child); attempt++) {
    const line = output.text.split('\n').find((candidate) => candidate.includes('"mock_engine":"listening"'));
    if (line !== undefined) {
      const { url, port } = JSON.parse(line);
      return { child, pid: /** @type {number} */ (child.pid), url, port, origin: `http://127.0.0.1:${port}` };
    }
    await sleep(100);
  }
  await stopChild(child, 1_000);
  throw new Error(`the mock engine did not start within 10 s: ${errors.text || output.text}`);
}

/**
 * @param {{ directory: string, mockUrl: string, gapMockUrl: string, cpuProfileDirectory?: string }} setup
 */
async function startTaskgate({ directory, mockUrl, gapMockUrl, cpuProfileDirectory }) {
  if (!existsSync(taskgateEntry)) throw new Error(`${taskgateEntry} is missing: run npm run build first (npm run bench does it)`);
  const configPath = join(directory, 'taskgate.yaml');
  // Limits so high the rate limiter never refuses; tracing on, with bodies, as in production.
  writeFileSync(
    configPath,
    `server:
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
`,
  );
  const port = await freePort();
  const adminKey = `tg_bench_${randomBytes(24).toString('hex')}`;
  // 250 µs sampling instead of the default 1 ms: a call costs a few hundred µs, so 1 ms samples blur it.
  const nodeFlags = cpuProfileDirectory === undefined ? [] : ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', cpuProfileDirectory];
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

// ---------------------------------------------------------------------------
// Process statistics from /proc (Linux only)

const clockTicksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU time (user + system) the process has used so far, in microseconds.
 * @param {number} pid
 */
function cpuMicroseconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name, field 3 (state) is index 0, so utime (14) and stime (15) are 11 and 12.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1_000_000) / clockTicksPerSecond;
}

/**
 * Peak resident set size (VmHWM) in MB.
 * @param {number} pid
 */
function peakRssMegabytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmHWM:\s+(\d+) kB/m.exec(status);
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

/**
 * Resets VmHWM to the current RSS, so the next reading is the peak of one run
 * (writing 5 to clear_refs; needs the same user, and Linux 4.0+).
 * @param {number} pid
 */
function resetPeakRss(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The machine's CPU time so far, from the first line of /proc/stat, in ticks. */
function machineTicks() {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number);
  return { total: user + nice + system + idle + iowait + irq + softirq + steal, steal };
}

/**
 * Share of the machine's time the hypervisor gave to other guests between two readings:
 * a noisy neighbour shows here, and makes every figure of that run worse.
 * @param {{ total: number, steal: number }} before @param {{ total: number, steal: number }} after
 */
function stealPercent(before, after) {
  return (100 * (after.steal - before.steal)) / Math.max(1, after.total - before.total);
}

/**
 * Waits until the processes stop using CPU (at most one 10 ms tick each per
 * 200 ms window), for at most `maxMs`. taskgate keeps working after the last
 * response (it writes the traces of the run in batches); that work belongs to
 * the run, and must not spill into the next one.
 * @param {number[]} pids @param {number} maxMs
 * @returns {Promise<number>} how long it took, in ms
 */
async function waitUntilIdle(pids, maxMs) {
  const startedAt = performance.now();
  const windowMs = 200;
  let previous = pids.map(cpuMicroseconds);
  for (let waited = 0; waited < maxMs; waited += windowMs) {
    await sleep(windowMs);
    const current = pids.map(cpuMicroseconds);
    const busy = current.some((value, index) => value - previous[index] > 1_000_000 / clockTicksPerSecond);
    previous = current;
    if (!busy) break;
  }
  return performance.now() - startedAt;
}

// ---------------------------------------------------------------------------
// The request: a realistic ~1 KB chat call

const systemPrompt =
  'You are the support assistant of an online hardware shop. Answer in two or three short sentences, in a friendly and factual tone. ' +
  'If the question is about an order, ask for the order number; never invent tracking details, prices or delivery dates. ' +
  'Mention the returns policy (30 days, unused items in their original packaging) only when it applies.';
const userMessage =
  'Hello! I ordered a 27-inch monitor and a USB-C docking station last Tuesday. The monitor arrived yesterday, but the dock is still ' +
  'missing and the tracking page has not changed for three days. The monitor also has a small scratch on the lower bezel, which I only ' +
  'noticed after removing the protective film. Can I return just the monitor and keep the rest of the order, and will the dock still ' +
  'arrive this week? I would rather not cancel everything, because I need the dock for work on Monday.';

/** @param {string} model @param {boolean} stream */
function chatBody(model, stream) {
  /** @type {Record<string, unknown>} */
  const body = {
    model,
    messages: [
      { role: 'system', content: systemPrompt },
      { role: 'user', content: userMessage },
    ],
    max_tokens: 256,
    temperature: 0.2,
  };
  if (stream) {
    body.stream = true;
    // Asked for, so both paths send the same 23 events (the usage chunk included).
    body.stream_options = { include_usage: true };
  }
  return JSON.stringify(body);
}

/** @param {string} key */
function chatHeaders(key) {
  // The same headers go to the mock, so both paths parse the same request.
  return {
    'content-type': 'application/json',
    authorization: `Bearer ${key}`,
    'x-taskgate-project': 'bench',
    'x-taskgate-workload': 'overhead',
  };
}

// ---------------------------------------------------------------------------
// Load generators

/**
 * @typedef {object} LoadResult
 * @property {number} completed       responses received (any status)
 * @property {number} failed          non-2xx responses, errors and timeouts
 * @property {number} durationSeconds
 * @property {number} p50Ms
 * @property {number} p99Ms
 */

/**
 * @typedef {object} LoadTarget
 * @property {string} url
 * @property {Record<string, string>} headers
 * @property {string} body
 */

function wrkInstalled() {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore', timeout: 5_000 });
    return true;
  } catch (error) {
    // wrk --version exits 1 after printing its version; only a missing binary is "not installed".
    return /** @type {NodeJS.ErrnoException} */ (error).code !== 'ENOENT';
  }
}

function wrkVersion() {
  try {
    return execFileSync('wrk', ['--version'], { encoding: 'utf8', timeout: 5_000 }).split('\n')[0]?.trim() ?? 'wrk';
  } catch (error) {
    const output = /** @type {{ stdout?: string }} */ (error).stdout ?? '';
    return output.split('\n')[0]?.trim() || 'wrk';
  }
}

/** Lua string literal with everything escaped (bodies and keys never contain a quote that survives this). */
function luaString(text) {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/**
 * Closed-loop saturation with wrk (one thread: the servers need the cores more).
 * @param {LoadTarget} target
 * @param {{ connections: number, durationSeconds: number, directory: string }} settings
 * @returns {Promise<LoadResult>}
 */
async function runWrk(target, { connections, durationSeconds, directory }) {
  const scriptPath = join(directory, `wrk-${randomBytes(4).toString('hex')}.lua`);
  const headerLines = Object.entries(target.headers)
    .map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`)
    .join('\n');
  writeFileSync(
    scriptPath,
    `wrk.method = "POST"
wrk.body = ${luaString(target.body)}
${headerLines}
-- Machine-readable summary; latency is in microseconds.
function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format("BENCH_WRK_RESULT %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    errors.connect, errors.read, errors.write, errors.status, errors.timeout))
end
`,
  );
  const seconds = Math.max(1, Math.round(durationSeconds));
  const child = startChild('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', scriptPath, target.url]);
  const output = keepTail(child.stdout);
  const errors = keepTail(child.stderr);
  await withDeadline(once(child, 'exit'), (seconds + 30) * 1_000, 'wrk did not finish in time', () => void stopChild(child, 1_000));
  const line = output.text.split('\n').find((candidate) => candidate.startsWith('BENCH_WRK_RESULT '));
  if (line === undefined) throw new Error(`wrk gave no result (exit ${child.exitCode}): ${errors.text}${output.text}`);
  const [requests, durationMicros, p50Micros, p99Micros, connectErrors, readErrors, writeErrors, statusErrors, timeouts] = line
    .split(' ')
    .slice(1)
    .map(Number);
  return {
    completed: requests,
    failed: connectErrors + readErrors + writeErrors + statusErrors + timeouts,
    durationSeconds: durationMicros / 1e6,
    p50Ms: p50Micros / 1_000,
    p99Ms: p99Micros / 1_000,
  };
}

/**
 * Closed-loop saturation with autocannon, in this process (which is neither server).
 * @param {LoadTarget} target
 * @param {{ connections: number, durationSeconds: number }} settings
 * @returns {Promise<LoadResult>}
 */
async function runAutocannon(target, { connections, durationSeconds }) {
  const { default: autocannon } = await import('autocannon');
  const run = autocannon({
    url: target.url,
    method: 'POST',
    headers: target.headers,
    body: target.body,
    connections,
    duration: durationSeconds,
    timeout: 10,
  });
  const result = await withDeadline(run, (durationSeconds + 30) * 1_000, 'autocannon did not finish in time', () => run.stop?.());
  const completed = result['2xx'] + result.non2xx;
  return {
    completed,
    failed: result.non2xx + result.errors + result.timeouts,
    durationSeconds: result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}

/**
 * Open-loop load at a fixed rate with undici: a request is sent when it is
 * due, whether or not the earlier ones have finished, so a slow server cannot
 * slow the client down and hide its own latency.
 * @param {LoadTarget} target
 * @param {{ rate: number, durationSeconds: number, stream: boolean }} settings
 */
async function runFixedRate(target, { rate, durationSeconds, stream }) {
  const url = new URL(target.url);
  const pool = new Pool(url.origin, { connections: 256, pipelining: 1 });
  const total = Math.max(1, Math.round(rate * durationSeconds));
  const intervalMs = 1_000 / rate;
  /** @type {number[]} */
  const latencies = [];
  /** @type {number[]} */
  const firstBytes = [];
  let failed = 0;
  /** @type {Set<Promise<void>>} */
  const pending = new Set();

  async function one() {
    const sentAt = performance.now();
    const response = await pool.request({
      method: 'POST',
      path: url.pathname,
      headers: target.headers,
      body: target.body,
      signal: AbortSignal.timeout(10_000),
    });
    let firstByteAt = 0;
    let text = '';
    for await (const part of response.body) {
      if (firstByteAt === 0 && part.length > 0) firstByteAt = performance.now();
      // Only stream replies are checked for their end; keep them (they are small).
      if (stream) text += part.toString();
    }
    const endAt = performance.now();
    if (response.statusCode !== 200 || (stream && !text.endsWith('data: [DONE]\n\n'))) {
      failed++;
      return;
    }
    latencies.push(endAt - sentAt);
    firstBytes.push(firstByteAt - sentAt);
  }

  const startedAt = performance.now();
  for (let index = 0; index < total; index++) {
    const wait = startedAt + index * intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    const request = one().catch(() => {
      failed++;
    });
    pending.add(request);
    void request.finally(() => pending.delete(request));
  }
  const sendingSeconds = (performance.now() - startedAt) / 1_000;
  // Every request has its own 10 s timeout; this bound is only a backstop.
  await withDeadline(Promise.allSettled([...pending]), 15_000, 'fixed-rate requests still pending').catch(() => undefined);
  await pool.destroy();
  return {
    sent: total,
    completed: latencies.length,
    failed,
    achievedRate: total / sendingSeconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    firstByteP50Ms: percentile(firstBytes, 50),
    firstByteP99Ms: percentile(firstBytes, 99),
  };
}

/** Nearest-rank percentile. @param {number[]} values @param {number} rank */
function percentile(values, rank) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((rank / 100) * sorted.length) - 1))];
}

/** @param {number[]} values */
function median(values) {
  const finite = values.filter((value) => Number.isFinite(value));
  return finite.length === 0 ? Number.NaN : percentile(finite, 50);
}

// ---------------------------------------------------------------------------
// Checks before measuring: both paths must give the same, correct replies.

/**
 * @param {LoadTarget} target
 * @param {boolean} stream
 * @param {string} label
 */
async function checkReply(target, stream, label) {
  const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${label}: HTTP ${response.status}: ${text.slice(0, 500)}`);
  if (stream) {
    const events = text.split('\n\n').filter((event) => event.startsWith('data: '));
    const usageEvents = events.filter((event) => event.includes('"usage"') && event.includes('"choices":[]'));
    if (events.length !== 24 || events[23] !== 'data: [DONE]' || usageEvents.length !== 1) {
      throw new Error(`${label}: expected 23 events with a usage chunk, then [DONE]; got ${events.length} events:\n${text.slice(0, 800)}`);
    }
  } else {
    const body = JSON.parse(text);
    if (body.object !== 'chat.completion' || body.usage?.completion_tokens !== 20) throw new Error(`${label}: unexpected reply ${text.slice(0, 500)}`);
  }
}

// ---------------------------------------------------------------------------
// One measurement

/**
 * @typedef {object} Servers
 * @property {{ pid: number, origin: string, url: string }} mock
 * @property {{ pid: number, origin: string, url: string }} gapMock
 * @property {{ pid: number, origin: string, adminKey: string }} taskgate
 */

/**
 * Runs closed-loop load on one path and reads the servers' CPU and peak RSS around it.
 * @param {'direct' | 'through'} path
 * @param {LoadTarget} target
 * @param {Servers} servers
 * @param {(target: LoadTarget) => Promise<LoadResult>} load
 */
async function measureSaturation(path, target, servers, load) {
  const measured = path === 'direct' ? [servers.mock.pid] : [servers.taskgate.pid, servers.mock.pid];
  const peakResets = measured.map(resetPeakRss);
  const cpuBefore = measured.map(cpuMicroseconds);
  const machineBefore = machineTicks();
  const result = await load(target);
  const machineAfter = machineTicks();
  const settleMs = await waitUntilIdle(measured, 10_000);
  const cpuPerRequest = measured.map((pid, index) => (cpuMicroseconds(pid) - cpuBefore[index]) / Math.max(1, result.completed));
  const peaks = measured.map(peakRssMegabytes);
  return {
    requestsPerSecond: result.completed / result.durationSeconds,
    completed: result.completed,
    failed: result.failed,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    /** The mock for direct calls, taskgate for calls through it. */
    serverCpuMicrosPerRequest: cpuPerRequest[0],
    /** The mock's share while serving through taskgate (null for direct: it is the server). */
    mockCpuMicrosPerRequest: path === 'through' ? cpuPerRequest[1] : null,
    serverPeakRssMegabytes: peaks[0],
    peakRssIsPerRun: peakResets[0],
    /** How long the servers kept busy after the last response (trace writes). */
    settleMs,
    stealPercent: stealPercent(machineBefore, machineAfter),
  };
}

/**
 * The same fixed-rate load, with the server's CPU per request at that rate.
 * @param {LoadTarget} target
 * @param {number} serverPid
 * @param {{ rate: number, durationSeconds: number, stream: boolean }} settings
 */
async function measureFixedRate(target, serverPid, settings) {
  const cpuBefore = cpuMicroseconds(serverPid);
  const machineBefore = machineTicks();
  const result = await runFixedRate(target, settings);
  const machineAfter = machineTicks();
  await waitUntilIdle([serverPid], 10_000);
  return {
    stealPercent: stealPercent(machineBefore, machineAfter), ...result, serverCpuMicrosPerRequest: (cpuMicroseconds(serverPid) - cpuBefore) / Math.max(1, result.completed + result.failed) };
}

// ---------------------------------------------------------------------------
// Reporting

/** @param {number} value @param {number} [digits] */
function format(value, digits = 0) {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** @param {number} through @param {number} direct */
function ratio(through, direct) {
  return Number.isFinite(through) && Number.isFinite(direct) && direct !== 0 ? `${format(through / direct, 2)}×` : 'n/a';
}

/**
 * Medians of every numeric field over the repeats.
 * @template {Record<string, any>} T
 * @param {T[]} runs
 * @returns {T}
 */
function medianOf(runs) {
  /** @type {Record<string, any>} */
  const result = {};
  for (const key of Object.keys(runs[0] ?? {})) {
    const values = runs.map((run) => run[key]);
    result[key] = typeof values[0] === 'number' ? median(values) : values[0];
  }
  return /** @type {T} */ (result);
}

/** @param {any} report */
function markdownReport(report) {
  const { environment, settings, medians } = report;
  const lines = [];
  lines.push(`### taskgate overhead (${settings.repeat === 1 ? 'one run' : `medians of ${settings.repeat} runs`})`, '');
  lines.push(
    `Machine: ${environment.cpuModel}, ${environment.cores} cores, ${format(environment.memoryGigabytes, 0)} GB; Node ${environment.node}; ` +
      `taskgate ${environment.commit}${environment.sourceChanged ? ' (with uncommitted src/ changes)' : ''}; ` +
      `load generator: ${environment.loadGenerator}; load average at start ${environment.loadAverageAtStart}.`,
    '',
  );

  if (medians.saturation.length > 0) {
    lines.push(`**Saturation** (${settings.connections} connections, ${settings.durationSeconds} s, ${environment.loadGenerator.split(' ')[0]}):`, '');
    lines.push('| Load | Path | req/s | p50 ms | p99 ms | Server CPU µs/req | Mock CPU µs/req | Server peak RSS MB |');
    lines.push('|---|---|---:|---:|---:|---:|---:|---:|');
    for (const { kind, direct, through } of medians.saturation) {
      const label = kind === 'json' ? 'JSON' : 'stream (23 events)';
      lines.push(
        `| ${label} | direct (mock) | ${format(direct.requestsPerSecond)} | ${format(direct.p50Ms, 2)} | ${format(direct.p99Ms, 2)} | ${format(direct.serverCpuMicrosPerRequest)} (mock) | — | ${format(direct.serverPeakRssMegabytes)} (mock) |`,
      );
      lines.push(
        `| ${label} | through taskgate | ${format(through.requestsPerSecond)} | ${format(through.p50Ms, 2)} | ${format(through.p99Ms, 2)} | **${format(through.serverCpuMicrosPerRequest)}** (taskgate) | ${format(through.mockCpuMicrosPerRequest)} | ${format(through.serverPeakRssMegabytes)} (taskgate) |`,
      );
      lines.push(
        `| ${label} | through / direct | ${ratio(through.requestsPerSecond, direct.requestsPerSecond)} | ${ratio(through.p50Ms, direct.p50Ms)} | ${ratio(through.p99Ms, direct.p99Ms)} | ${ratio(through.serverCpuMicrosPerRequest, direct.serverCpuMicrosPerRequest)} | | ${ratio(through.serverPeakRssMegabytes, direct.serverPeakRssMegabytes)} |`,
      );
    }
    lines.push('');
  }

  if (medians.fixedRate !== null) {
    const { direct, through } = medians.fixedRate;
    lines.push(`**Fixed rate**, JSON, ${format(settings.rate)} req/s open loop (undici), ${settings.durationSeconds} s:`, '');
    lines.push('| Path | p50 ms | p99 ms | Server CPU µs/req at this rate |');
    lines.push('|---|---:|---:|---:|');
    lines.push(`| direct (mock) | ${format(direct.p50Ms, 3)} | ${format(direct.p99Ms, 3)} | ${format(direct.serverCpuMicrosPerRequest)} (mock) |`);
    lines.push(`| through taskgate | ${format(through.p50Ms, 3)} | ${format(through.p99Ms, 3)} | ${format(through.serverCpuMicrosPerRequest)} (taskgate) |`);
    lines.push(`| added by taskgate | **${format(through.p50Ms - direct.p50Ms, 3)}** | ${format(through.p99Ms - direct.p99Ms, 3)} | |`);
    lines.push('');
  }

  if (medians.firstByte !== null) {
    const { direct, through } = medians.firstByte;
    lines.push(
      `**Time to first byte** of streams, ${format(settings.ttfbRate)} streams/s open loop (undici), mock with ${format(settings.ttfbGapMs)} ms between events:`,
      '',
    );
    lines.push('| Path | TTFB p50 ms | TTFB p99 ms | whole stream p50 ms | whole stream p99 ms |');
    lines.push('|---|---:|---:|---:|---:|');
    lines.push(`| direct (mock) | ${format(direct.firstByteP50Ms, 3)} | ${format(direct.firstByteP99Ms, 3)} | ${format(direct.p50Ms, 1)} | ${format(direct.p99Ms, 1)} |`);
    lines.push(`| through taskgate | ${format(through.firstByteP50Ms, 3)} | ${format(through.firstByteP99Ms, 3)} | ${format(through.p50Ms, 1)} | ${format(through.p99Ms, 1)} |`);
    lines.push(
      `| added by taskgate | ${format(through.firstByteP50Ms - direct.firstByteP50Ms, 3)} | ${format(through.firstByteP99Ms - direct.firstByteP99Ms, 3)} | ${format(through.p50Ms - direct.p50Ms, 1)} | ${format(through.p99Ms - direct.p99Ms, 1)} |`,
    );
    lines.push('');
  }

  if (report.targets.length > 0) {
    lines.push('**Targets** (tracing on):', '');
    lines.push('| Target | Measured | Met |');
    lines.push('|---|---|---|');
    for (const target of report.targets) lines.push(`| ${target.target} | ${target.measured} | ${target.met ? 'yes' : '**no**'} |`);
    lines.push('');
  }
  for (const warning of report.warnings) lines.push(`> warning: ${warning}`);
  return lines.join('\n');
}

/** @param {any} medians @param {Options} options */
function evaluateTargets(medians, options) {
  const targets = [];
  const json = medians.saturation.find((/** @type {any} */ entry) => entry.kind === 'json');
  if (json !== undefined) {
    const cpu = json.through.serverCpuMicrosPerRequest;
    targets.push({ target: 'taskgate CPU per non-streamed call ≤ 150 µs (saturation)', measured: `${format(cpu)} µs`, met: cpu <= 150 });
  }
  if (medians.fixedRate !== null) {
    const added = medians.fixedRate.through.p50Ms - medians.fixedRate.direct.p50Ms;
    targets.push({ target: `added p50 latency < 0.5 ms at ${format(options.rate)} req/s`, measured: `${format(added, 3)} ms`, met: added < 0.5 });
  }
  if (medians.firstByte !== null) {
    const { direct, through } = medians.firstByte;
    const added = through.firstByteP50Ms - direct.firstByteP50Ms;
    // A stall is the first event held back: until a later event arrives (at least one gap,
    // `--ttfb-gap-ms`), until the whole reply is in, or by Nagle and delayed ACKs (40 ms).
    // Either shows as added TTFB far above taskgate's per-call cost, so: p50 under 2 ms, p99 under half a gap.
    const addedP99 = through.firstByteP99Ms - direct.firstByteP99Ms;
    const p99Limit = options.ttfbGapMs / 2;
    targets.push({
      target: `no stall in stream TTFB (added p50 < 2 ms, added p99 < ${format(p99Limit, 0)} ms, with ${format(options.ttfbGapMs, 0)} ms between events)`,
      measured: `+${format(added, 2)} ms p50, +${format(addedP99, 2)} ms p99 (whole stream ${format(through.p50Ms, 0)} ms)`,
      met: added < 2 && addedP99 < p99Limit,
    });
  }
  return targets;
}

// ---------------------------------------------------------------------------
// Main

async function main() {
  const options = readOptions();
  if (options === null) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  if (process.platform !== 'linux') throw new Error('the benchmark reads CPU and memory from /proc: Linux only');
  const useWrk = options.loadGenerator === 'wrk' || (options.loadGenerator === 'auto' && wrkInstalled());
  if (options.loadGenerator === 'wrk' && !wrkInstalled()) throw new Error('--load-generator wrk, but wrk is not installed');
  const loadGenerator = useWrk ? `${wrkVersion()} (1 thread)` : 'autocannon 8 (in the bench process)';
  const kinds = options.only === 'all' ? ['json', 'stream'] : [options.only];

  const startedAt = new Date().toISOString();
  const environment = describeEnvironment(loadGenerator);
  const directory = mkdtempSync(join(tmpdir(), 'taskgate-bench-'));
  temporaryDirectory = options.keep ? null : directory;
  if (options.cpuProfileDirectory !== undefined) mkdirSync(options.cpuProfileDirectory, { recursive: true });
  /** @type {{ child: import('node:child_process').ChildProcess }[]} */
  const started = [];
  const warnings = [];
  try {
    log(`load generator: ${loadGenerator}; temporary directory ${directory}`);
    const mock = await startMockEngineProcess(0);
    started.push(mock);
    const gapMock = await startMockEngineProcess(options.ttfbGapMs);
    started.push(gapMock);
    const taskgate = await startTaskgate({ directory, mockUrl: mock.url, gapMockUrl: gapMock.url, cpuProfileDirectory: options.cpuProfileDirectory });
    started.push(taskgate);
    log(`mock engine pid ${mock.pid}, gap mock pid ${gapMock.pid}, taskgate pid ${taskgate.pid} at ${taskgate.origin}`);
    /** @type {Servers} */
    const servers = { mock, gapMock, taskgate };

    const headers = chatHeaders(taskgate.adminKey);
    /** @param {'direct' | 'through'} path @param {string} kind @param {boolean} [gap] @returns {LoadTarget} */
    const targetFor = (path, kind, gap = false) => {
      const base = path === 'direct' ? (gap ? gapMock.url : mock.url) : `${taskgate.origin}/v1`;
      return { url: `${base}/chat/completions`, headers, body: chatBody(gap && path === 'through' ? 'bench-model-gap' : 'bench-model', kind === 'stream') };
    };

    // Both paths must answer correctly before anything is measured.
    for (const kind of ['json', 'stream']) {
      for (const path of /** @type {const} */ (['direct', 'through'])) {
        await checkReply(targetFor(path, kind), kind === 'stream', `${kind} ${path}`);
        await checkReply(targetFor(path, kind, true), kind === 'stream', `${kind} ${path} (gap mock)`);
      }
    }

    /** @param {number} durationSeconds @returns {(target: LoadTarget) => Promise<LoadResult>} */
    const saturate = (durationSeconds) => (target) =>
      useWrk
        ? runWrk(target, { connections: options.connections, durationSeconds, directory })
        : runAutocannon(target, { connections: options.connections, durationSeconds });

    log(`warming up (${options.warmupSeconds} s per path and kind)`);
    for (const kind of kinds) {
      for (const path of /** @type {const} */ (['through', 'direct'])) await saturate(options.warmupSeconds)(targetFor(path, kind));
    }
    await runFixedRate(targetFor('through', 'stream', true), { rate: options.ttfbRate, durationSeconds: Math.min(1, options.warmupSeconds), stream: true });

    /** @type {any[]} */
    const runs = [];
    let throughCompleted = 0;
    for (let repetition = 0; repetition < options.repeat; repetition++) {
      // Alternate which path goes first, so a drift in machine load does not favour one.
      /** @type {('direct' | 'through')[]} */
      const order = repetition % 2 === 0 ? ['direct', 'through'] : ['through', 'direct'];
      const run = { saturation: /** @type {any[]} */ ([]), fixedRate: /** @type {any} */ (null), firstByte: /** @type {any} */ (null) };
      for (const kind of kinds) {
        /** @type {Record<string, any>} */
        const entry = { kind };
        for (const path of order) {
          log(`run ${repetition + 1}/${options.repeat}: ${kind} saturation, ${path}`);
          entry[path] = await measureSaturation(path, targetFor(path, kind), servers, saturate(options.durationSeconds));
          if (path === 'through') throughCompleted += entry[path].completed;
        }
        run.saturation.push(entry);
      }
      if (kinds.includes('json')) {
        /** @type {Record<string, any>} */
        const entry = {};
        for (const path of order) {
          log(`run ${repetition + 1}/${options.repeat}: JSON at ${options.rate} req/s, ${path}`);
          const serverPid = path === 'direct' ? mock.pid : taskgate.pid;
          entry[path] = await measureFixedRate(targetFor(path, 'json'), serverPid, { rate: options.rate, durationSeconds: options.durationSeconds, stream: false });
          if (path === 'through') throughCompleted += entry[path].completed;
        }
        run.fixedRate = entry;
      }
      if (kinds.includes('stream')) {
        /** @type {Record<string, any>} */
        const entry = {};
        for (const path of order) {
          log(`run ${repetition + 1}/${options.repeat}: stream time to first byte at ${options.ttfbRate}/s, ${path}`);
          const serverPid = path === 'direct' ? gapMock.pid : taskgate.pid;
          entry[path] = await measureFixedRate(targetFor(path, 'stream', true), serverPid, { rate: options.ttfbRate, durationSeconds: options.durationSeconds, stream: true });
          if (path === 'through') throughCompleted += entry[path].completed;
        }
        run.firstByte = entry;
      }
      runs.push(run);
    }

    const medians = {
      saturation: kinds.map((kind) => {
        const entries = runs.map((run) => run.saturation.find((/** @type {any} */ entry) => entry.kind === kind));
        return { kind, direct: medianOf(entries.map((entry) => entry.direct)), through: medianOf(entries.map((entry) => entry.through)) };
      }),
      fixedRate: runs[0].fixedRate === null ? null : { direct: medianOf(runs.map((run) => run.fixedRate.direct)), through: medianOf(runs.map((run) => run.fixedRate.through)) },
      firstByte: runs[0].firstByte === null ? null : { direct: medianOf(runs.map((run) => run.firstByte.direct)), through: medianOf(runs.map((run) => run.firstByte.through)) },
    };

    for (const run of runs) {
      for (const entry of run.saturation) {
        for (const path of ['direct', 'through']) {
          if (entry[path].failed > 0) warnings.push(`${entry.kind} ${path}: ${entry[path].failed} failed requests`);
          if (entry[path].stealPercent > 5) warnings.push(`${entry.kind} ${path}: ${format(entry[path].stealPercent)}% of the machine's time was stolen by the hypervisor`);
        }
        if (!entry.through.peakRssIsPerRun) warnings.push('peak RSS could not be reset between runs: it is the peak since start');
      }
      for (const part of [run.fixedRate, run.firstByte]) {
        if (part === null) continue;
        for (const path of ['direct', 'through']) {
          if (part[path].failed > 0) warnings.push(`fixed-rate ${path}: ${part[path].failed} failed requests`);
          if (part[path].stealPercent > 5) warnings.push(`fixed-rate ${path}: ${format(part[path].stealPercent)}% of the machine's time was stolen by the hypervisor`);
        }
      }
    }

    // Stop taskgate now: it writes its pending traces (and its CPU profile) on the way out.
    await stopChild(taskgate.child, 20_000);
    const traceCount = countTraces(taskgate.sqlitePath);
    if (traceCount !== null && traceCount < throughCompleted) {
      warnings.push(`taskgate stored ${traceCount} traces for at least ${throughCompleted} measured calls: tracing fell behind`);
    }
    const taskgateWarnings = taskgate.log.text.split('\n').filter((line) => line.includes('"level":"warn"') || line.includes('"level":"error"'));
    if (taskgateWarnings.length > 0) warnings.push(`taskgate logged ${taskgateWarnings.length} warnings or errors, e.g. ${taskgateWarnings[0]?.slice(0, 300)}`);

    const report = {
      startedAt,
      environment,
      settings: {
        durationSeconds: options.durationSeconds,
        connections: options.connections,
        repeat: options.repeat,
        rate: options.rate,
        ttfbRate: options.ttfbRate,
        ttfbGapMs: options.ttfbGapMs,
        warmupSeconds: options.warmupSeconds,
        only: options.only,
        cpuProfile: options.cpuProfileDirectory !== undefined,
        requestBodyBytes: Buffer.byteLength(chatBody('bench-model', false)),
      },
      tracesStored: traceCount,
      medians,
      targets: evaluateTargets(medians, options),
      warnings: [...new Set(warnings)],
      runs,
    };
    const markdown = markdownReport(report);
    process.stdout.write(`\n${markdown}\n`);

    mkdirSync(options.outputDirectory, { recursive: true });
    const stamp = report.startedAt.replace(/[:.]/g, '-');
    const resultPath = join(options.outputDirectory, `overhead-${stamp}.json`);
    writeFileSync(resultPath, `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(options.outputDirectory, `overhead-${stamp}.md`), `${markdown}\n`);
    log(`results written to ${resultPath}`);

    if (options.cpuProfileDirectory !== undefined) {
      const profiles = readdirSync(options.cpuProfileDirectory).filter((name) => name.endsWith('.cpuprofile'));
      const newest = profiles.sort().at(-1);
      if (newest === undefined) warnings.push('no CPU profile was written');
      else {
        const profilePath = join(options.cpuProfileDirectory, newest);
        process.stdout.write(`\nCPU profile ${profilePath}\n${formatProfileSummary(summariseProfile(profilePath, { repositoryRoot }))}\n`);
      }
    }
  } finally {
    await Promise.allSettled(started.map(({ child }) => stopChild(child, 5_000)));
    if (!options.keep) rmSync(directory, { recursive: true, force: true });
  }
}

/** @param {string} sqlitePath */
function countTraces(sqlitePath) {
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

/** @param {string} loadGenerator */
function describeEnvironment(loadGenerator) {
  /** @param {string[]} args */
  const git = (args) => {
    try {
      return execFileSync('git', args, { cwd: repositoryRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 }).trim();
    } catch {
      return '';
    }
  };
  return {
    cpuModel: cpus()[0]?.model ?? 'unknown CPU',
    cores: cpus().length,
    memoryGigabytes: totalmem() / 1024 ** 3,
    node: process.version,
    commit: git(['rev-parse', '--short', 'HEAD']) || 'unknown commit',
    sourceChanged: git(['status', '--porcelain', '--', 'src']) !== '',
    loadGenerator,
    loadAverageAtStart: loadavg()
      .map((value) => value.toFixed(2))
      .join(' '),
  };
}

/** @param {string} message */
function log(message) {
  process.stderr.write(`bench: ${message}\n`);
}

main().catch((error) => {
  process.stderr.write(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
