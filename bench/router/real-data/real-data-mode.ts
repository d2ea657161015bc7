/**
 * `npm run bench:router -- --real-data [DIR]`: the router on RouteLLM's
 * recorded answers (routellm-data.ts), in the two runs issue 37 asks for,
 * each with today's router and with the paired-shares rule (paired-shares.ts)
 * on the same calls:
 *
 * (a) 1,000 calls a workload at a fixed sample rate of 0.1 (both rules);
 * (b) 30 simulated days at 2,000 calls a workload a day on the untouched
 *     default contract (today's router: `sample_rate: "auto"`; paired shares:
 *     the largest rate the default daily eval budget allows); `--quick`: 5 days.
 *
 * The paired-shares rule also runs in variants that grade the requested
 * model's replies better or judge without error, to show what limits it.
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import { PAIRED_SHARES, type PairedSharesVariant } from './paired-shares.js';
import { pooledShare, realWorkloads, runPairedShares, type PairedSharesRun } from './paired-shares-run.js';
import { dataOracles, runRealData, type RealRun, type RealRunPlan } from './real-data-run.js';
import type { RealDataResults } from './real-data-report.js';
import { findRouteLlmData, loadRouteLlmData } from './routellm-data.js';

export const FIXED_SAMPLE_RATE = 0.1;
export const CALLS_PER_DAY = 2_000;

/** The design as it would run (first), then with one or two things changed: better grades, a perfect or a cheap judge, no GPT-4 replays, no stopping. */
export const PAIRED_VARIANTS: PairedSharesVariant[] = [
  PAIRED_SHARES,
  { ...PAIRED_SHARES, label: 'the judge grades every agreement', grading: { by: 'judge', agreementShare: 1 } },
  { ...PAIRED_SHARES, label: 'gold grades on every sample, free', grading: { by: 'gold' } },
  { ...PAIRED_SHARES, label: 'gold grades, a judge never wrong (ε 0)', judgeError: 0, grading: { by: 'gold' } },
  { ...PAIRED_SHARES, label: "the judge at Mixtral's price (ε 0.02)", judgePrice: 'cheap' },
  { ...PAIRED_SHARES, label: 'replays of GPT-4-served calls only', replay: 'calls GPT-4 served' },
  { ...PAIRED_SHARES, label: "both: the judge at Mixtral's price, replays of GPT-4-served calls only", judgePrice: 'cheap', replay: 'calls GPT-4 served' },
  { ...PAIRED_SHARES, label: 'sampling never stops (spend ignored)', stopping: 'never' },
];

export interface RealDataRun {
  today: RealRun;
  /** One per variant of PAIRED_VARIANTS, the design first. */
  paired: PairedSharesRun[];
}

export function realDataPlans(quick: boolean): RealRunPlan[] {
  const days = quick ? 5 : 30;
  return [
    {
      label: `(a) 1,000 calls a workload at a fixed sample rate of ${FIXED_SAMPLE_RATE}`,
      callsPerWorkload: 1_000,
      callsPerDay: CALLS_PER_DAY,
      sampleRate: FIXED_SAMPLE_RATE,
      pairedSampleRate: FIXED_SAMPLE_RATE,
    },
    {
      label: `(b) ${days} days at ${CALLS_PER_DAY.toLocaleString('en-US')} calls a workload a day, the untouched default contract (today: sample_rate "${DEFAULT_CONTRACT.sample_rate}"; paired shares: the rate the $${DEFAULT_CONTRACT.daily_budget_usd} daily eval budget allows)`,
      callsPerWorkload: days * CALLS_PER_DAY,
      callsPerDay: CALLS_PER_DAY,
      sampleRate: DEFAULT_CONTRACT.sample_rate,
      pairedSampleRate: 'budget',
    },
  ];
}

/** The results, or what is missing of the data (the caller says so and measures nothing). */
export function measureRealData(directory: string, seed: number, quick: boolean): RealDataResults | { missing: string } {
  const found = findRouteLlmData(directory);
  if ('missing' in found) return found;
  const startedAt = Date.now();
  const data = loadRouteLlmData(directory);
  const runs = realDataPlans(quick).map((plan): RealDataRun => {
    const reals = realWorkloads(data, plan, seed);
    return { today: runRealData(data, plan, seed), paired: PAIRED_VARIANTS.map((variant) => runPairedShares(data, plan, variant, seed, reals)) };
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
    seconds: (Date.now() - startedAt) / 1000,
  };
}
