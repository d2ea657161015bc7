#!/usr/bin/env node
/**
 * taskgate's overhead benchmark: what a call costs going through taskgate
 * compared with going straight to the engine.
 *
 * It starts, each in its own process (so no CPU is counted for the wrong one):
 * two mock engines (bench/mock-engine.mjs), one that answers at once and one
 * that leaves `--ttfb-gap-ms` between stream events; a bare node:http + undici
 * pass-through (bench/bare-proxy.mjs), the floor any Node gateway starts from;
 * taskgate (dist/, a fresh temporary data directory and config, tracing on)
 * on SQLite + in-memory limits; and, unless `--skip-shared`, three taskgates
 * on one fresh PostgreSQL database (created for the run, dropped at its end)
 * and one Redis database (flushed at start and end), with the same config and
 * admin key, each on its own port. It checks that every path answers
 * correctly, warms up, and measures each path (direct to the mock, through
 * the bare proxy, through taskgate on SQLite + memory, through the first
 * PostgreSQL + Redis taskgate alone, and through all three with the load
 * spread evenly over them):
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
 *      events back would show it;
 *   4. unless `--skip-otel`, what OpenTelemetry export costs: an A/B of
 *      pairs of fresh taskgates, one of each exporting every span to
 *      bench/otlp-sink.mjs, in many short alternating rounds
 *      (bench/lib/export-cost.mjs says why).
 *
 * The CPU-per-call and first-byte targets are taken apart, taskgate and the
 * pass-through in turns (bench/lib/against-bare.mjs). Then, unless
 * `--skip-undici`, a second taskgate whose engines use `transport: undici`
 * (the reference HTTP client; the default is taskgate's own, http1) is
 * measured the same way, and its figures reported beside the default's:
 * not a target (bench/lib/undici-transport.mjs).
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
import { redacted, prepareSharedBackends, readSharedDatabase } from './lib/shared-backends.mjs';
import { pathLabels, sharedPaths } from './lib/measurement-paths.mjs';
import { describeEnvironment } from './lib/describe-environment.mjs';
import { evaluateTargets } from './lib/evaluate-targets.mjs';
import { measureAgainstBare } from './lib/against-bare.mjs';
import { measureExportCost } from './lib/export-cost.mjs';
import { measureMemoryGrowth } from './lib/memory-growth.mjs';
import { runAutocannon, runWrk, wrkInstalled, wrkVersion } from './lib/load-generators.mjs';
import { log, logWarnings } from './lib/log.mjs';
import { markdownReport } from './lib/markdown-report.mjs';
import { readOptions, usage } from './lib/options.mjs';
import { runFixedRate } from './lib/run-fixed-rate.mjs';
import { mediansOf, runMeasurements, warningsOf } from './lib/run-measurements.mjs';
import { readinessOf, sharedProcessCount, startServers, targetsOf } from './lib/start-servers.mjs';
import { countTraces } from './lib/start-taskgate.mjs';
import { measureUndiciTransport } from './lib/undici-transport.mjs';
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
  /** @type {import('./lib/shared-backends.mjs').SharedBackends | null} */
  let backends = null;
  try {
    log(`load generator: ${loadGenerator}; temporary directory ${directory}`);
    /** Why the PostgreSQL + Redis rows are not measured (null when they are). */
    let sharedSkipped = options.skipShared ? 'left out (--skip-shared)' : null;
    if (sharedSkipped === null) {
      const prepared = await prepareSharedBackends({ postgresUrl: options.postgresUrl, redisUrl: options.redisUrl });
      if ('missing' in prepared) {
        sharedSkipped = prepared.missing;
        log(`skipping the PostgreSQL + Redis rows: ${prepared.missing}`);
      } else {
        backends = prepared;
        paths.push(...sharedPaths);
      }
    }
    const servers = await startServers({ options, paths, directory, backends }, started);
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
    await runFixedRate(targetFor('through', 'stream', true), {
      rate: options.ttfbRate,
      durationSeconds: Math.min(1, options.warmupSeconds),
      stream: true,
    });

    const { runs, completedByPath } = await runMeasurements({ options, kinds, paths, servers, targetFor, saturate });
    const medians = mediansOf(runs, kinds, paths);
    const warnings = warningsOf(runs, paths, options.maxNoisePercent);

    // The CPU-per-call targets: taskgate and the pass-through in turns (against-bare.mjs says why).
    const againstBareSettings = {
      kinds,
      rounds: options.bareRounds,
      seconds: 2,
      connections: options.connections,
      directory,
      firstByte: options.ttfbTurnsSeconds > 0 ? { rate: options.ttfbRate, seconds: options.ttfbTurnsSeconds } : null,
    };
    const againstBare =
      useWrk && servers.bare !== null
        ? await measureAgainstBare(
            { bare: servers.bare, taskgate: servers.taskgate },
            (path, kind, gap) => targetFor(path, kind, gap),
            againstBareSettings,
          )
        : null;

    // The same for a second taskgate on the undici transport, beside the default's: reported, not a target (undici-transport.mjs).
    const undiciSkipped = options.skipUndici
      ? 'left out (--skip-undici)'
      : againstBare === null
        ? 'it is measured against the bare pass-through in turns, which needs wrk and the pass-through (no --skip-baseline)'
        : null;
    const undiciTransport =
      undiciSkipped === null
        ? await measureUndiciTransport({
            servers,
            directory,
            againstBare: againstBareSettings,
            warmupSeconds: options.warmupSeconds,
            saturate,
            started,
          })
        : null;
    if (undiciTransport !== null) warnings.push(...undiciTransport.warnings);

    // Memory over a sustained run: RSS at its start and end (memory-growth.mjs).
    const growth =
      options.growthSeconds > 0
        ? await measureMemoryGrowth(
            servers.taskgate,
            kinds.map((kind) => targetFor('through', kind)),
            { seconds: options.growthSeconds, sampleSeconds: 10, saturate },
          )
        : null;
    if (growth !== null && growth.failed > 0) warnings.push(`${growth.failed} calls failed in the memory growth run`);

    // What OpenTelemetry export costs, A/B on pairs of fresh taskgates (bench/lib/export-cost.mjs says why not one pair).
    const exportCost = options.skipOtel
      ? null
      : await measureExportCost({
          mockUrl: servers.mock.url,
          adminKey: servers.taskgate.adminKey,
          directory,
          kinds,
          pairs: options.otelPairs,
          rounds: options.otelRounds,
          seconds: options.otelSeconds,
          warmupSeconds: options.warmupSeconds,
          connections: options.connections,
          useWrk,
          saturate,
          cpuProfileDirectory: options.cpuProfileDirectory,
          started,
        });
    if (exportCost !== null) warnings.push(...exportCost.warnings);

    // Stop taskgate now: it writes its pending traces (and its CPU profile) on the way out.
    const { taskgate, shared } = servers;
    await stopChild(taskgate.child, 20_000);
    const traceCount = countTraces(taskgate.sqlitePath);
    const throughCompleted = completedByPath.through ?? 0;
    if (traceCount !== null && traceCount < throughCompleted) {
      warnings.push(`taskgate stored ${traceCount} traces for at least ${throughCompleted} measured calls: tracing fell behind`);
    }
    warnings.push(...logWarnings('taskgate (SQLite + memory)', taskgate.log.text));

    /** What the PostgreSQL + Redis rows ran on, for the report. */
    let sharedReport = /** @type {Record<string, unknown>} */ ({ skipped: sharedSkipped });
    if (shared !== null && backends !== null) {
      // Still running: is anything degraded after the load (limits fallen back to memory, store writes failing), and who leads the router?
      const readinessAtEnd = await Promise.all(shared.processes.map((server) => readinessOf(server.origin, taskgate.adminKey, false)));
      readinessAtEnd.forEach((ready, index) => {
        if (ready.degraded?.length > 0 || ready.ready !== true)
          warnings.push(`taskgate ${index + 1} on PostgreSQL + Redis after the runs: ${JSON.stringify(ready).slice(0, 400)}`);
      });
      const { routerLeaderPid } = await readSharedDatabase(backends.databaseUrl);
      await Promise.allSettled(shared.processes.map((server) => stopChild(server.child, 20_000)));
      const { traces } = await readSharedDatabase(backends.databaseUrl);
      const sharedCompleted = sharedPaths.reduce((sum, path) => sum + (completedByPath[path] ?? 0), 0);
      if (traces === null) warnings.push('could not count the traces in the PostgreSQL database');
      else if (traces < sharedCompleted)
        warnings.push(
          `the taskgates on PostgreSQL stored ${traces} traces for at least ${sharedCompleted} measured calls: tracing fell behind`,
        );
      shared.processes.forEach((server, index) =>
        warnings.push(...logWarnings(`taskgate ${index + 1} (PostgreSQL + Redis)`, server.log.text)),
      );
      const leaderIndex = shared.processes.findIndex((server) => server.pid === routerLeaderPid);
      sharedReport = {
        skipped: null,
        postgres: redacted(backends.databaseUrl),
        redis: redacted(backends.redisUrl),
        processes: shared.processes.length,
        onePathProcess: 1,
        routerLeader: leaderIndex === -1 ? null : leaderIndex + 1,
        tracesStored: traces,
        postgresBackendsVisible: shared.postgresPids !== null,
        redisVisible: shared.redisPid !== null,
        readinessAtStart: shared.readinessAtStart.map((ready) => ({ router: ready.router, store: ready.store, limits: ready.limits })),
        readinessAtEnd: readinessAtEnd.map((ready) => ({
          ready: ready.ready,
          degraded: ready.degraded,
          limits: ready.limits,
          store_writes: ready.store_writes,
          router: ready.router,
        })),
      };
    }

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
        pathLabels: Object.fromEntries(paths.map((path) => [path, pathLabels[path]])),
        sharedProcessCount,
        cpuProfile: options.cpuProfileDirectory !== undefined,
        requestBodyBytes: Buffer.byteLength(chatBody('bench-model', false)),
      },
      tracesStored: traceCount,
      shared: sharedReport,
      medians,
      againstBare,
      undiciTransport: undiciTransport === null ? { skipped: undiciSkipped } : { skipped: null, ...undiciTransport },
      growth,
      exportCost,
      targets: evaluateTargets(medians, againstBare, growth, exportCost, options),
      warnings: [...new Set(warnings)],
      runs,
    };
    const markdown = markdownReport(report);
    process.stdout.write(`\n${markdown}\n`);
    writeResults(options.outputDirectory, report, markdown);
    if (options.cpuProfileDirectory !== undefined) printProfileSummary(options.cpuProfileDirectory);
  } finally {
    await Promise.allSettled(started.map(({ child }) => stopChild(child, 5_000)));
    // After the taskgates stopped: their connections are gone, so the database drops at once.
    if (backends !== null) await backends.cleanUp();
    if (!options.keep) rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
