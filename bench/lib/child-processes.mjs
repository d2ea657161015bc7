/**
 * Child processes: every one is tracked, so any way out of the benchmark
 * (end, failure, SIGINT/SIGTERM) stops them; every wait has a deadline.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { mockEngineEntry } from './repository-paths.mjs';

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();
/** The temporary directory, removed on the way out unless --keep. */
let temporaryDirectory = /** @type {string | null} */ (null);
/** Other things an interrupt must undo once the children are stopped (a bench database, say). */
const interruptCleanups = /** @type {Set<() => Promise<unknown>>} */ (new Set());

/**
 * What an interrupt removes besides stopping the children (null: nothing, as with --keep).
 * @param {string | null} directory
 */
export function removeOnInterrupt(directory) {
  temporaryDirectory = directory;
}

/**
 * Runs `cleanup` on SIGINT/SIGTERM, after the children are stopped (at most
 * 15 s for all of them). The caller also runs it on its normal way out, so it
 * must be safe to run twice (see `runOnce`). Returns a function that unregisters it.
 * @param {() => Promise<unknown>} cleanup
 */
export function cleanUpOnInterrupt(cleanup) {
  interruptCleanups.add(cleanup);
  return () => interruptCleanups.delete(cleanup);
}

/**
 * The first call runs `work`; every later call returns the same promise.
 * @template T @param {() => Promise<T>} work @returns {() => Promise<T>}
 */
export function runOnce(work) {
  /** @type {Promise<T> | null} */
  let running = null;
  return () => (running ??= work());
}

/**
 * Settles like `promise`, or rejects with `message` after `ms` (calling
 * `onTimeout` first). The timer is cleared either way, so no deadline keeps
 * the process alive once the work is done.
 * @template T
 * @param {Promise<T>} promise @param {number} ms @param {string} message @param {() => void} [onTimeout]
 * @returns {Promise<T>}
 */
export async function withDeadline(promise, ms, message, onTimeout) {
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
export function hasExited(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * @param {string} command
 * @param {string[]} args
 * @param {import('node:child_process').SpawnOptions} [options]
 */
export function startChild(command, args, options = {}) {
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
export async function stopChild(child, graceMs) {
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
    Promise.allSettled([...children].map((child) => stopChild(child, 3_000)))
      .then(() => withDeadline(Promise.allSettled([...interruptCleanups].map((cleanup) => cleanup())), 15_000, 'cleanup took too long'))
      .catch((error) => process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`))
      .finally(() => {
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
export function keepTail(stream, limit = 16_384) {
  const tail = { text: '' };
  stream?.setEncoding('utf8');
  stream?.on('data', (text) => {
    tail.text = (tail.text + text).slice(-limit);
  });
  return tail;
}

/** A free TCP port on loopback (there is a small window before taskgate binds it; a clash fails loudly). */
export async function freePort() {
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
export async function startListeningChild(args, marker, name) {
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
 * @typedef {{ child: import('node:child_process').ChildProcess, pid: number, line: Record<string, any> }} ListeningChild
 * @typedef {{ mock: ListeningChild, directory: string, started: Array<{ child: import('node:child_process').ChildProcess }> }} MockSetup
 */

/**
 * The common frame of the A/B scripts (`ab-builds`, `ab-ttfb`, `otel-ab`): a
 * fresh temporary directory, the mock engine started with `gapMs` between
 * stream events, then `work`. Whatever `work` starts goes on `started`; at
 * the end, on failure too, everything is stopped (the last started first)
 * and the directory removed.
 * @template T
 * @param {{ name: string, gapMs: number }} settings  `name` prefixes the directory
 * @param {(setup: MockSetup) => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function withMockEngine({ name, gapMs }, work) {
  const directory = mkdtempSync(join(tmpdir(), `taskgate-${name}-`));
  /** @type {MockSetup['started']} */
  const started = [];
  try {
    const mock = await startListeningChild([mockEngineEntry, '--port', '0', '--gap-ms', String(gapMs)], 'mock_engine', 'the mock engine');
    started.push(mock);
    return await work({ mock, directory, started });
  } finally {
    for (const { child } of started.reverse()) await stopChild(child, 10_000);
    rmSync(directory, { recursive: true, force: true });
  }
}
