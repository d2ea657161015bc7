/**
 * What the steps of one sample's processing share (sample-processor.ts):
 * the route, its contract and in-memory state, the day's eval spend against
 * the contract's budget, how a reply enters the evidence, and how it trains
 * the per-call policies.
 *
 * The budget is the contract's `daily_budget_usd` per UTC day. Checks of the
 * serving model come first and may spend all of it; exploring stops at the
 * share `monitorBudgetShare` keeps for them.
 */
import type { CatalogModel } from '../catalog/catalog.js';
import { qualitySemantics, type EvalContract } from '../evals/eval-contract.js';
import type { EvidenceDelta } from '../store/routing-store.js';
import { policyLearner, type PolicyLearner } from './policy-learner.js';
import { dayOf, type RouteState, type RouterContext } from './router-context.js';
import type { ReplaySample } from './replay-sample.js';
import type { Scoring } from './sample-scoring.js';

export interface SampleRun {
  context: RouterContext;
  state: RouteState;
  requested: CatalogModel;
  contract: EvalContract;
  evidenceVersion: number;
  /** The contract's semantics is relative (`quality_bar`): replies are compared in pairs with the reference. */
  relative: boolean;
  /** What scoring one of the sample's replies needs (sample-scoring.ts); it pays through `spend`. */
  scoring: Scoring;
  /** Counts eval spend (replays, judges) against the day's budget, in the store and in the route's state. */
  spend(costUsd: number): Promise<void>;
  /** What checks of the serving model may still spend today, USD. */
  monitorBudgetLeft(): number;
  /** What exploring may still spend today, USD. */
  exploreBudgetLeft(): number;
  /** Adds to a model's evidence on this route, under the contract's evidence version. */
  record(model: string, delta: EvidenceDelta): Promise<void>;
  learn: PolicyLearner;
}

/** Evidence that counts nothing: spread under what a reply adds. */
export const NO_EVIDENCE: EvidenceDelta = {
  evaluated: 0,
  passed: 0,
  errors: 0,
  promptTokens: 0,
  completionTokens: 0,
  costUsd: 0,
  latencyMsTotal: 0,
};

/** The run of one sample of `requested`'s route; reads what the route's workload has spent today. */
export async function startSampleRun(
  context: RouterContext,
  state: RouteState,
  requested: CatalogModel,
  contractInForce: { contract: EvalContract; evidenceVersion: number },
  sample: Pick<ReplaySample, 'scope' | 'parameters'>,
): Promise<SampleRun> {
  const { contract, evidenceVersion } = contractInForce;
  const { scope } = sample;
  const day = dayOf(context.now());
  let spent = await context.routing.getEvalSpend(scope, day);
  const spend = async (costUsd: number) => {
    spent += costUsd;
    state.evalSpendUsd += costUsd;
    if (costUsd > 0) await context.routing.addEvalSpend(scope, day, costUsd, requested.id);
  };
  return {
    context,
    state,
    requested,
    contract,
    evidenceVersion,
    relative: qualitySemantics(contract) === 'relative',
    scoring: { context, state, contract, parameters: sample.parameters, requested, spend },
    spend,
    monitorBudgetLeft: () => contract.daily_budget_usd - spent,
    exploreBudgetLeft: () => contract.daily_budget_usd * (1 - context.settings.monitorBudgetShare) - spent,
    record: (model, delta) => context.routing.addEvidence(scope, requested.id, model, evidenceVersion, delta, context.now()),
    learn: policyLearner(state, contract, evidenceVersion, sample.parameters),
  };
}
