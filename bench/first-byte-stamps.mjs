#!/usr/bin/env node
/**
 * A stream's way to its first byte, leg by leg, timed inside each server
 * (bench/lib/first-byte-probe.mjs, loaded with `node --import`): the bare
 * pass-through, this build and optionally another (`--before DIR`), with
 * streams at 10 a second each dealt to them in turns, as `npm run bench`
 * takes the first byte. Prints each server's first byte (p50, at the client)
 * and the p50 of its legs: before the engine request, the engine, and after
 * the engine's first bytes; and of any `globalThis.__stamp(label)` a
 * throwaway build calls.
 *
 * The legs are far steadier than the first byte: an A/A pair of taskgates
 * differed by 3 µs before the engine and 1 µs after it, where their first
 * bytes differed by 30 µs (docs/benchmarks.md, a twelfth sitting).
 *
 *   npm run build && node bench/first-byte-stamps.mjs [--before DIR] [--seconds 60]
 *
 * Sends traffic only to 127.0.0.1.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chatBody, chatHeaders, checkReply } from './lib/chat-request.mjs';
import { startListeningChild, withMockEngine } from './lib/child-processes.mjs';
import { firstByteInTurns } from './lib/first-byte-in-turns.mjs';
import { bareProxyEntry, repositoryRoot } from './lib/repository-paths.mjs';
import { newAdminKey, startTaskgate } from './lib/start-taskgate.mjs';
import { percentile } from './lib/statistics.mjs';

const { values } = parseArgs({ options: { before: { type: 'string' }, seconds: { type: 'string', default: '60' } } });
const seconds = Number(values.seconds);
if (!Number.isFinite(seconds) || seconds < 10) throw new Error(`--seconds must be a number >= 10, got ${values.seconds}`);
const probe = `--import=${join(repositoryRoot, 'bench', 'lib', 'first-byte-probe.mjs')}`;
/** The first streams of each server warm it up and are not counted (in the legs either). */
const warmUp = 40;

const report = await withMockEngine({ name: 'first-byte-stamps', gapMs: 20 }, async ({ mock, directory, started }) => {
  const probeDirectory = join(directory, 'probe');
  mkdirSync(probeDirectory);
  process.env.FIRST_BYTE_PROBE_DIR = probeDirectory;
  const adminKey = newAdminKey();
  const bare = await startListeningChild(
    [probe, bareProxyEntry, '--upstream', mock.line.url.replace(/\/v1$/, '')],
    'bare_proxy',
    'the bare pass-through',
  );
  started.push(bare);
  const servers = [{ name: 'bare', pid: bare.pid, origin: `http://127.0.0.1:${bare.line.port}` }];
  const builds = [
    ...(values.before === undefined ? [] : [{ name: 'before', entry: join(resolve(values.before), 'dist', 'cli', 'main.js') }]),
    { name: 'this build', entry: undefined },
  ];
  for (const [index, build] of builds.entries()) {
    const home = join(directory, `taskgate-${index}`);
    mkdirSync(home);
    const server = await startTaskgate({
      directory: home,
      mockUrl: mock.line.url,
      gapMockUrl: mock.line.url,
      adminKey,
      entry: build.entry,
      extraNodeFlags: [probe],
    });
    started.push(server);
    servers.push({ name: build.name, pid: server.pid, origin: server.origin });
  }
  const body = chatBody('bench-model', true);
  const headers = chatHeaders(adminKey);
  for (const server of servers) await checkReply({ url: `${server.origin}/v1/chat/completions`, headers, body }, true, 'first-byte-stamps');
  const destinations = servers.map(({ origin }) => ({ origin, path: '/v1/chat/completions', headers, body }));
  const firstBytes = await firstByteInTurns(destinations, { rate: 10, seconds, warmUp });
  // The probes write their files as the servers exit.
  for (const { child } of started.splice(1).reverse()) {
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  }
  return servers.map((server, index) => {
    /** @type {Array<{ legs: number[], stamps: Record<string, number> }>} */
    const calls = JSON.parse(readFileSync(join(probeDirectory, `${server.pid}.json`), 'utf8')).slice(warmUp);
    const p50 = (/** @type {number[]} */ values) => percentile(values, 50) * 1_000;
    const labels = [...new Set(calls.flatMap((call) => Object.keys(call.stamps)))];
    return {
      name: server.name,
      calls: calls.length,
      firstByteMs: firstBytes[index]?.p50Ms ?? Number.NaN,
      legs: [0, 1, 2].map((leg) => p50(calls.map((call) => /** @type {number} */ (call.legs[leg])))),
      stamps: labels.map(
        (label) => `${label} ${p50(calls.flatMap((call) => (call.stamps[label] === undefined ? [] : [call.stamps[label]]))).toFixed(0)}`,
      ),
    };
  });
});

const column = (/** @type {number} */ value) => value.toFixed(1).padStart(8);
console.log(`${'server'.padEnd(12)} first byte p50 | legs, µs p50:  before   engine    after | calls`);
for (const server of report) {
  console.log(
    `${server.name.padEnd(12)} ${server.firstByteMs.toFixed(3).padStart(11)} ms |              ${column(server.legs[0] ?? 0)} ${column(server.legs[1] ?? 0)} ${column(server.legs[2] ?? 0)} | ${server.calls}`,
  );
}
for (const server of report)
  if (server.stamps.length > 0)
    console.log(
      `${server.name} stamps (µs p50, before: since the request's start; after: since the engine's bytes):\n  ${server.stamps.join(' | ')}`,
    );
