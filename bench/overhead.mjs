#!/usr/bin/env node
/**
 * taskgate's overhead benchmark: what a call costs going through taskgate
 * compared with going straight to the engine.
 *
 * It starts, each in its own process (so no CPU is counted for the wrong one):
 * two mock engines (bench/mock-engine.mjs), one that answers at once and one
 * that leaves `--ttfb-gap-ms` between stream events; a bare node:http + undici
 * pass-through (bench/bare-proxy.mjs), the floor any Node gateway starts from;
 * and taskgate (dist/, a fresh temporary data directory and config, tracing
 * on). It checks that every path answers correctly, warms up, and measures
 * each path (direct to the mock, through the bare proxy, through taskgate):
 *
 *   1. saturation, JSON and streamed: `--connections` connections for
 *      `--duration` seconds: req/s, p50/p99 latency, server CPU per request
 *      (utime+stime from /proc/<pid>/stat of the process that answers the
 *      client, and of the mock behind it separately), peak RSS (VmHWM, reset
 *      before each run when the kernel allows it);
 *   2. a fixed rate (`--rate`, 200 req/s) of JSON calls from an open-loop
 *      client: the latency taskgate adds when it is not saturated;
 *   3. time to first byte of streams at a low fixed rate (`--ttfb-rate`)
 *      against the mock with gaps between events, so a gateway that held
 *      events back would show it.
 *
 * The saturation load comes from wrk when it is installed (it costs less CPU
 * than autocannon on a small machine), else from autocannon (a devDependency).
 * The fixed-rate runs use undici directly. A run disturbed by steal time or
 * other processes is measured again (`--max-noise`, `--retries`). Results are
 * printed as Markdown and written to bench/results/ as JSON and Markdown.
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
const bareProxyEntry = join(repositoryRoot, 'bench', 'bare-proxy.mjs');

const usage = `Usage: node bench/overhead.mjs [options]   (or: npm run bench -- [options])

Options:
  --duration S          seconds per measured run (default 10; --quick: 2)
  --connections N       connections of the saturation runs (default 32)
  --repeat N            measure everything N times and report medians (default 1)
  --rate R              requests per second of the fixed-rate JSON run (default 200)
  --ttfb-rate R         streams per second of the time-to-first-byte run (default 20)
  --ttfb-gap-ms MS      gap between stream events of the mock used for TTFB (default 20)
  --warmup S            seconds of warm-up load per path and kind (default 3; --quick: 1)
  --max-noise P         measure a run again when steal time plus other processes' CPU
                        took more than P% of the machine during it (default 5)
  --retries N           at most N such re-runs per measurement (default 2; 0 to disable)
  --only KIND           json | stream | all (default all)
  --skip-baseline       do not measure the bare node:http + undici pass-through
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
 * @property {number} maxNoisePercent
 * @property {number} retries
 * @property {'json' | 'stream' | 'all'} only
 * @property {'auto' | 'wrk' | 'autocannon'} loadGenerator
 * @property {string | undefined} cpuProfileDirectory
 * @property {string} outputDirectory
 * @property {boolean} keep
 * @property {boolean} skipBaseline
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
      'max-noise': { type: 'string', default: '5' },
      retries: { type: 'string', default: '2' },
      only: { type: 'string', default: 'all' },
      'load-generator': { type: 'string', default: 'auto' },
      'cpu-prof': { type: 'string' },
      output: { type: 'string', default: join(repositoryRoot, 'bench', 'results') },
      keep: { type: 'boolean', default: false },
      'skip-baseline': { type: 'boolean', default: false },
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
    maxNoisePercent: positiveNumber(values['max-noise'], '--max-noise', 100),
    retries: Math.round(nonNegativeNumber(values.retries, '--retries', 10)),
    only,
    loadGenerator,
    cpuProfileDirectory: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    outputDirectory: resolve(values.output),
    keep: values.keep === true,
    skipBaseline: values['skip-baseline'] === true,
    quick,
  };
}

/** @param {string} text @param {string} name @param {number} maximum */
function nonNegativeNumber(text, name, maximum) {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || value > maximum) throw new Error(`${name} must be a number in [0, ${maximum}], not ${text}`);
  return value;
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
 * Starts a helper script (the mock engine, the bare proxy) in its own process,
 * so its CPU is never counted as taskgate's, and waits for the JSON line it
 * prints once it listens: `{"<marker>":"listening","port":N,...}`.
 * @param {string[]} args  the script and its arguments
 * @param {string} marker
 * @param {string} name   for error messages
 */
async function startListeningChild(args, marker, name) {
  const child = startChild(process.execPath, args);
  const errors = keepTail(child.stderr);
  const output = keepTail(child.stdout);
  // Bounded: 100 polls of 100 ms.
  for (let attempt = 0; attempt < 100 && !hasExited(child); attempt++) {
    const line = output.text.split('\n').find((candidate) => candidate.includes(`"${marker}":"listening"`));
    if (line !== undefined) return { child, pid: /** @type {number} */ (child.pid), line: JSON.parse(line) };
    await sleep(100);
  }
  await stopChild(child, 1_000);
  throw new Error(`${name} did not start within 10 s: ${errors.text || output.text}`);
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
 * CPU time the process (all its threads) has used so far, in microseconds: user and system (kernel).
 * @param {number} pid
 */
function cpuTimes(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name, field 3 (state) is index 0, so utime (14) and stime (15) are 11 and 12.
  const microsPerTick = 1_000_000 / clockTicksPerSecond;
  return { user: Number(fields[11]) * microsPerTick, system: Number(fields[12]) * microsPerTick };
}

/** User + system CPU time so far, in microseconds. @param {number} pid */
function cpuMicroseconds(pid) {
  const { user, system } = cpuTimes(pid);
  return user + system;
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

/** The processes this script started and measures (servers); set once they run. */
const ownServerPids = /** @type {number[]} */ ([]);

/**
 * What the machine as a whole, and this script with everything it started,
 * have used so far (microseconds). From /proc/stat's first line (all cores) and
 * /proc/<pid>/stat; this process's own line includes its reaped children (wrk).
 */
function noiseSnapshot() {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map((field) => (Number(field) * 1_000_000) / clockTicksPerSecond);
  const self = readFileSync('/proc/self/stat', 'utf8');
  const selfFields = self.slice(self.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime are fields 14-17: indexes 11-14 after the name.
  const selfTicks = Number(selfFields[11]) + Number(selfFields[12]) + Number(selfFields[13]) + Number(selfFields[14]);
  let own = (selfTicks * 1_000_000) / clockTicksPerSecond;
  for (const pid of ownServerPids) own += cpuMicroseconds(pid);
  return { total: user + nice + system + idle + iowait + irq + softirq + steal, busy: user + nice + system + irq + softirq, steal, own };
}

/**
 * How disturbed a run was, in % of the machine's time (both cores): the time the
 * hypervisor gave to other guests (steal), and the CPU used by processes this
 * script did not start (other engineers' tests, say). Either makes every figure
 * of the run worse, CPU per request included (caches go cold).
 * @param {ReturnType<typeof noiseSnapshot>} before @param {ReturnType<typeof noiseSnapshot>} after
 */
function noiseBetween(before, after) {
  const total = Math.max(1, after.total - before.total);
  const stealPercent = (100 * (after.steal - before.steal)) / total;
  const otherProcessesPercent = Math.max(0, (100 * (after.busy - before.busy - (after.own - before.own))) / total);
  return { stealPercent, otherProcessesPercent, noisePercent: stealPercent + otherProcessesPercent };
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

/** The middle value; the mean of the two middle ones for an even count. @param {number[]} values */
function median(values) {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
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

/** @typedef {'direct' | 'bare' | 'through'} PathName */

/** How each path is named in the report. */
const pathLabels = { direct: 'direct (mock)', bare: 'bare pass-through', through: 'through taskgate' };
/** Which process answers the client on each path. */
const serverNames = { direct: 'mock', bare: 'bare proxy', through: 'taskgate' };
/** The rows of what a proxy added over direct calls. */
const addedLabels = { bare: 'added by the bare proxy', through: 'added by taskgate' };

/**
 * @typedef {object} Servers
 * @property {{ pid: number, url: string }} mock
 * @property {{ pid: number, url: string }} gapMock
 * @property {{ pid: number, origin: string } | null} bare
 * @property {{ pid: number, origin: string, adminKey: string }} taskgate
 */

/**
 * The process that answers the client on a path, and the mock behind it (null when the mock answers).
 * @param {PathName} path @param {Servers} servers @param {boolean} gap
 */
function processesOf(path, servers, gap) {
  const mock = gap ? servers.gapMock : servers.mock;
  if (path === 'direct') return { serverPid: mock.pid, upstreamPid: null };
  const server = path === 'bare' ? servers.bare : servers.taskgate;
  if (server === null) throw new Error(`no server for path ${path}`);
  return { serverPid: server.pid, upstreamPid: mock.pid };
}

/**
 * Runs closed-loop load on one path and reads the servers' CPU and peak RSS around it.
 * @param {LoadTarget} target
 * @param {number} serverPid     the process that answers the client
 * @param {number | null} upstreamPid  the mock behind it, if it is not the mock itself
 * @param {(target: LoadTarget) => Promise<LoadResult>} load
 */
async function measureSaturation(target, serverPid, upstreamPid, load) {
  const measured = upstreamPid === null ? [serverPid] : [serverPid, upstreamPid];
  const peakResets = measured.map(resetPeakRss);
  const cpuBefore = measured.map(cpuTimes);
  const noiseBefore = noiseSnapshot();
  const result = await load(target);
  const noise = noiseBetween(noiseBefore, noiseSnapshot());
  const settleMs = await waitUntilIdle(measured, 10_000);
  const cpuAfter = measured.map(cpuTimes);
  const requests = Math.max(1, result.completed);
  const userPerRequest = measured.map((_, index) => (cpuAfter[index].user - cpuBefore[index].user) / requests);
  const systemPerRequest = measured.map((_, index) => (cpuAfter[index].system - cpuBefore[index].system) / requests);
  const cpuPerRequest = measured.map((_, index) => userPerRequest[index] + systemPerRequest[index]);
  return {
    requestsPerSecond: result.completed / result.durationSeconds,
    completed: result.completed,
    failed: result.failed,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    /** The process that answers the client: the mock, the bare proxy or taskgate. */
    serverCpuMicrosPerRequest: cpuPerRequest[0],
    /** The kernel's share of it (sockets, epoll, SQLite's file writes). */
    serverSystemMicrosPerRequest: systemPerRequest[0],
    /** The mock's CPU behind a proxy (null when the mock is the server). */
    mockCpuMicrosPerRequest: upstreamPid === null ? null : cpuPerRequest[1],
    serverPeakRssMegabytes: peakRssMegabytes(serverPid),
    peakRssIsPerRun: peakResets[0],
    /** How long the servers kept busy after the last response (taskgate: trace writes). */
    settleMs,
    ...noise,
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
  const noiseBefore = noiseSnapshot();
  const result = await runFixedRate(target, settings);
  const noise = noiseBetween(noiseBefore, noiseSnapshot());
  await waitUntilIdle([serverPid], 10_000);
  return { ...result, serverCpuMicrosPerRequest: (cpuMicroseconds(serverPid) - cpuBefore) / Math.max(1, result.completed + result.failed), ...noise };
}

/**
 * A run disturbed by more than `--max-noise` % (see noiseBetween) is measured
 * again, up to `--retries` times; the least disturbed attempt is kept.
 * @template {{ noisePercent: number, stealPercent: number, otherProcessesPercent: number }} T
 * @param {Options} options @param {() => Promise<T>} measure
 * @returns {Promise<T & { attempts: number }>}
 */
async function measureQuietly(options, measure) {
  let best = await measure();
  let attempts = 1;
  while (best.noisePercent > options.maxNoisePercent && attempts <= options.retries) {
    log(`  ${describeNoise(best)} (over ${options.maxNoisePercent}%): measuring again`);
    const next = await measure();
    attempts++;
    if (next.noisePercent < best.noisePercent) best = next;
  }
  return { ...best, attempts };
}

/**
 * What each proxy path added to the direct figures of the same run (paired, so
 * drift in the machine's load between runs cancels out).
 * @param {Record<string, any>} entry @param {PathName[]} paths @param {string[]} fields
 */
function addedOver(entry, paths, fields) {
  /** @type {Record<string, Record<string, number>>} */
  const added = {};
  for (const path of paths) {
    if (path === 'direct') continue;
    added[path] = Object.fromEntries(fields.map((field) => [field, entry[path][field] - entry.direct[field]]));
  }
  return added;
}

// ---------------------------------------------------------------------------
// Reporting

/** @param {{ stealPercent: number, otherProcessesPercent: number }} noise */
function describeNoise(noise) {
  return `disturbed: ${format(noise.stealPercent)}% of the machine stolen by the hypervisor, ${format(noise.otherProcessesPercent)}% used by other processes`;
}

/** @param {number} value @param {number} [digits] */
function format(value, digits = 0) {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** With its sign, for differences. @param {number} value @param {number} [digits] */
function signed(value, digits = 0) {
  return Number.isFinite(value) && value >= 0 ? `+${format(value, digits)}` : format(value, digits);
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

/**
 * Medians per path, and of the per-run differences when the entries have them.
 * @param {Array<Record<string, any>>} entries @param {PathName[]} paths
 */
function medianOfPaths(entries, paths) {
  /** @type {Record<string, any>} */
  const result = {};
  for (const path of paths) result[path] = medianOf(entries.map((entry) => entry[path]));
  if (entries[0]?.added !== undefined) {
    result.added = {};
    for (const path of paths) if (path !== 'direct') result.added[path] = medianOf(entries.map((entry) => entry.added[path]));
  }
  return result;
}

/** @param {any} report */
function markdownReport(report) {
  const { environment, settings, medians } = report;
  /** @type {PathName[]} */
  const paths = settings.paths;
  const proxies = paths.filter((path) => path !== 'direct');
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
    lines.push('| Load | Path | req/s | p50 ms | p99 ms | Server CPU µs/req | of which kernel | Mock CPU µs/req | Server peak RSS MB |');
    lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const entry of medians.saturation) {
      const label = entry.kind === 'json' ? 'JSON' : 'stream (23 events)';
      /** The spread of a figure over the repeats, to show how noisy the machine was. @param {PathName} path @param {string} field */
      const spread = (path, field) => {
        if (report.runs.length < 2) return '';
        const values = report.runs.map((/** @type {any} */ run) => run.saturation.find((/** @type {any} */ candidate) => candidate.kind === entry.kind)[path][field]);
        return ` [${format(Math.min(...values))}–${format(Math.max(...values))}]`;
      };
      for (const path of paths) {
        const figures = entry[path];
        const cpu = `${format(figures.serverCpuMicrosPerRequest)}${spread(path, 'serverCpuMicrosPerRequest')} (${serverNames[path]})`;
        lines.push(
          `| ${label} | ${pathLabels[path]} | ${format(figures.requestsPerSecond)}${spread(path, 'requestsPerSecond')} | ${format(figures.p50Ms, 2)} | ${format(figures.p99Ms, 2)} | ` +
            `${path === 'through' ? `**${cpu}**` : cpu} | ${format(figures.serverSystemMicrosPerRequest)} | ${figures.mockCpuMicrosPerRequest === null ? '—' : format(figures.mockCpuMicrosPerRequest)} | ` +
            `${format(figures.serverPeakRssMegabytes)} (${serverNames[path]}) |`,
        );
      }
      const { direct, through } = entry;
      lines.push(
        `| ${label} | through / direct | ${ratio(through.requestsPerSecond, direct.requestsPerSecond)} | ${ratio(through.p50Ms, direct.p50Ms)} | ${ratio(through.p99Ms, direct.p99Ms)} | ` +
          `${ratio(through.serverCpuMicrosPerRequest, direct.serverCpuMicrosPerRequest)} | ${ratio(through.serverSystemMicrosPerRequest, direct.serverSystemMicrosPerRequest)} | | ` +
          `${ratio(through.serverPeakRssMegabytes, direct.serverPeakRssMegabytes)} |`,
      );
    }
    const notes = [];
    if (report.runs.length > 1) notes.push('[min–max] over the runs.');
    if (paths.includes('bare')) {
      const own = medians.saturation
        .map((/** @type {any} */ entry) => `${entry.kind === 'json' ? 'JSON' : 'streams'} ${signed(entry.through.serverCpuMicrosPerRequest - entry.bare.serverCpuMicrosPerRequest)} µs`)
        .join(', ');
      notes.push(`taskgate's own work per call (its CPU minus the bare pass-through's): ${own}.`);
    }
    if (notes.length > 0) lines.push('', notes.join(' '));
    lines.push('');
  }

  if (medians.fixedRate !== null) {
    const figures = medians.fixedRate;
    lines.push(`**Fixed rate**, JSON, ${format(settings.rate)} req/s open loop (undici), ${settings.durationSeconds} s:`, '');
    lines.push('| Path | p50 ms | p99 ms | Server CPU µs/req at this rate |');
    lines.push('|---|---:|---:|---:|');
    for (const path of paths) {
      lines.push(`| ${pathLabels[path]} | ${format(figures[path].p50Ms, 3)} | ${format(figures[path].p99Ms, 3)} | ${format(figures[path].serverCpuMicrosPerRequest)} (${serverNames[path]}) |`);
    }
    for (const path of proxies) {
      const added = figures.added[path];
      const p50 = signed(added.p50Ms, 3);
      lines.push(`| ${addedLabels[path]} | ${path === 'through' ? `**${p50}**` : p50} | ${signed(added.p99Ms, 3)} | |`);
    }
    lines.push('');
  }

  if (medians.firstByte !== null) {
    const figures = medians.firstByte;
    lines.push(
      `**Time to first byte** of streams, ${format(settings.ttfbRate)} streams/s open loop (undici), mock with ${format(settings.ttfbGapMs)} ms between events:`,
      '',
    );
    lines.push('| Path | TTFB p50 ms | TTFB p99 ms | whole stream p50 ms | whole stream p99 ms |');
    lines.push('|---|---:|---:|---:|---:|');
    for (const path of paths) {
      const { firstByteP50Ms, firstByteP99Ms, p50Ms, p99Ms } = figures[path];
      lines.push(`| ${pathLabels[path]} | ${format(firstByteP50Ms, 3)} | ${format(firstByteP99Ms, 3)} | ${format(p50Ms, 1)} | ${format(p99Ms, 1)} |`);
    }
    for (const path of proxies) {
      const { firstByteP50Ms, firstByteP99Ms, p50Ms, p99Ms } = figures.added[path];
      lines.push(`| ${addedLabels[path]} | ${signed(firstByteP50Ms, 3)} | ${signed(firstByteP99Ms, 3)} | ${signed(p50Ms, 1)} | ${signed(p99Ms, 1)} |`);
    }
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
    const baseline = json.bare === undefined ? '' : ` (bare pass-through: ${format(json.bare.serverCpuMicrosPerRequest)} µs)`;
    targets.push({ target: 'taskgate CPU per non-streamed call ≤ 150 µs (saturation)', measured: `${format(cpu)} µs${baseline}`, met: cpu <= 150 });
  }
  if (medians.fixedRate !== null) {
    const added = medians.fixedRate.added.through.p50Ms;
    const baseline = medians.fixedRate.added.bare === undefined ? '' : ` (bare pass-through: ${signed(medians.fixedRate.added.bare.p50Ms, 3)} ms)`;
    targets.push({ target: `added p50 latency < 0.5 ms at ${format(options.rate)} req/s`, measured: `${signed(added, 3)} ms${baseline}`, met: added < 0.5 });
  }
  if (medians.firstByte !== null) {
    const { through, added: { through: addedTimes } } = medians.firstByte;
    // A stall is the first event held back: until a later event arrives (at least one gap,
    // `--ttfb-gap-ms`), until the whole reply is in, or by Nagle and delayed ACKs (40 ms).
    // Each shows as added TTFB far above taskgate's per-call cost, so: p50 under 2 ms, p99 under half a gap.
    const p99Limit = options.ttfbGapMs / 2;
    targets.push({
      target: `no stall in stream TTFB (added p50 < 2 ms, added p99 < ${format(p99Limit, 0)} ms, with ${format(options.ttfbGapMs, 0)} ms between events)`,
      measured: `${signed(addedTimes.firstByteP50Ms, 2)} ms p50, ${signed(addedTimes.firstByteP99Ms, 2)} ms p99 (whole stream ${format(through.p50Ms, 0)} ms)`,
      met: addedTimes.firstByteP50Ms < 2 && addedTimes.firstByteP99Ms < p99Limit,
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
  /** @type {PathName[]} */
  const paths = options.skipBaseline ? ['direct', 'through'] : ['direct', 'bare', 'through'];

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
    const mockLine = await startListeningChild([mockEngineEntry, '--port', '0', '--gap-ms', '0'], 'mock_engine', 'the mock engine');
    started.push(mockLine);
    const gapMockLine = await startListeningChild([mockEngineEntry, '--port', '0', '--gap-ms', String(options.ttfbGapMs)], 'mock_engine', 'the mock engine with gaps');
    started.push(gapMockLine);
    const mock = { pid: mockLine.pid, url: mockLine.line.url, origin: `http://127.0.0.1:${mockLine.line.port}` };
    const gapMock = { pid: gapMockLine.pid, url: gapMockLine.line.url, origin: `http://127.0.0.1:${gapMockLine.line.port}` };
    let bare = null;
    if (paths.includes('bare')) {
      const bareLine = await startListeningChild([bareProxyEntry, '--upstream', mock.origin, '--gap-upstream', gapMock.origin], 'bare_proxy', 'the bare proxy');
      started.push(bareLine);
      bare = { pid: bareLine.pid, origin: `http://127.0.0.1:${bareLine.line.port}` };
    }
    const taskgate = await startTaskgate({ directory, mockUrl: mock.url, gapMockUrl: gapMock.url, cpuProfileDirectory: options.cpuProfileDirectory });
    started.push(taskgate);
    log(`mock engine pid ${mock.pid}, gap mock pid ${gapMock.pid}${bare === null ? '' : `, bare proxy pid ${bare.pid}`}, taskgate pid ${taskgate.pid} at ${taskgate.origin}`);
    ownServerPids.push(mock.pid, gapMock.pid, taskgate.pid);
    if (bare !== null) ownServerPids.push(bare.pid);
    /** @type {Servers} */
    const servers = { mock, gapMock, bare, taskgate };

    const headers = chatHeaders(taskgate.adminKey);
    /** @param {PathName} path @param {string} kind @param {boolean} [gap] @returns {LoadTarget} */
    const targetFor = (path, kind, gap = false) => {
      const base = path === 'direct' ? (gap ? gapMock.url : mock.url) : path === 'bare' ? `${bare?.origin}${gap ? '/gap' : ''}/v1` : `${taskgate.origin}/v1`;
      // taskgate reaches the mock with gaps through its own model; the others by address.
      const model = path === 'through' && gap ? 'bench-model-gap' : 'bench-model';
      return { url: `${base}/chat/completions`, headers, body: chatBody(model, kind === 'stream') };
    };

    // Every path must answer correctly before anything is measured.
    for (const kind of ['json', 'stream']) {
      for (const path of paths) {
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
      for (const path of [...paths].reverse()) await saturate(options.warmupSeconds)(targetFor(path, kind));
    }
    await runFixedRate(targetFor('through', 'stream', true), { rate: options.ttfbRate, durationSeconds: Math.min(1, options.warmupSeconds), stream: true });

    /** @type {any[]} */
    const runs = [];
    let throughCompleted = 0;
    for (let repetition = 0; repetition < options.repeat; repetition++) {
      // Alternate the order of the paths, so a drift in the machine's load does not favour one.
      const order = repetition % 2 === 0 ? paths : [...paths].reverse();
      const step = `run ${repetition + 1}/${options.repeat}`;
      const run = { saturation: /** @type {any[]} */ ([]), fixedRate: /** @type {any} */ (null), firstByte: /** @type {any} */ (null) };
      for (const kind of kinds) {
        /** @type {Record<string, any>} */
        const entry = { kind };
        for (const path of order) {
          log(`${step}: ${kind} saturation, ${pathLabels[path]}`);
          const { serverPid, upstreamPid } = processesOf(path, servers, false);
          entry[path] = await measureQuietly(options, () => measureSaturation(targetFor(path, kind), serverPid, upstreamPid, saturate(options.durationSeconds)));
          if (path === 'through') throughCompleted += entry[path].completed;
        }
        run.saturation.push(entry);
      }
      if (kinds.includes('json')) {
        /** @type {Record<string, any>} */
        const entry = {};
        for (const path of order) {
          log(`${step}: JSON at ${options.rate} req/s, ${pathLabels[path]}`);
          const { serverPid } = processesOf(path, servers, false);
          const settings = { rate: options.rate, durationSeconds: options.durationSeconds, stream: false };
          entry[path] = await measureQuietly(options, () => measureFixedRate(targetFor(path, 'json'), serverPid, settings));
          if (path === 'through') throughCompleted += entry[path].completed;
        }
        entry.added = addedOver(entry, paths, ['p50Ms', 'p99Ms']);
        run.fixedRate = entry;
      }
      if (kinds.includes('stream')) {
        /** @type {Record<string, any>} */
        const entry = {};
        for (const path of order) {
          log(`${step}: stream time to first byte at ${options.ttfbRate}/s, ${pathLabels[path]}`);
          const { serverPid } = processesOf(path, servers, true);
          const settings = { rate: options.ttfbRate, durationSeconds: options.durationSeconds, stream: true };
          entry[path] = await measureQuietly(options, () => measureFixedRate(targetFor(path, 'stream', true), serverPid, settings));
          if (path === 'through') throughCompleted += entry[path].completed;
        }
        entry.added = addedOver(entry, paths, ['firstByteP50Ms', 'firstByteP99Ms', 'p50Ms', 'p99Ms']);
        run.firstByte = entry;
      }
      runs.push(run);
    }

    const medians = {
      saturation: kinds.map((kind) => ({
        kind,
        ...medianOfPaths(
          runs.map((run) => run.saturation.find((/** @type {any} */ entry) => entry.kind === kind)),
          paths,
        ),
      })),
      fixedRate: runs[0].fixedRate === null ? null : medianOfPaths(runs.map((run) => run.fixedRate), paths),
      firstByte: runs[0].firstByte === null ? null : medianOfPaths(runs.map((run) => run.firstByte), paths),
    };

    for (const run of runs) {
      const parts = [
        ...run.saturation.map((/** @type {any} */ entry) => [`${entry.kind} saturation`, entry]),
        ['fixed-rate JSON', run.fixedRate],
        ['stream TTFB', run.firstByte],
      ];
      for (const [label, part] of parts) {
        if (part === null) continue;
        for (const path of paths) {
          if (part[path].failed > 0) warnings.push(`${label}, ${pathLabels[path]}: ${part[path].failed} failed requests`);
          if (part[path].noisePercent > options.maxNoisePercent) warnings.push(`${label}, ${pathLabels[path]}: ${describeNoise(part[path])}`);
          if (part[path].peakRssIsPerRun === false) warnings.push('peak RSS could not be reset between runs: it is the peak since start');
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
        maxNoisePercent: options.maxNoisePercent,
        retries: options.retries,
        only: options.only,
        paths,
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
      if (newest === undefined) log('no CPU profile was written');
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
