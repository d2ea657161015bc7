/**
 * Rules the simulation compares taskgate's against, judged on the same
 * evidence and chosen between by the same `routeFromVerdicts`:
 *
 * - naive: look once, after 30 evals, and certify if the observed pass rate
 *   reaches the contract's pass rate, else eliminate. What one writes
 *   without the statistics.
 * - Wilson: a fixed-n Wilson interval (z = 1.96: 95% two-sided; z = 1.645:
 *   a 95% one-sided lower bound) re-checked after every eval, with the same
 *   minSamples and cap as taskgate. Valid at any one n chosen in advance,
 *   not at every n: it shows why the router needs a confidence sequence
 *   (used in the threshold experiment only).
 */
import type { CandidateEvidence, CandidateState, CandidateVerdict, DecisionPolicy } from '../../src/routing/route-decision.js';

export type Judge = (evidence: CandidateEvidence, policy: DecisionPolicy) => CandidateVerdict;

export const NAIVE_SAMPLES = 30;

export const judgeNaively: Judge = (evidence, policy) => {
  const estimate = evidence.evaluated === 0 ? 0 : evidence.passed / evidence.evaluated;
  const state = evidence.evaluated < NAIVE_SAMPLES ? 'testing' : estimate >= policy.passRate ? 'certified' : 'eliminated';
  return verdict(evidence, state, estimate, estimate);
};

export function wilsonJudge(z: number): Judge {
  return (evidence, policy) => {
    const { evaluated: n, passed } = evidence;
    if (n === 0) return verdict(evidence, 'testing', 0, 1);
    const estimate = passed / n;
    const centre = (estimate + (z * z) / (2 * n)) / (1 + (z * z) / n);
    const half = (z / (1 + (z * z) / n)) * Math.sqrt((estimate * (1 - estimate)) / n + (z * z) / (4 * n * n));
    const [lower, upper] = [centre - half, centre + half];
    let state: CandidateState = 'testing';
    if (lower >= policy.passRate && n >= policy.minSamples) state = 'certified';
    else if (upper < policy.passRate || n >= policy.maxSamples) state = 'eliminated';
    return verdict(evidence, state, lower, upper);
  };
}

function verdict(evidence: CandidateEvidence, state: CandidateState, lower: number, upper: number): CandidateVerdict {
  const result: CandidateVerdict = {
    model: evidence.model,
    state,
    lower,
    upper,
    evaluated: evidence.evaluated,
    passed: evidence.passed,
    costPerCall: evidence.costPerCall,
  };
  if (evidence.coolingDown === true) result.coolingDown = true;
  return result;
}
