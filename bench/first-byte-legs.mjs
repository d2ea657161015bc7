#!/usr/bin/env node
/**
 * Where a stream's first byte spends its time, leg by leg, in taskgate and in
 * the bare pass-through side by side, read from the servers' own system
 * calls: streams at 20 a second in all, dealt to the two in turns (as
 * `npm run bench` takes the first byte), while `perf trace` records every
 * `read`, `write` and `writev` both make. For each stream:
 *
 *   before the engine   the request read  -> the engine request written
 *   the engine          the engine request written -> the reply's head read
 *   after the engine    the reply's head read -> the client's first bytes written
 *
 * Nothing in either server is changed or timed from inside (timestamps in a
 * cold path move what they measure), so each leg is the servers' own code
 * between two system calls. `perf trace` slows each call a little: compare
 * the two columns, not with the bench's first byte.
 *
 *   npm run build && node bench/first-byte-legs.mjs [--seconds 70]
 *
 * Needs `perf` (Debian: apt-get install linux-perf) and root or
 * kernel.perf_event_paranoid <= -1. Sends traffic only to 127.0.0.1.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { withMockEngine } from './lib/child-processes.mjs';
import { firstByteInTurns } from './lib/first-byte-in-turns.mjs';
import { startBesideBare } from './lib/start-beside-bare.mjs';
import { percentile } from './lib/statistics.mjs';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '70' } } });
const seconds = Number(values.seconds);
if (!Number.isFinite(seconds) || seconds < 20) throw new Error(`--seconds must be a number >= 20, got ${values.seconds}`);
try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  throw new Error('perf is missing: apt-get install linux-perf (Debian), then run again as root');
}

/** @typedef {{ at: number, ms: number, call: string, fd: number, result: number }} SystemCall */

/** `perf trace` lines of one process, as system calls (start and duration in ms). @param {string} text @param {number} pid */
function systemCallsOf(text, pid) {
  const line = new RegExp(String.raw`^\s*([\d.]+) \(\s*([\d.]+) ms\): \S+/${pid} (read|write|writev)\(fd: (\d+).*\)\s+= (-?\d+)`);
  /** @type {SystemCall[]} */
  const calls = [];
  for (const row of text.split('\n')) {
    const match = line.exec(row);
    if (match !== null)
      calls.push({ at: Number(match[1]), ms: Number(match[2]), call: match[3] ?? '', fd: Number(match[4]), result: Number(match[5]) });
  }
  return calls;
}

/**
 * The three legs of every stream found: a read of a whole request (over 1 KB),
 * the next write of over 1 KB to another socket (the engine request), the
 * next read of that socket of over 300 bytes (the engine's head and first
 * event), then the next write to the client's socket. In µs.
 * @param {SystemCall[]} calls
 */
function legsOf(calls) {
  const legs = { before: /** @type {number[]} */ ([]), engine: /** @type {number[]} */ ([]), after: /** @type {number[]} */ ([]) };
  const isWrite = (/** @type {SystemCall} */ call) => call.call === 'write' || call.call === 'writev';
  /** The index of the first call after `from` that passes `test`, or -1. */
  const next = (/** @type {number} */ from, /** @type {(call: SystemCall) => boolean} */ test) => {
    for (let at = from + 1; at < calls.length; at++) if (test(/** @type {SystemCall} */ (calls[at]))) return at;
    return -1;
  };
  for (let index = 0; index < calls.length; index++) {
    const request = /** @type {SystemCall} */ (calls[index]);
    if (request.call !== 'read' || request.result < 1000) continue;
    const sent = next(index, (call) => isWrite(call) && call.result >= 1000 && call.fd !== request.fd);
    if (sent < 0) continue;
    const engineFd = /** @type {SystemCall} */ (calls[sent]).fd;
    const head = next(sent, (call) => call.call === 'read' && call.fd === engineFd && call.result > 300);
    const first = head < 0 ? -1 : next(head, (call) => isWrite(call) && call.fd === request.fd);
    if (first < 0) continue;
    const [sentCall, headCall, firstCall] = [calls[sent], calls[head], calls[first]].map((call) => /** @type {SystemCall} */ (call));
    legs.before.push((sentCall.at - (request.at + request.ms)) * 1000);
    legs.engine.push((headCall.at + headCall.ms - sentCall.at) * 1000);
    legs.after.push((firstCall.at - (headCall.at + headCall.ms)) * 1000);
  }
  return legs;
}

await withMockEngine({ name: 'first-byte-legs', gapMs: 20 }, async (setup) => {
  const { directory } = setup;
  const { servers, streams: requests } = await startBesideBare(setup, { label: 'first-byte-legs' });

  // The first 20 s warm both up untraced; the rest is traced.
  const traceFile = join(directory, 'perf-trace.txt');
  const streams = firstByteInTurns(requests, { rate: 10, seconds, warmUp: 200 });
  await new Promise((resolve) => setTimeout(resolve, 20_000));
  const tracer = spawn('perf', ['trace', '-p', servers.map(({ pid }) => pid).join(','), '-e', 'read,write,writev', '-o', traceFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tracerErrors = '';
  tracer.stderr.on('data', (part) => (tracerErrors += String(part)));
  const firstBytes = await streams;
  tracer.kill('SIGINT');
  await new Promise((resolve) => tracer.once('close', resolve));
  if (!existsSync(traceFile))
    throw new Error(`perf trace recorded nothing (it needs root or kernel.perf_event_paranoid <= -1): ${tracerErrors.trim()}`);

  const text = readFileSync(traceFile, 'utf8');
  const quartiles = (/** @type {number[]} */ times) => [25, 50, 75].map((rank) => percentile(times, rank).toFixed(0)).join(' / ');
  console.log(`Legs of a stream's first byte, µs (p25 / p50 / p75), under perf trace; ${seconds} s at 10 streams/s each`);
  for (const [index, server] of servers.entries()) {
    const legs = legsOf(systemCallsOf(text, server.pid));
    const firstByte = firstBytes[index];
    console.log(
      `${server.name.padEnd(13)} ${String(legs.before.length).padStart(4)} streams   before the engine ${quartiles(legs.before)}   the engine ${quartiles(legs.engine)}   after ${quartiles(legs.after)}` +
        `   first byte p50 ${firstByte === undefined ? '-' : firstByte.p50Ms.toFixed(3)} ms`,
    );
  }
});
