/**
 * OpenTelemetry export's CPU cost, A/B: pairs of fresh taskgates on SQLite +
 * memory, the same config but for one thing, the second of each pair
 * exporting every span to a local OTLP sink (its own process).
 *
 * Each round loads the two of a pair in turns within one window (one wrk
 * each, paused while the other runs, switching every 100 ms:
 * `runWrkInTurns`), and takes the ratio of their CPU per call. The figure is
 * the median of those ratios over every round of every pair.
 *
 * Why this shape: on a shared VM the same process's CPU per call moves by
 * ±25 % from one run of seconds to the next (the host's speed drifts, and
 * other tenants share its caches), and two identical processes can differ
 * by 10 % for as long as they live. Measured one after the other, two
 * servers' difference is lost in that; measured in turns within one window,
 * they see the same machine, and a pair of identical taskgates measures
 * within ±2 % of 1.00 (docs/telemetry.md). Without wrk the two of a pair
 * are measured one after the other, in alternating order (noisier).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chatBody, chatHeaders, checkReply } from './chat-request.mjs';
import { startListeningChild, stopChild } from './child-processes.mjs';
import { cpuPerCall, cpuPerCallInTurns } from './cpu-per-call.mjs';
import { log } from './log.mjs';
import { countAsOwn } from './process-statistics.mjs';
import { otlpSinkEntry } from './repository-paths.mjs';
import { median } from './statistics.mjs';
import { startTaskgate } from './start-taskgate.mjs';

/**
 * @typedef {object} ExportCostSettings
 * @property {string} mockUrl  the engine behind every taskgate
 * @property {string} adminKey
 * @property {string} directory  where the taskgates' data directories go
 * @property {string[]} kinds  'json' and/or 'stream'
 * @property {number} pairs  taskgates of each kind (export off, export on)
 * @property {number} rounds  measurements of each pair per kind of call
 * @property {number} seconds  each server's share of a round (the round lasts twice as long)
 * @property {number} warmupSeconds  load on each process before its kind is measured
 * @property {number} connections
 * @property {boolean} useWrk  take turns within each round (else: one after the other)
 * @property {(durationSeconds: number) => (target: import('./chat-request.mjs').LoadTarget) => Promise<import('./load-generators.mjs').LoadResult>} saturate
 * @property {string} [cpuProfileDirectory]  profile the exporting taskgate of a single pair into it
 * @property {{ child: import('node:child_process').ChildProcess }[]} started  every process started is pushed here (the caller stops them on failure)
 */

/**
 * @typedef {object} ExportCostOfKind
 * @property {string} kind
 * @property {number[][]} off  CPU µs per call of each export-off process, round by round
 * @property {number[][]} on   the same, export on
 * @property {number[]} ratios  on / off of each round of each pair
 * @property {number} offMedian  over every round of every process
 * @property {number} onMedian
 * @property {number} ratio  the median of `ratios`
 */

/**
 * @param {ExportCostSettings} settings
 * @returns {Promise<{ kinds: ExportCostOfKind[], pairs: number, rounds: number, seconds: number, inTurns: boolean, spansExported: number | null, spansDropped: number | null, warnings: string[] }>}
 */
export async function measureExportCost(settings) {
  const { mockUrl, adminKey, directory, kinds, rounds, seconds, saturate, started } = settings;
  const pairs = settings.cpuProfileDirectory === undefined ? settings.pairs : 1;
  const sink = await startListeningChild([otlpSinkEntry, '--port', '0'], 'otlp_sink', 'the OTLP sink');
  started.push(sink);
  // The sink's CPU is the bench's doing: neither noise nor taskgate's.
  countAsOwn(sink.pid);
  /** @type {Awaited<ReturnType<typeof startTaskgate>>[][]} [export off, export on] of each pair */
  const servers = [];
  for (let index = 0; index < pairs; index++) {
    const pair = [];
    for (const exporting of [false, true]) {
      const own = join(directory, `export-${exporting ? 'on' : 'off'}-${index + 1}`);
      mkdirSync(own, { recursive: true });
      const server = await startTaskgate({
        directory: own,
        mockUrl,
        gapMockUrl: mockUrl,
        adminKey,
        otlpEndpoint: exporting ? sink.line.url : undefined,
        cpuProfileDirectory:
          exporting && settings.cpuProfileDirectory !== undefined ? join(settings.cpuProfileDirectory, 'otel') : undefined,
      });
      started.push(server);
      countAsOwn(server.pid);
      pair.push(server);
    }
    servers.push(pair);
  }
  const all = servers.flat();
  log(
    `OTel export A/B: ${pairs} pairs of taskgates (pids ${servers.map(([off, on]) => `${off?.pid} off / ${on?.pid} on`).join(', ')}), OTLP sink pid ${sink.pid}`,
  );
  /** @param {Awaited<ReturnType<typeof startTaskgate>>} server @param {string} kind */
  const targetOf = (server, kind) => ({
    url: `${server.origin}/v1/chat/completions`,
    headers: chatHeaders(adminKey),
    body: chatBody('bench-model', kind === 'stream'),
  });
  for (const server of all)
    for (const kind of ['json', 'stream'])
      await checkReply(targetOf(server, kind), kind === 'stream', `${kind} through taskgate pid ${server.pid}`);

  /** CPU µs per call of each of a pair over one round. @param {Awaited<ReturnType<typeof startTaskgate>>[]} pair @param {string} kind @param {number} round */
  const measurePair = (pair, kind, round) => {
    const targets = pair.map((server) => targetOf(server, kind));
    const label = 'OTel export A/B';
    if (settings.useWrk) return cpuPerCallInTurns(pair, targets, { connections: settings.connections, seconds, directory, label });
    // One after the other, the first of the pair first in even rounds: a drift within the round favours neither.
    return cpuPerCall(
      pair,
      async () => {
        /** @type {import('./load-generators.mjs').LoadResult[]} */
        const loads = [];
        for (const at of round % 2 === 0 ? [0, 1] : [1, 0]) loads[at] = await saturate(seconds)(/** @type {any} */ (targets[at]));
        return loads;
      },
      label,
    );
  };

  /** @type {ExportCostOfKind[]} */
  const results = [];
  for (const kind of kinds) {
    for (const server of all) await saturate(settings.warmupSeconds)(targetOf(server, kind));
    const off = servers.map(() => /** @type {number[]} */ ([]));
    const on = servers.map(() => /** @type {number[]} */ ([]));
    const ratios = [];
    for (let round = 0; round < rounds; round++) {
      log(`OTel export A/B: ${kind}, round ${round + 1}/${rounds}`);
      for (const [index, pair] of servers.entries()) {
        const [offCpu, onCpu] = await measurePair(pair, kind, round);
        off[index]?.push(/** @type {number} */ (offCpu));
        on[index]?.push(/** @type {number} */ (onCpu));
        ratios.push(/** @type {number} */ (onCpu) / /** @type {number} */ (offCpu));
      }
    }
    results.push({ kind, off, on, ratios, offMedian: median(off.flat()), onMedian: median(on.flat()), ratio: median(ratios) });
  }

  // Every span must have reached the sink: a cheap export that drops spans proves nothing.
  const counts = await Promise.all(servers.map(([, exporting]) => spanCounts(/** @type {any} */ (exporting).origin, adminKey)));
  const sum = (/** @type {'exported' | 'dropped'} */ field) =>
    counts.some((count) => count === null) ? null : counts.reduce((total, count) => total + (count?.[field] ?? 0), 0);
  const warnings = [];
  const spansDropped = sum('dropped');
  if (spansDropped !== 0)
    warnings.push(`the exporting taskgates dropped ${spansDropped ?? 'an unknown number of'} spans: the export fell behind or failed`);
  for (const server of all) {
    await stopChild(server.child, 20_000);
    const lines = server.log.text.split('\n').filter((line) => line.includes('"level":"warn"') || line.includes('"level":"error"'));
    if (lines.length > 0)
      warnings.push(
        `taskgate pid ${server.pid} (OTel export A/B) logged ${lines.length} warnings or errors, e.g. ${lines[0]?.slice(0, 300)}`,
      );
  }
  await stopChild(sink.child, 5_000);
  return { kinds: results, pairs, rounds, seconds, inTurns: settings.useWrk, spansExported: sum('exported'), spansDropped, warnings };
}

/**
 * The spans a taskgate exported and dropped, from its /metrics; null when unreadable.
 * @param {string} origin @param {string} adminKey
 */
async function spanCounts(origin, adminKey) {
  try {
    const response = await fetch(`${origin}/metrics`, {
      headers: { authorization: `Bearer ${adminKey}` },
      signal: AbortSignal.timeout(5_000),
    });
    const text = await response.text();
    const read = (/** @type {string} */ name) =>
      Number(new RegExp(`^taskgate_telemetry_spans_${name}_total (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    const counts = { exported: read('exported'), dropped: read('dropped') };
    return Number.isNaN(counts.exported) || Number.isNaN(counts.dropped) ? null : counts;
  } catch {
    return null;
  }
}
