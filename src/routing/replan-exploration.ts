/**
 * A route's exploration plan (exploration.ts), made again from its evidence
 * after each sample and whenever a sample is taken to remake a stale one:
 * what the route's calls cost on the model serving now and on the requested
 * model (the reference a sample pays for when another serves), its traffic
 * and samples today (traffic-meter.ts), the budget exploring may still
 * spend, and which candidates rest after failed or skipped replays. The plan
 * is kept in the route's state, where the hot path reads its rate
 * (router-context.ts `explorationRate`).
 */
import type { CatalogModel } from '../catalog/catalog.js';
import type { EvalContract } from '../evals/eval-contract.js';
import { costPerCall, NO_CALL_SHAPE } from './candidates.js';
import { decideFromEvidence, isSplitDecision } from './decide-from-evidence.js';
import { planExploration, waitsForTraffic, type ExplorationPlan } from './exploration.js';
import { DEFAULT_ROUTING } from './route-decision.js';
import { routeKey, type RouteState, type RouterContext } from './router-context.js';

/** The route's plan, made again from its evidence; kept in its state for the hot path's sampling. `budgetLeft`: what exploring may still spend today, USD. */
export async function replanExploration(
  context: RouterContext,
  state: RouteState,
  requested: CatalogModel,
  contract: EvalContract,
  budgetLeft: number,
): Promise<ExplorationPlan> {
  const shape = state.shape ?? NO_CALL_SHAPE;
  const decision = await decideFromEvidence(context, state.scope, requested, shape);
  const served = context.catalog.resolve(decision.servedModel) ?? requested;
  const now = context.now();
  const traffic = context.traffic.traffic(routeKey(state.scope, requested.id), now);
  const plan = planExploration({
    policy: {
      passRate: contract.pass_rate,
      confidence: contract.confidence,
      minSamples: contract.min_samples,
      maxSamples: DEFAULT_ROUTING.maxSamples,
    },
    decision,
    servedCostPerCall: costPerCall(served, shape, context.priceOf),
    referenceCostPerSample: served.id === requested.id ? 0 : costPerCall(requested, shape, context.priceOf),
    judgeCostPerEval: state.judgeCostPerEval,
    callsPerDay: traffic.callsPerDay,
    callsSeen: traffic.seen,
    horizonDays: context.settings.horizonDays,
    fixedRate: contract.sample_rate === 'auto' ? null : contract.sample_rate,
    budgetLeftToday: Math.max(0, budgetLeft),
    maxSamplesPerDay: context.settings.maxSamplesPerDay,
    samplesToday: traffic.samplesToday,
    unavailable: new Set(decision.toTest.filter((model) => (context.backoffs.get(model)?.until ?? 0) > now)),
    ...(isSplitDecision(decision) ? { possibleShares: decision.possibleShares } : {}),
  });
  state.plan = plan;
  state.verdicts = decision.verdicts;
  // Made again on a call 5 s later (explorationRate), not kept for planTtlMs: a new route's first calls decide nothing.
  state.planAt = waitsForTraffic(plan, { ageMs: traffic.ageMs }) ? 0 : now;
  return plan;
}
