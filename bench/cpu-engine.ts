/**
 * taskgate's CPU engine benchmark: how fast the embedded `llama-cpp` engine
 * generates, and what taskgate costs over calling node-llama-cpp directly.
 *
 * It writes two looping GGUF models (bench/lib/cpu-models.ts: "tiny", whose
 * compute is negligible, and "small", 27 M parameters, where compute
 * dominates), then for each thread count (`--threads`, default 1 and
 * `os.availableParallelism()`) and each model measures two paths:
 *
 *   - direct: node-llama-cpp in this process, set up as taskgate's engine sets
 *     it up (bench/lib/cpu-direct.ts);
 *   - through taskgate: `dist/cli/main.js serve` in a child process with a
 *     `llama-cpp` engine serving the same files with the same threads and
 *     sequences, called with streamed chat completions over HTTP
 *     (bench/lib/cpu-taskgate.ts).
 *
 * Each repetition sends, on each path (alternating which goes first), one
 * call alone and then `--concurrency` calls at once (as many as the model has
 * sequences), each generating exactly `--tokens` tokens from a ~300-token
 * prompt that differs from call to call. Per call it records the time to first
 * token and the decode rate; per round the aggregate rate and how disturbed
 * the machine was (a disturbed round is measured again). The two paths never
 * run at the same time. Results are printed as Markdown and written to
 * bench/results/ as JSON and Markdown.
 *
 *   npm run bench:cpu -- [--tokens N] [--concurrency N] [--repeat N] [--threads 1,2] [--quick]
 *   npx vite-node bench/cpu-engine.ts --help
 *
 * llama.cpp's threads busy-wait for each other: run it on an otherwise idle
 * machine (the report records the load average), or the figures mean little.
 * Everything it starts is stopped when it ends, fails or is interrupted, and
 * every wait has a deadline.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeOnInterrupt, withDeadline } from './lib/child-processes.mjs';
import { startDirectRuntime, type DirectModel, type DirectRuntime } from './lib/cpu-direct.js';
import { writeBenchModel, type BenchModel } from './lib/cpu-models.js';
import { readOptions, usage, type CpuBenchOptions } from './lib/cpu-options.js';
import { markdownReport, summariseCase, writeResults, type MeasuredCase, type PathName, type PathRounds } from './lib/cpu-report.js';
import { runRound, type GenerationCall, type RoundSettings } from './lib/cpu-rounds.js';
import { startTaskgate, type TaskgateServer } from './lib/cpu-taskgate.js';
import { describeEnvironment } from './lib/describe-environment.mjs';
import { log } from './lib/log.mjs';
import { repositoryRoot } from './lib/repository-paths.mjs';

/** Tokens per sequence, taskgate's default. */
const CONTEXT_SIZE = 4096;
/** Tokens per warm-up call: enough to load the model and settle llama.cpp's buffers. */
const WARMUP_TOKENS = 16;
const quietLoadAverage = 0.5;

async function main(): Promise<void> {
  const options = readOptions();
  if (options === null) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  if (process.platform !== 'linux') throw new Error('the benchmark reads CPU time from /proc: Linux only');
  const startedAt = new Date().toISOString();
  const environment = { ...describeEnvironment('undici streaming client in the benchmark process'), nodeLlamaCpp: nodeLlamaCppVersion() };
  const warnings: string[] = [];
  if (loadavg()[0]! > quietLoadAverage)
    warnings.push(
      `the 1-minute load average was ${loadavg()[0]!.toFixed(2)} at start (over ${quietLoadAverage}): the machine was not idle`,
    );
  const directory = mkdtempSync(join(tmpdir(), 'taskgate-bench-cpu-'));
  removeOnInterrupt(options.keep ? null : directory);
  keepInterruptCleanupAlive();
  let taskgate: TaskgateServer | null = null;
  let runtime: DirectRuntime | null = null;
  let loaded: DirectModel | null = null;
  const cases: MeasuredCase[] = [];
  let promptTokens: number | null = null;
  let models: BenchModel[];
  try {
    models = options.models.map((name) => {
      const started = performance.now();
      const model = writeBenchModel(directory, name);
      log(`wrote the ${name} model (${(model.fileBytes / 1e6).toFixed(1)} MB) in ${Math.round(performance.now() - started)} ms`);
      return model;
    });
    for (const threads of options.threads) {
      taskgate = await startTaskgate({
        directory,
        models,
        threads,
        sequences: options.concurrency,
        contextSize: CONTEXT_SIZE,
        cpuProfileDirectory: options.cpuProfileDirectory,
      });
      log(`${threads} thread(s): taskgate pid ${taskgate.pid} at ${taskgate.origin}`);
      runtime = await withDeadline(startDirectRuntime(threads), 60_000, 'node-llama-cpp did not load within 60 s');
      for (const model of models) {
        loaded = await withDeadline(
          runtime.load(model, { sequences: options.concurrency, contextSize: CONTEXT_SIZE }),
          60_000,
          `the ${model.name} model did not load within 60 s`,
        );
        const measured = await measureCase(options, threads, model, loaded, taskgate);
        promptTokens ??= measured.through.single[0]?.calls[0]?.promptTokens ?? null;
        cases.push(measured);
        await withDeadline(loaded.dispose(), 30_000, 'the direct model was not released within 30 s');
        loaded = null;
      }
      await withDeadline(runtime.dispose(), 30_000, 'node-llama-cpp was not released within 30 s');
      runtime = null;
      await taskgate.stop();
      warnings.push(...taskgateWarnings(taskgate));
      taskgate = null;
    }
  } finally {
    if (loaded !== null) await withDeadline(loaded.dispose(), 30_000, 'release').catch(() => undefined);
    if (runtime !== null) await withDeadline(runtime.dispose(), 30_000, 'release').catch(() => undefined);
    await taskgate?.stop();
    if (!options.keep) rmSync(directory, { recursive: true, force: true });
  }

  const summaries = cases.map(summariseCase);
  for (const summary of summaries) {
    for (const path of ['direct', 'through'] as const) {
      if (summary[path].noiseMaxPercent > options.maxNoisePercent) {
        warnings.push(
          `${summary.threads} thread(s), ${summary.model}, ${path}: a round stayed disturbed after ${options.retries} re-runs (${summary[path].noiseMaxPercent.toFixed(1)}% of the machine)`,
        );
      }
    }
  }
  const report = {
    startedAt,
    environment: {
      ...environment,
      loadAverageAtEnd: loadavg()
        .map((value) => value.toFixed(2))
        .join(' '),
    },
    settings: {
      tokens: options.tokens,
      concurrency: options.concurrency,
      repeat: options.repeat,
      threads: options.threads,
      contextSize: CONTEXT_SIZE,
      promptTokens,
      cpuProfile: options.cpuProfileDirectory !== undefined,
    },
    models: models.map(({ file: _file, ...model }) => model),
    summaries,
    warnings,
    cases,
  };
  const markdown = markdownReport(report);
  process.stdout.write(`\n${markdown}\n`);
  writeResults(options.outputDirectory, report, markdown);
}

/** One model at one thread count: warm-up, then the repetitions, the paths alternating which goes first. */
async function measureCase(
  options: CpuBenchOptions,
  threads: number,
  model: BenchModel,
  direct: DirectModel,
  taskgate: TaskgateServer,
): Promise<MeasuredCase> {
  const deadlineMs = 60_000 + options.tokens * 500;
  const calls = (tokens: number): Record<PathName, GenerationCall> => ({
    direct: direct.call(tokens, deadlineMs),
    through: taskgate.call(model, tokens, deadlineMs),
  });
  const settings = (expectedTokens: number): RoundSettings => ({
    expectedTokens,
    maxNoisePercent: options.maxNoisePercent,
    retries: options.retries,
    processes: [{ name: 'taskgate', pid: taskgate.pid }],
  });
  const label = `${threads} thread(s), ${model.name}`;
  log(`${label}: warming up`);
  for (const path of ['direct', 'through'] as const) {
    await runRound(1, calls(WARMUP_TOKENS)[path], { ...settings(WARMUP_TOKENS), retries: 0 });
    await runRound(options.concurrency, calls(WARMUP_TOKENS)[path], { ...settings(WARMUP_TOKENS), retries: 0 });
  }
  const measured: Record<PathName, PathRounds> = { direct: { single: [], concurrent: [] }, through: { single: [], concurrent: [] } };
  const call = calls(options.tokens);
  for (let repetition = 0; repetition < options.repeat; repetition++) {
    const order: PathName[] = repetition % 2 === 0 ? ['direct', 'through'] : ['through', 'direct'];
    for (const path of order) {
      log(`${label}: repetition ${repetition + 1}/${options.repeat}, ${path}`);
      measured[path].single.push(await runRound(1, call[path], settings(options.tokens)));
      measured[path].concurrent.push(await runRound(options.concurrency, call[path], settings(options.tokens)));
    }
  }
  return { threads, model: model.name, ...measured };
}

/**
 * vite-node loads signal-exit, whose SIGINT/SIGTERM listener re-raises the
 * signal (killing the process at once) when it finds itself the only listener
 * left. child-processes.mjs listens with `once`, so it is removed as the signal
 * arrives and its cleanup (stop taskgate, remove the temporary directory, then
 * exit) would be cut short. A listener that stays keeps it alive; the cleanup
 * has its own deadlines and ends the process.
 */
function keepInterruptCleanupAlive(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined);
}

function taskgateWarnings(taskgate: TaskgateServer): string[] {
  const lines = taskgate.log.text.split('\n').filter((line) => line.includes('"level":"warn"') || line.includes('"level":"error"'));
  return lines.length === 0 ? [] : [`taskgate logged ${lines.length} warnings or errors, e.g. ${lines[0]!.slice(0, 300)}`];
}

function nodeLlamaCppVersion(): string {
  // Its package.json is not in its exports: read the installed file.
  return (JSON.parse(readFileSync(join(repositoryRoot, 'node_modules', 'node-llama-cpp', 'package.json'), 'utf8')) as { version: string })
    .version;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
