#!/usr/bin/env node
/**
 * OpenTelemetry export's cost alone, A/B: the measurement `npm run bench`
 * reports (bench/lib/export-cost.mjs), with its own knobs and every round
 * printed: each process's CPU per call (from /proc) round by round, each
 * round's ratio, and their median.
 *
 *   node bench/otel-ab.mjs [--pairs 3] [--rounds 8] [--seconds 2] [--connections 32] [--stream]
 *
 * Needs `npm run build` first; uses wrk when installed, else autocannon.
 * docs/telemetry.md has the figures it gave.
 */
import { parseArgs } from 'node:util';
import { withMockEngine } from './lib/child-processes.mjs';
import { measureExportCost } from './lib/export-cost.mjs';
import { runAutocannon, runWrk, wrkInstalled } from './lib/load-generators.mjs';
import { median } from './lib/statistics.mjs';
import { newAdminKey } from './lib/start-taskgate.mjs';

const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    stream: { type: 'boolean', default: false },
  },
});
const connections = Number(values.connections);
await withMockEngine({ name: 'otel-ab', gapMs: 0 }, async ({ mock, directory, started }) => {
  const useWrk = wrkInstalled();
  /** @param {number} durationSeconds */
  const saturate = (durationSeconds) => (/** @type {import('./lib/chat-request.mjs').LoadTarget} */ target) =>
    useWrk ? runWrk(target, { connections, durationSeconds, directory }) : runAutocannon(target, { connections, durationSeconds });
  const cost = await measureExportCost({
    mockUrl: mock.line.url,
    adminKey: newAdminKey(),
    directory,
    kinds: [values.stream ? 'stream' : 'json'],
    pairs: Number(values.pairs),
    rounds: Number(values.rounds),
    seconds: Number(values.seconds),
    warmupSeconds: 2,
    connections,
    useWrk,
    saturate,
    started,
  });
  const format = (/** @type {number[]} */ list) => list.map((value) => value.toFixed(0)).join(' ');
  for (const { kind, off, on, ratios, offMedian, onMedian, ratio } of cost.kinds) {
    const label = `${kind === 'stream' ? 'stream' : 'JSON'}, CPU µs per call, ${cost.rounds} rounds of ${cost.seconds} s${cost.inTurns ? ' each, in turns' : ', one after the other'}`;
    off.forEach((rounds, index) => {
      const ownOn = /** @type {number[]} */ (on[index]);
      console.log(
        `${label} (pair ${index + 1}: medians off ${median(rounds).toFixed(0)}, on ${median(ownOn).toFixed(0)}): off ${format(rounds)} | on ${format(ownOn)}`,
      );
    });
    console.log(`each round's on / off: ${ratios.map((value) => value.toFixed(2)).join(' ')}`);
    console.log(
      `on / off ${ratio.toFixed(3)} (the median of the rounds'); medians of CPU per call: off ${offMedian.toFixed(0)}, on ${onMedian.toFixed(0)} µs`,
    );
  }
  console.log(`spans exported ${cost.spansExported ?? 'unknown'}, dropped ${cost.spansDropped ?? 'unknown'}`);
  for (const warning of cost.warnings) console.log(`warning: ${warning}`);
});
