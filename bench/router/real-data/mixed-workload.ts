/**
 * MMLU as one workload: every subject's prompts mixed into one workload that
 * asks GPT-4, Mixtral its candidate (the per-call measurement's "MMLU as one
 * workload", per-call-policy.ts, where a per-call policy wins offline), run
 * through the worker simulation (paired-shares.ts `simulateRelativeRouter`):
 * alone, so on its own evidence (a project of one workload has no pooled
 * prior). Its calls are `realWorkload`'s: the 13,767 prompts in a seeded
 * random order, cycled.
 *
 * `measureMixedMmlu` runs it with the contract's `per_call` off (the router
 * as it ships) and on, on the same calls and random stream.
 */
import { simulateRelativeRouter } from './paired-shares.js';
import type { EvalSpend, PerCallOutcome, RouterRunPlan } from './relative-outcome.js';
import { ROUTER_DEFAULT, type RelativeVariant } from './relative-variants.js';
import { realWorkload, type RealWorkload } from './real-workloads.js';
import type { RecordedData, RecordedWorkload } from './routellm-data.js';

export const MIXED_MMLU_NAME = 'mmlu (all subjects as one workload)';

/** The router as it ships, and with per-call policies (`per_call: true`), on the mixed workload. */
export const PER_CALL_VARIANTS: RelativeVariant[] = [
  { ...ROUTER_DEFAULT, label: 'per_call false (the router as it ships)' },
  { ...ROUTER_DEFAULT, label: 'per_call true', perCall: true },
];

/** Every MMLU subject's prompts, in the data's order, as one recorded workload. */
export function mixedMmlu(data: RecordedData): RecordedWorkload {
  const prompts = data.workloads.filter((workload) => workload.suite === 'mmlu').flatMap((workload) => workload.prompts);
  return { name: MIXED_MMLU_NAME, suite: 'mmlu', answers: 'letter', prompts };
}

/** The mixed workload's calls, as `realWorkload` makes any workload's. */
export function mixedMmluWorkload(data: RecordedData, calls: number, seed: number): RealWorkload {
  return realWorkload(data, mixedMmlu(data), data.workloads.length, calls, seed);
}

export interface MixedWorkloadFigures {
  label: string;
  perCall: boolean;
  calls: number;
  prompts: number;
  /** Served accuracy / GPT-4's over all calls. */
  qualityRatio: number;
  /** Against GPT-4 serving every call: production alone, and with the eval spend. */
  savings: number;
  netSavings: number;
  /** Each kind of eval spend as a share of GPT-4 serving every call. */
  spendShares: EvalSpend;
  /** Mixtral's share of the calls at the end (a policy's: its share × its routed share), and averaged over the run. */
  share: number;
  meanShare: number;
  firstSavingCall: number | null;
  samples: { exploration: number; monitoring: number };
  demotions: number;
  fallbacks: number;
  /** The grader's checks against the verdicts, and the grade error of the last decision (null: the checks refuted ε, grades dropped). */
  graderChecks: { compared: number; differed: number };
  gradeError: number | null;
  perCallOutcome: PerCallOutcome | null;
  seconds: number;
}

/** The mixed workload under each of `variants` (per_call off and on by default). */
export function measureMixedMmlu(
  data: RecordedData,
  plan: RouterRunPlan,
  seed: number,
  variants: readonly RelativeVariant[] = PER_CALL_VARIANTS,
): MixedWorkloadFigures[] {
  const real = mixedMmluWorkload(data, plan.calls, seed);
  return variants.map((variant) => {
    const started = performance.now();
    const outcome = simulateRelativeRouter(real, data, plan, variant, seed);
    const seconds = (performance.now() - started) / 1000;
    const evaluation = Object.values(outcome.spend).reduce((sum, value) => sum + value, 0);
    const spendShare = (kind: keyof EvalSpend): number => outcome.spend[kind] / outcome.requestedCost;
    return {
      label: variant.label,
      perCall: variant.perCall === true,
      calls: plan.calls,
      prompts: real.prompts.length,
      qualityRatio: outcome.served.right / outcome.served.requestedRight,
      savings: 1 - outcome.production / outcome.requestedCost,
      netSavings: 1 - (outcome.production + evaluation) / outcome.requestedCost,
      spendShares: {
        candidateReplays: spendShare('candidateReplays'),
        referenceReplays: spendShare('referenceReplays'),
        verdicts: spendShare('verdicts'),
        grades: spendShare('grades'),
        selfChecks: spendShare('selfChecks'),
      },
      share: outcome.share,
      meanShare: outcome.meanShare,
      firstSavingCall: outcome.firstSavingCall,
      samples: outcome.samples,
      demotions: outcome.demotions,
      fallbacks: outcome.fallbacks,
      graderChecks: outcome.graderChecks,
      gradeError: outcome.gradeError,
      perCallOutcome: outcome.perCall ?? null,
      seconds,
    };
  });
}
