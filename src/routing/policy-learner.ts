/**
 * The per-call policies' training hook (contracts with `per_call`,
 * route-policies.ts): a scored reply that enters a candidate's paired
 * evidence also trains that candidate's policies, with the contract's
 * relative policy at the assumed judge error (judge-error.ts). The caller
 * decides which replies enter the evidence (a check of a call a policy
 * picked does not, unless it was sampled for exploration: check-served-reply.ts).
 */
import type { GenerationParameters } from '../api/chat-types.js';
import { qualitySemantics, type EvalContract } from '../evals/eval-contract.js';
import { ASSUMED_JUDGE_ERROR, relativePolicyOf } from './judge-error.js';
import type { PairedSample } from './paired-quality.js';
import { learnPolicy } from './route-policies.js';
import type { RouteState } from './router-context.js';
import type { Scored } from './sample-scoring.js';

/** Trains `model`'s policies on one scored reply of the sample (mutates the route's state); a reply without a paired outcome trains nothing. */
export type PolicyLearner = (model: string, delta: Scored['delta']) => void;

/** The learner of one sample's replies; one that learns nothing unless the contract is relative with `per_call`. */
export function policyLearner(
  state: RouteState,
  contract: EvalContract,
  evidenceVersion: number,
  parameters: GenerationParameters,
): PolicyLearner {
  const learning = qualitySemantics(contract) === 'relative' && contract.per_call ? relativePolicyOf(contract, ASSUMED_JUDGE_ERROR) : null;
  return (model, delta) => {
    if (learning !== null && delta.paired !== undefined)
      learnPolicy(state.policies, model, evidenceVersion, parameters, pairedSampleOf(delta.paired), learning);
  };
}

function pairedSampleOf(paired: NonNullable<Scored['delta']['paired']>): PairedSample {
  return paired.grade === 'ungraded' ? { outcome: paired.outcome } : { outcome: paired.outcome, requestedRight: paired.grade === 'right' };
}
