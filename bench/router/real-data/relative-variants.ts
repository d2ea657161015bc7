/**
 * The relative default as it ships, and the variants the real-data report
 * runs beside it to show what limits it: one thing changed each (who grades
 * GPT-4's replies, the judge's error ε, its price, the project's pooled prior).
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import { ASSUMED_JUDGE_ERROR, relativePolicyOf } from '../../../src/routing/judge-error.js';
import type { RelativePolicy } from '../../../src/routing/split-decision.js';
import { JUDGE_ANSWER_TOKENS, JUDGE_INSTRUCTION_TOKENS, type Judging } from './sample-judging.js';

export interface RelativeVariant {
  label: string;
  /** ε: how often a verdict or a grade is wrong; the policy is told the same ε. */
  judgeError: number;
  /** Who grades R's replies: the judge the router picks, right but for ε (the default); that judge grading by its own answer; or the data on every sample, free and exact. */
  grading: Judging['grading'];
  /** Whose price the judges have: the ones `chooseJudge` picks (GPT-4 judges Mixtral's replies), or Mixtral's for every judge call. */
  judgePrice: 'chosen' | 'cheap';
  /** Whether a project's workloads pool their evidence into the prior (paired-pool.ts), as the router does; false: each on its own evidence alone. */
  pool: boolean;
  /**
   * The contract's `per_call` (false when absent, as the default contract): the route also learns per-call policies from the samples
   * that enter Mixtral's evidence, and serves a certified one in place of the random share when it saves more (paired-shares.ts).
   */
  perCall?: boolean;
}

/** The router as it ships. */
export const ROUTER_DEFAULT: RelativeVariant = {
  label: 'the router (relative default)',
  judgeError: ASSUMED_JUDGE_ERROR,
  grading: 'judge',
  judgePrice: 'chosen',
  pool: true,
};

/** The policy a variant decides with: the default contract's, with its ε; gold grades are exact and on every sample. */
export function variantPolicy(variant: RelativeVariant): RelativePolicy {
  const policy = relativePolicyOf(DEFAULT_CONTRACT, variant.judgeError);
  return variant.grading === 'gold' ? { ...policy, gradeError: 0, agreementGradesSampled: false } : policy;
}

/** Older names, still imported by the per-call measurement (per-call-policy.ts, per-call-samples.ts). */
export const PAIRED_SHARES = ROUTER_DEFAULT;
export const pairedContract = variantPolicy;
/** A pairwise verdict's tokens beyond the prompt and the two replies: its instructions and its answer (sample-judging.ts). */
export const JUDGE_OVERHEAD_TOKENS = JUDGE_INSTRUCTION_TOKENS.pairwise + JUDGE_ANSWER_TOKENS.pairwise;
