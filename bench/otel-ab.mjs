#!/usr/bin/env node
/**
 * OpenTelemetry export's cost, A/B: two taskgates (export off, and export on
 * to the OTLP sink) measured in turn under the same closed-loop wrk load,
 * alternating their order every round, so that a machine whose speed drifts
 * during the run (a shared host) moves both alike. Prints each round's CPU
 * per call (from /proc) and the medians' ratio.
 *
 *   node bench/otel-ab.mjs [--rounds 5] [--seconds 4] [--connections 32] [--stream]
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
  options: { rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '4' }, connections: { type: 'string', default: '32' }, stream: { type: 'boolean', default: false } },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const directory = mkdtempSync(join(tmpdir(), 'taskgate-otel-ab-'));
const started = [];
try {
  const mock = await startListeningChild([mockEngineEntry, '--port', '0', '--gap-ms', '0'], 'mock_engine', 'the mock engine');
  started.push(mock);
  const sink = await startListeningChild([otlpSinkEntry, '--port', '0'], 'otlp_sink', 'the OTLP sink');
  started.push(sink);
  const adminKey = newAdminKey();
  const servers = {};
  for (const [name, otlpEndpoint] of [['off', undefined], ['on', sink.line.url]]) {
    mkdirSync(join(directory, name));
    servers[name] = await startTaskgate({ directory: join(directory, name), mockUrl: mock.line.url, gapMockUrl: mock.line.url, adminKey, otlpEndpoint });
    started.push(servers[name]);
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
  for (const name of ['off', 'on']) await measure(servers[name]);
  const results = { off: [], on: [] };
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? ['off', 'on'] : ['on', 'off']) results[name].push(await measure(servers[name]));
  }
  const [off, on] = [median(results.off), median(results.on)];
  const format = (list) => list.map((value) => value.toFixed(0)).join(' ');
  console.log(`${values.stream ? 'stream' : 'JSON'}, CPU µs per call, ${rounds} rounds of ${seconds} s: off ${format(results.off)} | on ${format(results.on)}`);
  console.log(`medians: off ${off.toFixed(0)}, on ${on.toFixed(0)}, on / off ${(on / off).toFixed(3)} (+${(on - off).toFixed(0)} µs a call)`);
} finally {
  for (const child of started.reverse()) await stopChild(child.child, 10_000);
  rmSync(directory, { recursive: true, force: true });
}
