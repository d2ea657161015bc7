/**
 * Closed-loop saturation load: wrk when it is installed (it costs less CPU
 * than autocannon on a small machine), else autocannon (a devDependency).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keepTail, startChild, stopChild, withDeadline } from './child-processes.mjs';

/** @typedef {import('./chat-request.mjs').LoadTarget} LoadTarget */

/**
 * @typedef {object} LoadResult
 * @property {number} completed       responses received (any status)
 * @property {number} connections     connections actually opened (a multiple of the servers' count)
 * @property {number} failed          non-2xx responses, errors and timeouts
 * @property {number} durationSeconds
 * @property {number} p50Ms
 * @property {number} p99Ms
 */

export function wrkInstalled() {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore', timeout: 5_000 });
    return true;
  } catch (error) {
    // wrk --version exits 1 after printing its version; only a missing binary is "not installed".
    return /** @type {NodeJS.ErrnoException} */ (error).code !== 'ENOENT';
  }
}

export function wrkVersion() {
  // "wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer" (Debian's: "wrk debian/4.1.0-3+b2 [epoll] ..."): keep what precedes the copyright.
  /** @param {string} output */
  const firstLine = (output) =>
    output
      .split('\n')[0]
      ?.replace(/\s*Copyright.*$/, '')
      .trim() || 'wrk';
  try {
    return firstLine(execFileSync('wrk', ['--version'], { encoding: 'utf8', timeout: 5_000 }));
  } catch (error) {
    return firstLine(/** @type {{ stdout?: string }} */ (error).stdout ?? '');
  }
}

/** Lua string literal with everything escaped (bodies and keys never contain a quote that survives this). @param {string} text */
function luaString(text) {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/**
 * The connections to open against a target: as asked, rounded up to a
 * multiple of its servers, so every server gets as many.
 * @param {LoadTarget} target @param {number} connections
 */
export function connectionsFor(target, connections) {
  const servers = target.urls?.length ?? 1;
  return Math.ceil(connections / servers) * servers;
}

/**
 * Closed-loop saturation with wrk (one thread: the servers need the cores
 * more; one thread per server when the target has several, each thread's
 * connections going to its own server).
 * @param {LoadTarget} target
 * @param {{ connections: number, durationSeconds: number, directory: string, onStart?: (child: import('node:child_process').ChildProcess) => void }} settings
 * @returns {Promise<LoadResult>}
 */
export async function runWrk(target, { connections, durationSeconds, directory, onStart }) {
  const scriptPath = join(directory, `wrk-${randomBytes(4).toString('hex')}.lua`);
  const urls = target.urls ?? [target.url];
  const threads = urls.length;
  const total = connectionsFor(target, connections);
  // wrk gives each thread its share of the connections, all to thread.addr: one thread per server spreads them evenly.
  const spread =
    urls.length === 1
      ? ''
      : `local servers = { ${urls.map((url) => `{ ${luaString(new URL(url).hostname)}, ${luaString(new URL(url).port)} }`).join(', ')} }
local nextServer = 1
function setup(thread)
  local server = servers[nextServer]
  nextServer = nextServer + 1
  thread.addr = wrk.lookup(server[1], server[2])[1]
end
`;
  const headerLines = Object.entries(target.headers)
    .map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`)
    .join('\n');
  writeFileSync(
    scriptPath,
    `wrk.method = "POST"
wrk.body = ${luaString(target.body)}
${headerLines}
${spread}-- Machine-readable summary; latency is in microseconds.
function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format("BENCH_WRK_RESULT %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    errors.connect, errors.read, errors.write, errors.status, errors.timeout))
end
`,
  );
  const seconds = Math.max(1, Math.round(durationSeconds));
  const child = startChild('wrk', [`-t${threads}`, `-c${total}`, `-d${seconds}s`, '--timeout', '10s', '-s', scriptPath, target.url]);
  onStart?.(child);
  const output = keepTail(child.stdout);
  const errors = keepTail(child.stderr);
  // 'close', not 'exit': a process can exit before its output is read, and the result is its last line.
  await withDeadline(once(child, 'close'), (seconds + 30) * 1_000, 'wrk did not finish in time', () => void stopChild(child, 1_000));
  const line = output.text.split('\n').find((candidate) => candidate.startsWith('BENCH_WRK_RESULT '));
  if (line === undefined) throw new Error(`wrk gave no result (exit ${child.exitCode}): ${errors.text}${output.text}`);
  const [requests, durationMicros, p50Micros, p99Micros, connectErrors, readErrors, writeErrors, statusErrors, timeouts] = line
    .split(' ')
    .slice(1)
    .map(Number);
  return {
    completed: requests,
    connections: total,
    failed: connectErrors + readErrors + writeErrors + statusErrors + timeouts,
    durationSeconds: durationMicros / 1e6,
    p50Ms: p50Micros / 1_000,
    p99Ms: p99Micros / 1_000,
  };
}

/**
 * Two servers measured in the same window, taking turns: one wrk per target,
 * each paused (SIGSTOP) while the other runs, switching every `sliceMs`, for
 * `durationSeconds` in all (so each runs about half of it). Both see the same
 * machine, whatever a shared host does to its speed over seconds, and
 * neither shares the CPU with the other while it runs: the figure to compare
 * two builds of one server by (bench/lib/export-cost.mjs).
 * @param {LoadTarget[]} targets
 * @param {{ connections: number, durationSeconds: number, directory: string, sliceMs: number }} settings
 * @returns {Promise<LoadResult[]>}
 */
export async function runWrkInTurns(targets, { connections, durationSeconds, directory, sliceMs }) {
  /** @type {import('node:child_process').ChildProcess[]} */
  const children = [];
  let running = 0;
  const turns = setInterval(() => {
    if (children.length < targets.length) return;
    children[running]?.kill('SIGSTOP');
    running = (running + 1) % children.length;
    children[running]?.kill('SIGCONT');
  }, sliceMs);
  try {
    return await Promise.all(
      targets.map((target, index) =>
        runWrk(target, {
          connections,
          durationSeconds,
          directory,
          onStart: (child) => {
            children[index] = child;
            if (index !== running) child.kill('SIGSTOP');
          },
        }),
      ),
    );
  } finally {
    clearInterval(turns);
    // A wrk still paused when its time ran out must be let go to exit.
    for (const child of children) child.kill('SIGCONT');
  }
}

/**
 * Closed-loop saturation with autocannon, in this process (which is neither server).
 * @param {LoadTarget} target
 * @param {{ connections: number, durationSeconds: number }} settings
 * @returns {Promise<LoadResult>}
 */
export async function runAutocannon(target, { connections, durationSeconds }) {
  const { default: autocannon } = await import('autocannon');
  const total = connectionsFor(target, connections);
  const run = autocannon({
    // Several URLs: autocannon gives connection i to URL i mod n.
    url: target.urls ?? target.url,
    method: 'POST',
    headers: target.headers,
    body: target.body,
    connections: total,
    duration: durationSeconds,
    timeout: 10,
  });
  const result = await withDeadline(run, (durationSeconds + 30) * 1_000, 'autocannon did not finish in time', () => run.stop?.());
  const completed = result['2xx'] + result.non2xx;
  return {
    completed,
    connections: total,
    failed: result.non2xx + result.errors + result.timeouts,
    durationSeconds: result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}
