/**
 * `npm run bench:router -- --real-data [DIR]`: the router on RouteLLM's
 * recorded answers (routellm-data.ts), in the two runs issue 37 asks for,
 * each under the relative default (paired-shares.ts: the router's own
 * decision, split and exploration functions) and under the absolute
 * semantics (a contract with `pass_rate` 0.95: the worker simulation), on
 * the same calls:
 *
 * (a) 1,000 calls a workload at a fixed sample rate of 0.1;
 * (b) 30 simulated days at 2,000 calls a workload a day on the untouched
 *     default contract (`sample_rate: "auto"`); `--quick`: 5 days.
 *
 * The relative default also runs with one thing changed each (grades, the
 * judge's error or price, the project's pooled prior), to show what limits it;
 * and, on MMLU as one workload (mixed-workload.ts), with and without per-call
 * policies, in run (b).
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import { ROUTER_DEFAULT, type RelativeVariant } from './relative-variants.js';
import { pooledShare, realWorkloads, runRelativeRouter, type RelativeRun } from './paired-shares-run.js';
import { measureMixedMmlu } from './mixed-workload.js';
import { measurePerCallPolicy, type PerCallPlan } from './per-call-policy.js';
import { dataOracles, runRealData, type RealRun, type RealRunPlan } from './real-data-run.js';
import type { RealDataResults } from './real-data-report.js';
import { findRouteLlmData, loadRouteLlmData, type RecordedData } from './routellm-data.js';

export const FIXED_SAMPLE_RATE = 0.1;
export const CALLS_PER_DAY = 2_000;

/** The router as it ships (first); then from it, one thing changed each. */
export const RELATIVE_VARIANTS: RelativeVariant[] = [
  ROUTER_DEFAULT,
  { ...ROUTER_DEFAULT, label: 'without the pooled prior (each workload on its own evidence)', pool: false },
  { ...ROUTER_DEFAULT, label: 'gold grades of GPT-4 on every sample, free', grading: 'gold' },
  { ...ROUTER_DEFAULT, label: 'gold grades, and a judge never wrong (ε 0)', grading: 'gold', judgeError: 0 },
  {
    ...ROUTER_DEFAULT,
    label: 'Mixtral grades GPT-4 by its own answer (right iff they agree; the router assumes ε 0.02)',
    grading: 'own answer',
  },
  { ...ROUTER_DEFAULT, label: 'a judge wrong 5% of the time (ε 0.05, the router told so)', judgeError: 0.05 },
  { ...ROUTER_DEFAULT, label: "every judge call at Mixtral's price (ε 0.02)", judgePrice: 'cheap' },
];

/** Calls picked one by one (per-call-policy.ts): random halves of each workload's prompts, paid for over the 30-day run's calls. */
export function perCallPlan(quick: boolean): PerCallPlan {
  return { splits: quick ? 2 : 5, horizonCalls: 30 * CALLS_PER_DAY };
}

export interface RealDataRun {
  plan: RealRunPlan;
  /** One per variant of RELATIVE_VARIANTS, the router as it ships first. */
  relative: RelativeRun[];
  absolute: RealRun;
}

export function realDataPlans(quick: boolean): RealRunPlan[] {
  const days = quick ? 5 : 30;
  return [
    {
      label: `(a) 1,000 calls a workload at a fixed sample rate of ${FIXED_SAMPLE_RATE}`,
      callsPerWorkload: 1_000,
      callsPerDay: CALLS_PER_DAY,
      sampleRate: FIXED_SAMPLE_RATE,
    },
    {
      label: `(b) ${days} days at ${CALLS_PER_DAY.toLocaleString('en-US')} calls a workload a day, the untouched default contract (sample_rate "${DEFAULT_CONTRACT.sample_rate}")`,
      callsPerWorkload: days * CALLS_PER_DAY,
      callsPerDay: CALLS_PER_DAY,
      sampleRate: DEFAULT_CONTRACT.sample_rate,
    },
  ];
}

/** Per-call policies in the worker simulation: MMLU as one workload under run (b)'s plan, per_call off and on. */
function perCallWorker(data: RecordedData, plan: RealRunPlan | undefined, seed: number): RealDataResults['perCallWorker'] {
  if (plan === undefined) throw new Error('no run (b)');
  return {
    plan,
    figures: measureMixedMmlu(data, { calls: plan.callsPerWorkload, callsPerDay: plan.callsPerDay, sampleRate: plan.sampleRate }, seed),
  };
}

/** The results, or what is missing of the data (the caller says so and measures nothing). */
export function measureRealData(directory: string, seed: number, quick: boolean): RealDataResults | { missing: string } {
  const found = findRouteLlmData(directory);
  if ('missing' in found) return found;
  const startedAt = Date.now();
  const data = loadRouteLlmData(directory);
  const plans = realDataPlans(quick);
  const runs = plans.map((plan): RealDataRun => {
    const reals = realWorkloads(data, plan, seed);
    return {
      plan,
      relative: RELATIVE_VARIANTS.map((variant) => runRelativeRouter(data, plan, variant, seed, reals)),
      absolute: runRealData(data, plan, seed),
    };
  });
  return {
    directory,
    seed,
    quick,
    data: {
      workloads: data.workloads.length,
      prompts: data.workloads.reduce((sum, workload) => sum + workload.prompts.length, 0),
      leftOut: data.leftOut,
      cheap: data.cheap,
      requested: data.requested,
    },
    oracles: { calls: dataOracles(data, 'calls'), tokens: dataOracles(data, 'tokens') },
    runs,
    pooled: pooledShare(data),
    perCall: measurePerCallPolicy(data, seed, perCallPlan(quick)),
    perCallWorker: perCallWorker(data, plans[plans.length - 1], seed),
    seconds: (Date.now() - startedAt) / 1000,
  };
}
