/**
 * taskgate's router simulation: how much the router saves and how often it
 * serves a model that is not good enough, on simulated workloads whose true
 * pass rates are known, running the real decision code (src/routing).
 *
 *   npm run bench:router -- [--workloads N] [--calls N] [--seed N] [--quick] [--scenarios-only | --no-scenarios]
 *   npm run bench:router -- --max-samples 2000 --shadow-rate 0.04 --threshold 4.5   (explore other settings)
 *   npm run bench:router -- --real-data [DIR] [--quick] [--seed N]   (RouteLLM's recorded answers; DIR defaults to ../shared/data/routellm)
 *
 * It runs the workload simulation (bench/router/worker-simulation.ts) with
 * taskgate's rule, the naive rule, and the naive rule without the rollback
 * detector, then the focused experiments (evals to certify, certification at
 * the threshold, drop detection, false alarms), then the production
 * scenarios (scenarios/scenarios.ts: the real router worker under spent
 * budgets, outages, feedback, slow models, traffic levels, free text,
 * contract edits and bursts). It prints a Markdown report,
 * writes it with the figures as JSON to bench/results/, and writes the plots
 * to docs/routing/*.svg (`--svg-dir` elsewhere, `--no-svg` not at all).
 * Everything is seeded: the same options give the same figures. About a
 * minute on 2 cores (`--quick`: a few seconds).
 *
 * `--real-data` runs the router on recorded per-prompt answers of real
 * models instead (real-data/real-data-mode.ts), read where they lie, and
 * reports savings and served quality against the oracles; without the data
 * it says what is missing and measures nothing.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UNIFORM_PRIOR } from '../../src/routing/confidence-sequence.js';
import { judgeCandidate } from '../../src/routing/route-decision.js';
import { judgeNaively, wilsonJudge, type Judge } from './comparison-rules.js';
import { dropDetection, falseAlarms, verdictTimes } from './experiments.js';
import { outcomeFigures, runFigures } from './metrics.js';
import { renderCharts, renderReport, type RuleRun, type SimulationResults } from './report.js';
import { defaultSettings, policyFor, type RouterSettings } from './settings.js';
import { BAD_MARGIN, createTotals, simulateWorkload } from './worker-simulation.js';
import { generateWorkloads, type Workload } from './workloads.js';
import { measureRealData } from './real-data/real-data-mode.js';
import { renderRealDataReport } from './real-data/real-data-report.js';
import { renderScenarios, runScenarios } from './scenarios/scenarios.js';

interface Options {
  workloads: number;
  calls: number;
  seed: number;
  quick: boolean;
  scenarios: 'also' | 'only' | 'none';
  /** The recorded data's folder in the real-data mode, else null. */
  realData: string | null;
  svgDirectory: string | null;
  overrides: Partial<Pick<RouterSettings, 'maxSamples' | 'sampleRate' | 'shadowRate' | 'cusumThreshold' | 'cooldownCalls' | 'minSamples'>>;
}

const flags: Record<string, keyof Options['overrides']> = {
  '--max-samples': 'maxSamples',
  '--min-samples': 'minSamples',
  '--sample-rate': 'sampleRate',
  '--shadow-rate': 'shadowRate',
  '--threshold': 'cusumThreshold',
  '--cooldown-calls': 'cooldownCalls',
};

function readOptions(argv: string[]): Options {
  const options: Options = {
    workloads: 200,
    calls: 200_000,
    seed: 1,
    quick: false,
    scenarios: 'also',
    realData: null,
    svgDirectory: 'docs/routing',
    overrides: {},
  };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index] ?? '';
    const value = (): number => {
      const text = argv[(index += 1)];
      const number = Number(text);
      if (text === undefined || !Number.isFinite(number)) throw new Error(`${flag} needs a number`);
      return number;
    };
    if (flag === '--quick') options.quick = true;
    else if (flag === '--scenarios-only') options.scenarios = 'only';
    else if (flag === '--no-scenarios') options.scenarios = 'none';
    else if (flag === '--workloads') options.workloads = value();
    else if (flag === '--calls') options.calls = value();
    else if (flag === '--seed') options.seed = value();
    else if (flag === '--real-data') {
      const directory = argv[index + 1];
      if (directory !== undefined && !directory.startsWith('--')) {
        options.realData = resolve(directory);
        index += 1;
      } else options.realData = DEFAULT_REAL_DATA;
    } else if (flag === '--no-svg') options.svgDirectory = null;
    else if (flag === '--svg-dir') options.svgDirectory = argv[(index += 1)] ?? 'docs/routing';
    else if (flag in flags) options.overrides[flags[flag] as keyof Options['overrides']] = value();
    else if (flag === '--help') {
      process.stdout.write(`${readHeader()}\n`);
      process.exit(0);
    } else throw new Error(`unknown option ${flag} (see --help)`);
  }
  if (options.quick) {
    options.workloads = Math.min(options.workloads, 60);
    options.calls = Math.min(options.calls, 100_000);
  }
  return options;
}

/** RouteLLM's data beside the repository (never copied into it). */
const DEFAULT_REAL_DATA = resolve(fileURLToPath(new URL('../..', import.meta.url)), '../shared/data/routellm');

function readHeader(): string {
  return [
    'npm run bench:router -- [--workloads N] [--calls N] [--seed N] [--quick] [--scenarios-only | --no-scenarios] [--no-svg | --svg-dir DIR] [--max-samples N] [--min-samples N] [--sample-rate R] [--shadow-rate R] [--threshold H] [--cooldown-calls N]',
    `npm run bench:router -- --real-data [DIR] [--quick] [--seed N]   (DIR: ${DEFAULT_REAL_DATA})`,
  ].join('\n');
}

function runRealDataMode(directory: string, options: Options): void {
  const results = measureRealData(directory, options.seed, options.quick);
  if ('missing' in results) {
    process.stdout.write(
      `Real data: RouteLLM's evaluation data is missing (${results.missing}); nothing measured. Put lm-sys/RouteLLM's routellm/evals data there or pass its folder: --real-data DIR.\n`,
    );
    return;
  }
  const report = renderRealDataReport(results);
  process.stdout.write(report);
  writeResults('router-real-data', report, results);
}

function runRule(label: string, settings: RouterSettings, workloads: Workload[], options: Options): RuleRun {
  const totals = createTotals(options.calls, 200);
  const outcomes = workloads.map((workload) => simulateWorkload(workload, settings, totals, options.seed));
  const checkpoints = [10_000, 25_000, 50_000, 100_000, 200_000, 500_000, 1_000_000];
  return {
    label,
    settings: describeSettings(settings),
    figures: runFigures(totals, checkpoints),
    outcomes: outcomeFigures(outcomes, BAD_MARGIN),
    totals,
  };
}

function describeSettings(settings: RouterSettings): string {
  if (settings.rule === 'naive') return `look once at 30 evals; shadow ${settings.shadowRate}, h ${settings.cusumThreshold}`;
  return `minSamples ${settings.minSamples}, maxSamples ${settings.maxSamples}, sample ${settings.sampleRate}, shadow ${settings.shadowRate}, h ${settings.cusumThreshold}, cooldown ${settings.cooldownCalls} calls`;
}

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  const startedAt = Date.now();
  if (options.realData !== null) {
    runRealDataMode(options.realData, options);
    return;
  }
  if (options.scenarios === 'only') {
    const scenarios = await runScenarios(options.seed);
    const report = `## Production scenarios (seed ${options.seed}, ${((Date.now() - startedAt) / 1000).toFixed(0)} s)\n\n${renderScenarios(scenarios)}\n`;
    process.stdout.write(report);
    writeResults('router-scenarios', report, scenarios);
    return;
  }
  const taskgate = { ...defaultSettings('taskgate'), ...options.overrides };
  const naive = { ...defaultSettings('naive'), ...options.overrides };
  const workloads = generateWorkloads(options.workloads, options.calls, options.seed);
  const runs = [
    runRule('taskgate', taskgate, workloads, options),
    runRule('naive', naive, workloads, options),
    runRule('naive, no rollback', { ...naive, shadowRate: 0 }, workloads, options),
  ];

  const experimentRuns = options.quick ? 300 : 2_000;
  const seed = options.seed;
  const policy = policyFor(taskgate, 0.95);
  const uniform = { ...policy, prior: UNIFORM_PRIOR };
  const toCertify: Array<[string, Judge, typeof policy]> = [
    ['taskgate (Beta(40, 1) prior)', judgeCandidate, policy],
    ['uniform prior', judgeCandidate, uniform],
    ['naive', judgeNaively, policy],
  ];
  const certification = toCertify.flatMap(([label, judge, chosen]) =>
    [0.99, 0.98, 0.97].map((rate) => ({ label, ...verdictTimes(judge, chosen, rate, experimentRuns, seed, chosen.maxSamples) })),
  );
  const longHorizon = options.quick ? 3_000 : 10_000;
  const uncapped = { ...policy, maxSamples: Number.POSITIVE_INFINITY };
  const threshold = [
    ...[0.95, 0.93].map((rate) => ({
      label: `taskgate, cap ${policy.maxSamples}`,
      horizon: policy.maxSamples,
      ...verdictTimes(judgeCandidate, policy, rate, experimentRuns, seed, policy.maxSamples),
    })),
    {
      label: 'taskgate, no cap',
      horizon: longHorizon,
      ...verdictTimes(judgeCandidate, uncapped, 0.95, options.quick ? 100 : 1_000, seed, longHorizon),
    },
    ...[0.95, 0.93].map((rate) => ({
      label: `Wilson 95% two-sided, re-checked, cap ${policy.maxSamples}`,
      horizon: policy.maxSamples,
      ...verdictTimes(wilsonJudge(1.959964), policy, rate, experimentRuns, seed, policy.maxSamples),
    })),
    ...[0.95, 0.93].map((rate) => ({
      label: `Wilson 95% one-sided, re-checked, cap ${policy.maxSamples}`,
      horizon: policy.maxSamples,
      ...verdictTimes(wilsonJudge(1.644854), policy, rate, experimentRuns, seed, policy.maxSamples),
    })),
    ...[0.95, 0.93].map((rate) => ({ label: 'naive', horizon: 30, ...verdictTimes(judgeNaively, policy, rate, experimentRuns, seed, 30) })),
  ];
  const drops = [
    dropDetection(taskgate, 0.95, 0.85, 0.95, experimentRuns, seed),
    dropDetection(taskgate, 0.95, 0.9, 0.95, experimentRuns, seed),
    dropDetection(taskgate, 0.9, 0.8, 0.9, experimentRuns, seed),
    dropDetection(taskgate, 0.98, 0.88, 0.98, experimentRuns, seed),
  ].map((drop, index) => ({ ...drop, passRate: [0.95, 0.95, 0.9, 0.98][index] ?? 0.95 }));
  const alarmCalls = options.quick ? 1_000_000 : 10_000_000;
  const alarms = [
    ...[0.95, 0.96, 0.97, 0.99].map((rate) => falseAlarms(taskgate, rate, 0.95, alarmCalls, seed)),
    falseAlarms(taskgate, 0.9, 0.9, alarmCalls, seed),
    falseAlarms(taskgate, 0.98, 0.98, alarmCalls, seed),
  ];

  const results: SimulationResults = {
    options: { workloads: options.workloads, calls: options.calls, seed: options.seed, quick: options.quick, overrides: options.overrides },
    workloads,
    runs,
    certification,
    threshold,
    drops,
    alarms,
    seconds: (Date.now() - startedAt) / 1000,
  };
  const scenarios = options.scenarios === 'none' ? [] : await runScenarios(options.seed);
  const scenarioReport = scenarios.length === 0 ? '' : `\n## Production scenarios\n\n${renderScenarios(scenarios)}\n`;
  const report = `${renderReport({ ...results, seconds: (Date.now() - startedAt) / 1000 })}${scenarioReport}`;
  process.stdout.write(report);
  writeResults('router-simulation', report, { ...results, runs: runs.map(({ totals: _totals, ...run }) => run), scenarios });
  if (options.svgDirectory !== null) {
    mkdirSync(options.svgDirectory, { recursive: true });
    for (const [name, svg] of Object.entries(renderCharts(results))) writeFileSync(join(options.svgDirectory, name), svg);
    process.stdout.write(`\nplots written to ${options.svgDirectory}/\n`);
  }
}

function writeResults(name: string, report: string, figures: unknown): void {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(join('bench/results', `${name}-${stamp}.md`), report);
  writeFileSync(join('bench/results', `${name}-${stamp}.json`), JSON.stringify(figures, null, 2));
}

await main();
