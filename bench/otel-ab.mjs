#!/usr/bin/env node
/**
 * OpenTelemetry export's cost, A/B: taskgates with export off and with export
 * on (to the OTLP sink) measured in turn under the same closed-loop wrk load,
 * alternating their order every round, so that a machine whose speed drifts
 * during the run (a shared host) moves both alike. Prints each round's CPU
 * per call (from /proc) and the medians' ratio.
 *
 * Two identical processes can differ by 10 % (where V8 happened to inline,
 * where the heap happened to lie; docs/telemetry.md), so `--processes N`
 * starts N of each and measures every one each round: the medians are then
 * over all of them, and each process's own median is printed too.
 *
 *   node bench/otel-ab.mjs [--rounds 5] [--seconds 4] [--connections 32] [--processes 1] [--stream]
 *
 * Needs `npm run build` first; uses wrk when installed, else autocannon.
 * docs/telemetry.md has the figures it gave.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startListeningChild, stopChild } from './lib/child-processes.mjs';
import { chatBody, chatHeaders } from './lib/chat-request.mjs';
import { runAutocannon, runWrk, wrkInstalled } from './lib/load-generators.mjs';
import { cpuMicroseconds } from './lib/process-statistics.mjs';
import { median } from './lib/statistics.mjs';
import { mockEngineEntry, otlpSinkEntry } from './lib/repository-paths.mjs';
import { newAdminKey, startTaskgate } from './lib/start-taskgate.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '4' }, connections: { type: 'string', default: '32' }, processes: { type: 'string', default: '1' }, stream: { type: 'boolean', default: false } },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const processes = Number(values.processes);

const directory = mkdtempSync(join(tmpdir(), 'taskgate-otel-ab-'));
const started = [];
try {
  const mock = await startListeningChild([mockEngineEntry, '--port', '0', '--gap-ms', '0'], 'mock_engine', 'the mock engine');
  started.push(mock);
  const sink = await startListeningChild([otlpSinkEntry, '--port', '0'], 'otlp_sink', 'the OTLP sink');
  started.push(sink);
  const adminKey = newAdminKey();
  /** @type {Record<'off' | 'on', any[]>} */
  const servers = { off: [], on: [] };
  for (let index = 0; index < processes; index++) {
    for (const [name, otlpEndpoint] of /** @type {const} */ ([['off', undefined], ['on', sink.line.url]])) {
      const own = join(directory, `${name}-${index}`);
      mkdirSync(own);
      const server = await startTaskgate({ directory: own, mockUrl: mock.line.url, gapMockUrl: mock.line.url, adminKey, otlpEndpoint });
      started.push(server);
      servers[name].push(server);
    }
  }
  const body = chatBody('bench-model', values.stream);
  const saturate = wrkInstalled() ? (target, settings) => runWrk(target, { ...settings, directory }) : runAutocannon;
  /** CPU µs per call of `server` under `seconds` of saturation. */
  const measure = async (server) => {
    const before = cpuMicroseconds(server.pid);
    const load = await saturate({ url: `${server.origin}/v1/chat/completions`, headers: chatHeaders(adminKey), body }, { connections, durationSeconds: seconds });
    if (load.failed > 0) throw new Error(`${load.failed} calls failed`);
    return (cpuMicroseconds(server.pid) - before) / load.completed;
  };
  for (const server of [...servers.off, ...servers.on]) await measure(server);
  /** Each process's CPU per call, round by round. */
  const results = { off: servers.off.map(() => /** @type {number[]} */ ([])), on: servers.on.map(() => /** @type {number[]} */ ([])) };
  for (let round = 0; round < rounds; round++) {
    for (let index = 0; index < processes; index++) {
      for (const name of (round + index) % 2 === 0 ? ['off', 'on'] : ['on', 'off']) results[name][index].push(await measure(servers[name][index]));
    }
  }
  const [off, on] = [median(results.off.flat()), median(results.on.flat())];
  const format = (list) => list.map((value) => value.toFixed(0)).join(' ');
  const label = `${values.stream ? 'stream' : 'JSON'}, CPU µs per call, ${rounds} rounds of ${seconds} s`;
  for (let index = 0; index < processes; index++) {
    const pair = processes > 1 ? ` (process pair ${index + 1}: medians off ${median(results.off[index]).toFixed(0)}, on ${median(results.on[index]).toFixed(0)})` : '';
    console.log(`${label}${pair}: off ${format(results.off[index])} | on ${format(results.on[index])}`);
  }
  console.log(`medians: off ${off.toFixed(0)}, on ${on.toFixed(0)}, on / off ${(on / off).toFixed(3)} (+${(on - off).toFixed(0)} µs a call)`);
} finally {
  for (const child of started.reverse()) await stopChild(child.child, 10_000);
  rmSync(directory, { recursive: true, force: true });
}
