/**
 * The CPU benchmark's figures: per model, thread count and path, the time to
 * first token (p50/p90 over every call), the decode rate per call, the
 * aggregate rate of N calls at once, and what taskgate adds over the direct
 * path. Printed as Markdown and written to the results directory as JSON (with
 * every call) and Markdown.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, signed } from './number-format.mjs';
import { log } from './log.mjs';
import type { BenchModel } from './cpu-models.js';
import type { ModelName } from './cpu-options.js';
import type { CallTiming, Round } from './cpu-rounds.js';
import { median as medianOrUndefined, percentile as percentileOrUndefined } from './statistics.mjs';

export type PathName = 'direct' | 'through';

export interface PathRounds {
  single: Round[];
  concurrent: Round[];
}

export interface MeasuredCase {
  threads: number;
  model: ModelName;
  direct: PathRounds;
  through: PathRounds;
}

export interface PathSummary {
  single: { firstTokenP50Ms: number; firstTokenP90Ms: number; msPerToken: number; tokensPerSecond: number };
  concurrent: {
    firstTokenP50Ms: number;
    firstTokenP90Ms: number;
    msPerToken: number;
    tokensPerSecondPerCall: number;
    wholeCallP50Ms: number;
    aggregateTokensPerSecond: number;
  };
  /** CPU time of the process that generates (this one for direct, taskgate's through it) per generated token, all threads: spinning included. */
  serverCpuMsPerToken: number;
  noiseMedianPercent: number;
  noiseMaxPercent: number;
  remeasured: number;
}

export interface CaseSummary {
  threads: number;
  model: ModelName;
  direct: PathSummary;
  through: PathSummary;
  /**
   * taskgate against direct: milliseconds for time to first token, % for time
   * per token and whole calls, a ratio for the aggregate rate. With calls at
   * once, TTFT and per-call decode rates are not compared: taskgate receives
   * the calls a few milliseconds apart and evaluates the first prompt alone,
   * where the direct path starts all of them in one batch, which shifts time
   * between the two without changing the whole.
   */
  added: { singleFirstTokenMs: number; singlePerTokenPercent: number; concurrentWholeCallPercent: number; aggregateRatio: number };
}

const median = (values: number[]): number => medianOrUndefined(values) ?? Number.NaN;
const percentile = (values: number[], rank: number): number => percentileOrUndefined(values, rank) ?? Number.NaN;
const msPerToken = (call: CallTiming) => call.decodeMs / (call.completionTokens - 1);

export function summarisePath(rounds: PathRounds, server: string): PathSummary {
  const singles = rounds.single.flatMap((round) => round.calls);
  const concurrent = rounds.concurrent.flatMap((round) => round.calls);
  const all = [...rounds.single, ...rounds.concurrent];
  const singleMs = median(singles.map(msPerToken));
  const concurrentMs = median(concurrent.map(msPerToken));
  return {
    single: {
      firstTokenP50Ms: percentile(
        singles.map((call) => call.firstTokenMs),
        50,
      ),
      firstTokenP90Ms: percentile(
        singles.map((call) => call.firstTokenMs),
        90,
      ),
      msPerToken: singleMs,
      tokensPerSecond: 1000 / singleMs,
    },
    concurrent: {
      firstTokenP50Ms: percentile(
        concurrent.map((call) => call.firstTokenMs),
        50,
      ),
      firstTokenP90Ms: percentile(
        concurrent.map((call) => call.firstTokenMs),
        90,
      ),
      msPerToken: concurrentMs,
      tokensPerSecondPerCall: 1000 / concurrentMs,
      wholeCallP50Ms: percentile(
        concurrent.map((call) => call.totalMs),
        50,
      ),
      aggregateTokensPerSecond: median(rounds.concurrent.map((round) => round.aggregateTokensPerSecond)),
    },
    serverCpuMsPerToken: median(
      all.map(
        (round) =>
          ((round.cpuPercent[server] ?? Number.NaN) * round.wallMs) /
          100 /
          round.calls.reduce((sum, call) => sum + call.completionTokens, 0),
      ),
    ),
    noiseMedianPercent: median(all.map((round) => round.noisePercent)),
    noiseMaxPercent: Math.max(...all.map((round) => round.noisePercent)),
    remeasured: all.reduce((sum, round) => sum + round.attempts - 1, 0),
  };
}

export function summariseCase(measured: MeasuredCase): CaseSummary {
  const direct = summarisePath(measured.direct, 'bench');
  const through = summarisePath(measured.through, 'taskgate');
  return {
    threads: measured.threads,
    model: measured.model,
    direct,
    through,
    added: {
      singleFirstTokenMs: through.single.firstTokenP50Ms - direct.single.firstTokenP50Ms,
      singlePerTokenPercent: 100 * (through.single.msPerToken / direct.single.msPerToken - 1),
      concurrentWholeCallPercent: 100 * (through.concurrent.wholeCallP50Ms / direct.concurrent.wholeCallP50Ms - 1),
      aggregateRatio: through.concurrent.aggregateTokensPerSecond / direct.concurrent.aggregateTokensPerSecond,
    },
  };
}

export interface CpuReport {
  startedAt: string;
  environment: Record<string, unknown>;
  settings: {
    tokens: number;
    concurrency: number;
    repeat: number;
    threads: number[];
    contextSize: number;
    promptTokens: number | null;
    cpuProfile: boolean;
  };
  models: Array<Omit<BenchModel, 'file'>>;
  summaries: CaseSummary[];
  warnings: string[];
  cases: MeasuredCase[];
}

const pathLabels: Record<PathName, string> = { direct: 'direct (node-llama-cpp)', through: 'through taskgate' };

export function markdownReport(report: CpuReport): string {
  const { environment, settings } = report;
  const n = settings.concurrency;
  const lines = [
    `## CPU engine (llama-cpp): ${report.startedAt}`,
    '',
    `${String(environment.cpuModel)}, ${String(environment.cores)} cores, ${format(Number(environment.memoryGigabytes), 0)} GB, Node ${String(environment.node)}, node-llama-cpp ${String(environment.nodeLlamaCpp)}; ` +
      `commit ${String(environment.commit)}${environment.sourceChanged === true ? ' (src/ changed)' : ''}. Load average at start ${String(environment.loadAverageAtStart)}, at end ${String(environment.loadAverageAtEnd)}.`,
    `${settings.tokens} tokens per call, prompt ${settings.promptTokens ?? '?'} tokens, ${n} sequences per model (context ${settings.contextSize} each), ${settings.repeat} repetitions of 1 call and ${n} calls at once per path.`,
    '',
    '| Model | Parameters | File |',
    '|---|---:|---:|',
    ...report.models.map(
      (model) =>
        `| ${model.name} (${model.shape.embeddingLength} wide, ${model.shape.blockCount} layers, ${model.shape.headCount} heads, ff ${model.shape.feedForwardLength}) | ${format(model.parameters / 1e6, 1)} M | ${format(model.fileBytes / 1e6, 1)} MB |`,
    ),
    '',
    `| Threads | Model | Path | 1 call: TTFT p50 / p90 ms | 1 call: tok/s | ${n} at once: TTFT p50 / p90 ms | ${n} at once: tok/s per call | ${n} at once: whole call p50 ms | ${n} at once: aggregate tok/s | noise % (median / max) |`,
    '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const summary of report.summaries) {
    for (const path of ['direct', 'through'] as const) {
      const { single, concurrent, noiseMedianPercent, noiseMaxPercent } = summary[path];
      lines.push(
        `| ${summary.threads} | ${summary.model} | ${pathLabels[path]} | ${format(single.firstTokenP50Ms, 1)} / ${format(single.firstTokenP90Ms, 1)} | ${format(single.tokensPerSecond, 1)} | ` +
          `${format(concurrent.firstTokenP50Ms, 1)} / ${format(concurrent.firstTokenP90Ms, 1)} | ${format(concurrent.tokensPerSecondPerCall, 1)} | ${format(concurrent.wholeCallP50Ms, 0)} | ${format(concurrent.aggregateTokensPerSecond, 1)} | ${format(noiseMedianPercent, 1)} / ${format(noiseMaxPercent, 1)} |`,
      );
    }
  }
  lines.push(
    '',
    `What taskgate adds over direct: p50 TTFT and median time per decoded token of single calls; p50 whole-call time and aggregate rate (through / direct) of ${n} calls at once ` +
      `(their TTFT and per-call rates are not comparable: taskgate gets the calls a few ms apart and evaluates the first prompt alone, the direct path batches all ${n} prompts):`,
    '',
    `| Threads | Model | 1 call: TTFT | 1 call: time per token | ${n} at once: whole call | ${n} at once: aggregate | CPU ms per token, direct → taskgate |`,
    '|---:|---|---:|---:|---:|---:|---:|',
    ...report.summaries.map(
      ({ threads, model, added, direct, through }) =>
        `| ${threads} | ${model} | ${signed(added.singleFirstTokenMs, 1)} ms | ${signed(added.singlePerTokenPercent, 1)} % | ${signed(added.concurrentWholeCallPercent, 1)} % | ${format(added.aggregateRatio, 2)}× | ` +
        `${format(direct.serverCpuMsPerToken, 2)} → ${format(through.serverCpuMsPerToken, 2)} |`,
    ),
  );
  if (report.warnings.length > 0) lines.push('', 'Warnings:', '', ...report.warnings.map((warning) => `- ${warning}`));
  return lines.join('\n');
}

export function writeResults(outputDirectory: string, report: CpuReport, markdown: string): void {
  mkdirSync(outputDirectory, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, '-');
  const resultPath = join(outputDirectory, `cpu-engine-${stamp}.json`);
  writeFileSync(resultPath, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outputDirectory, `cpu-engine-${stamp}.md`), `${markdown}\n`);
  log(`results written to ${resultPath}`);
}
