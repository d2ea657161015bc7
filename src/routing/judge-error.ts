/**
 * What a relative contract's decisions assume about the judge: its error
 * rate ε on disagreements, and the same rate for its grades of the requested
 * model's replies (paired-quality.ts charges both in the bounds).
 *
 * ε is `ASSUMED_JUDGE_ERROR` until the route's self-checks (the requested
 * model's reply judged against a second reply of its own: any verdict but a
 * tie or "same" is wrong) measure more: then their upper confidence bound,
 * once `MEASURED_AFTER` checks are in. Never above `MAX_ERROR_RATE`: a judge
 * wrong more often than that is charged at that rate, which leaves almost no
 * slack for a share (its verdicts are worth little).
 */
import type { EvalContract } from '../evals/eval-contract.js';
import type { JudgeCheckCounts } from '../store/routing-store.js';
import { wilson, type JudgeCalibration } from './judge-ladder.js';
import { MAX_ERROR_RATE } from './paired-quality.js';
import type { RelativePolicy } from './split-decision.js';

/** A strong judge's error on clear-cut disagreements, as published judge-agreement studies measure it (≈ 2%). */
export const ASSUMED_JUDGE_ERROR = 0.02;
/** The grader test's quantile (one-sided 0.1%): made again at every decision, a 5% test refuted 8 of 56 graders as good as assumed on MMLU. */
const REFUTE_Z = 3.09;
/** Self-checks before their rate replaces the assumption. */
export const MEASURED_AFTER = 100;

/** ε for a workload's judges: the largest of the assumption and each judge's measured upper bound (95%, Wilson). */
export function judgeErrorOf(checks: readonly JudgeCheckCounts[]): number {
  let error = ASSUMED_JUDGE_ERROR;
  for (const judge of checks) {
    if (judge.checks < MEASURED_AFTER) continue;
    error = Math.max(error, wilson(judge.falseLosses, judge.checks, 1.645));
  }
  return Math.min(MAX_ERROR_RATE, error);
}

/**
 * The grader's error, as the judge's: assumed (the judge's ε) unless its
 * checks refute the assumption. A check grades the requested model's reply
 * on a call whose win or loss verdict says who was right; the grade
 * contradicts the verdict only where one of the two is wrong, so
 *   P(grade wrong) ≥ P(contradiction) − ε  and  ≤ P(contradiction) + ε.
 * Once a grader has `MEASURED_AFTER` / 2 checks and the lower side is
 * certainly above the assumption (the Wilson lower bound of its
 * contradiction rate, at 0.1% since the test is made again at every
 * decision, less ε, exceeds ε), it is charged the upper side (the Wilson
 * upper bound at 5%, plus ε). Above `MAX_ERROR_RATE`, null: its grades are
 * worth nothing, and the decisions drop them. A grader about as good as
 * assumed keeps the assumption: charging the upper side of a contradiction
 * rate that holds the judge's own errors too would drop a grader right 98%
 * of the time on 60 checks (measured on MMLU: 44 of 56 subjects).
 */
export function gradeErrorOf(judgeError: number, graderChecks: JudgeCalibration): number | null {
  let error = judgeError;
  for (const counts of Object.values(graderChecks)) {
    if (counts.compared < MEASURED_AFTER / 2 || wilson(counts.differed, counts.compared, -REFUTE_Z) - judgeError <= judgeError) continue;
    error = Math.max(error, judgeError + wilson(counts.differed, counts.compared, 1.645));
  }
  return error > MAX_ERROR_RATE ? null : error;
}

/**
 * The decision's policy from a relative contract; grades of agreements are
 * a random sample of them (sample-scoring.ts). `gradeError` null: the
 * grader is not good enough, and the evidence's grades must be dropped
 * (`withoutGrades`) before deciding.
 */
export function relativePolicyOf(
  contract: Pick<EvalContract, 'quality_bar' | 'pass_rate' | 'confidence' | 'min_samples'>,
  judgeError: number,
  gradeError: number | null = judgeError,
): RelativePolicy {
  return {
    qualityBar: contract.quality_bar ?? 1,
    confidence: contract.confidence,
    minSamples: contract.min_samples,
    passRate: contract.pass_rate,
    judgeError,
    gradeError: gradeError ?? 0,
    agreementGradesSampled: gradeError !== null,
  };
}
