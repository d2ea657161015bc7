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
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatBody, checkReply } from './lib/chat-request.mjs';
import { removeOnInterrupt, stopChild } from './lib/child-processes.mjs';
import { describeEnvironment } from './lib/describe-environment.mjs';
import { evaluateTargets } from './lib/evaluate-targets.mjs';
import { runAutocannon, runWrk, wrkInstalled, wrkVersion } from './lib/load-generators.mjs';
import { log } from './lib/log.mjs';
import { markdownReport } from './lib/markdown-report.mjs';
import { readOptions, usage } from './lib/options.mjs';
import { runFixedRate } from './lib/run-fixed-rate.mjs';
import { mediansOf, runMeasurements, warningsOf } from './lib/run-measurements.mjs';
import { startServers, targetsOf } from './lib/start-servers.mjs';
import { countTraces } from './lib/start-taskgate.mjs';
import { printProfileSummary, writeResults } from './lib/write-results.mjs';

/** @typedef {import('./lib/measurement-paths.mjs').PathName} PathName */
/** @typedef {import('./lib/chat-request.mjs').LoadTarget} LoadTarget */
/** @typedef {import('./lib/load-generators.mjs').LoadResult} LoadResult */

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
  removeOnInterrupt(options.keep ? null : directory);
  if (options.cpuProfileDirectory !== undefined) mkdirSync(options.cpuProfileDirectory, { recursive: true });
  /** @type {{ child: import('node:child_process').ChildProcess }[]} */
  const started = [];
  try {
    log(`load generator: ${loadGenerator}; temporary directory ${directory}`);
    const servers = await startServers({ options, paths, directory }, started);
    const targetFor = targetsOf(servers);

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

    const { runs, throughCompleted } = await runMeasurements({ options, kinds, paths, servers, targetFor, saturate });
    const medians = mediansOf(runs, kinds, paths);
    const warnings = warningsOf(runs, paths, options.maxNoisePercent);

    // Stop taskgate now: it writes its pending traces (and its CPU profile) on the way out.
    const { taskgate } = servers;
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
    writeResults(options.outputDirectory, report, markdown);
    if (options.cpuProfileDirectory !== undefined) printProfileSummary(options.cpuProfileDirectory);
  } finally {
    await Promise.allSettled(started.map(({ child }) => stopChild(child, 5_000)));
    if (!options.keep) rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
