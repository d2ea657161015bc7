/**
 * Whether the model serving a route (or a share of it) still may, after
 * each check of one of its replies: the rollback detector (cusum.ts) on the
 * checks' outcomes, held to the pass rate the model was certified at, and
 * its recent production latencies held to the contract's latency limit
 * (latency-limit.ts). Either one demotes it (route-changes.ts `demote`).
 */
import type { CatalogModel } from '../catalog/catalog.js';
import { qualitySemantics, type EvalContract } from '../evals/eval-contract.js';
import type { CandidateCounts } from '../store/routing-store.js';
import { newSketch } from '../store/latency-sketch.js';
import { cusumOptionsFor, initialCusum, updateCusum } from './cusum.js';
import { sketchesOf } from './decide-from-evidence.js';
import { latencyLimitMs, latencyPolicyOf, percentileOf } from './latency-limit.js';
import { demote } from './route-changes.js';
import type { RouteState, RouterContext } from './router-context.js';

/** The rollback detector and the latency watch of the serving model, after a check that `passed` or not; true when it was demoted. */
export async function watchServingModel(
  context: RouterContext,
  state: RouteState,
  requested: CatalogModel,
  servedModel: string,
  passed: boolean,
  contract: EvalContract,
): Promise<boolean> {
  const { evidenceVersion } = context.routes.contract(state.scope);
  const rows = await context.routing.listEvidence(state.scope, requested.id, evidenceVersion);
  const pooled = context.routes.route(state.scope, requested.id)?.split?.shares.find((entry) => entry.model === servedModel)?.pooled;
  const options = cusumOptionsFor(
    healthyRateOf(
      contract,
      rows.find((row) => row.candidateModel === servedModel),
      pooled?.notLossRate,
    ),
  );
  if (state.detectorModel !== servedModel) {
    // Back after going unchecked: its evidence predates the gap, so its detector starts halfway to the alarm.
    const onProbation = state.probation.delete(servedModel);
    state.detector = onProbation ? { statistic: options.threshold / 2, observed: 0 } : initialCusum();
    state.detectorModel = servedModel;
  }
  const { state: detector, alarm } = updateCusum(state.detector ?? initialCusum(), passed, options);
  state.detector = detector;
  if (alarm) {
    await demote(
      context,
      state,
      requested,
      servedModel,
      'demoted',
      `the pass rate of ${servedModel} dropped: rollback alarm after ${detector.observed} shadow comparisons`,
    );
    return true;
  }
  const policy = latencyPolicyOf(contract);
  const limit = latencyLimitMs(policy, sketchesOf(rows.find((row) => row.candidateModel === requested.id)).latency);
  const recent = newSketch();
  for (const latency of state.servedLatencies) recent.accept(latency);
  const observed = percentileOf(recent, policy.percentile, Math.max(policy.minObservations, 50));
  if (typeof limit === 'number' && observed !== null && observed > limit) {
    await demote(
      context,
      state,
      requested,
      servedModel,
      'too_slow',
      `p${policy.percentile} latency of ${servedModel} rose to ${Math.round(observed)} ms over its last ${state.servedLatencies.length} calls, past the limit of ${Math.round(limit)} ms`,
    );
    return true;
  }
  return false;
}

/**
 * The pass rate the rollback detector holds a serving model to: the
 * contract's under the absolute semantics; under a relative contract the
 * share of its paired samples that were not losses, as certified (a model
 * that loses one call in five to the requested model may serve a share if
 * it wins others; it is demoted when it starts to lose more).
 */
function healthyRateOf(contract: EvalContract, counts: CandidateCounts | undefined, pooledRate: number | undefined): number {
  if (qualitySemantics(contract) !== 'relative') return contract.pass_rate;
  const evaluated = counts?.evaluated ?? 0;
  // A share on the project's prior, before the workload's own evidence can tell its rate: the pool's.
  const rate =
    pooledRate !== undefined && evaluated < contract.min_samples
      ? pooledRate
      : counts === undefined || evaluated === 0
        ? null
        : counts.passed / evaluated;
  return rate === null ? contract.pass_rate : Math.min(0.99, Math.max(0.5, rate));
}
