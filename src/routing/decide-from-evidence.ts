/**
 * How the router reads a route's evidence in the store into a decision: the
 * eligible candidates with their counts, cooldowns and latency verdicts,
 * then under a relative contract a split (split-decision.ts, with the
 * measured judge and grader errors, the project's pooled prior and the
 * per-call policies), else the cheapest certified model (route-decision.ts).
 * Writing the decision down is route-changes.ts's.
 */
import type { CatalogModel } from '../catalog/catalog.js';
import { qualitySemantics } from '../evals/eval-contract.js';
import type { Scope } from '../api/scope.js';
import type { CandidateCounts } from '../store/routing-store.js';
import { decodeSketch } from '../store/latency-sketch.js';
import { costPerCall, eligibleCandidates, type CallShape } from './candidates.js';
import { gradeErrorOf, judgeErrorOf, relativePolicyOf } from './judge-error.js';
import { calibratedJudgeError } from './judge-ladder.js';
import { judgeLatency, latencyPolicyOf, type LatencySketches } from './latency-limit.js';
import { emptyPairedEvidence, MAX_ERROR_RATE, withoutGrades } from './paired-quality.js';
import { randomShareConfidence } from './policy-epochs.js';
import { projectPrior } from './project-prior.js';
import { decideRoute, DEFAULT_ROUTING, type RouteDecision } from './route-decision.js';
import { offeredPolicies, policyPotentials } from './route-policies.js';
import { routeState, type RouterContext } from './router-context.js';
import { decideSplit, type SplitDecision } from './split-decision.js';

/**
 * A route's decision, from the evidence in the store: under a relative
 * contract a split (split-decision.ts), else the cheapest certified model
 * (route-decision.ts). `fresh`: judge every candidate anew (a changed pass
 * rate), not keeping a certificate.
 */
export async function decideFromEvidence(
  context: RouterContext,
  scope: Scope,
  requested: CatalogModel,
  shape: CallShape,
  fresh = false,
): Promise<RouteDecision | SplitDecision> {
  const { contract, evidenceVersion } = context.routes.contract(scope);
  const rows = new Map(
    (await context.routing.listEvidence(scope, requested.id, evidenceVersion)).map((counts) => [counts.candidateModel, counts]),
  );
  const reference = sketchesOf(rows.get(requested.id));
  const latencyPolicy = latencyPolicyOf(contract);
  const route = context.routes.route(scope, requested.id);
  const cooldowns = route?.cooldowns ?? {};
  const holder = !fresh && route?.certificate?.model === route?.servedModel ? route?.servedModel : null;
  const now = context.now();
  const candidates = eligibleCandidates(context.catalog.list(), requested, shape, contract, context.priceOf)
    .filter((model) => context.pools.has(model.id))
    .map((model) => {
      const counts = rows.get(model.id);
      return {
        model: model.id,
        costPerCall: costPerCall(model, shape, context.priceOf),
        evaluated: counts?.evaluated ?? 0,
        passed: counts?.passed ?? 0,
        errors: counts?.errors ?? 0,
        paired: counts?.paired ?? emptyPairedEvidence(),
        constraintsEvaluated: counts?.constraintsEvaluated ?? 0,
        constraintsPassed: counts?.constraintsPassed ?? 0,
        coolingDown: (cooldowns[model.id] ?? 0) > now,
        certified: model.id === holder,
        latency: judgeLatency(latencyPolicy, sketchesOf(counts), reference),
      };
    });
  const requestedCostPerCall = costPerCall(requested, shape, context.priceOf);
  if (qualitySemantics(contract) === 'relative') {
    const state = routeState(context, scope, requested.id);
    const judgeError = Math.min(
      MAX_ERROR_RATE,
      calibratedJudgeError(judgeErrorOf(await context.routing.listJudgeChecks(scope)), state.judgeCalibration),
    );
    const gradeError = gradeErrorOf(judgeError, state.graderChecks);
    const relativeCandidates =
      gradeError === null ? candidates.map((candidate) => ({ ...candidate, paired: withoutGrades(candidate.paired) })) : candidates;
    const certifying = relativePolicyOf(contract, judgeError, gradeError);
    // With per-call policies the random shares are certified at 1 − 0.8α, the policies share the rest (policy-epochs.ts).
    const policy = contract.per_call ? { ...certifying, confidence: randomShareConfidence(certifying.confidence) } : certifying;
    const cheaper = relativeCandidates.filter((candidate) => candidate.costPerCall < requestedCostPerCall);
    const prior = await projectPrior(
      context,
      scope,
      requested.id,
      requestedCostPerCall,
      cheaper,
      policy,
      latencyPolicy,
      gradeError === null,
    );
    const policies = contract.per_call ? offeredPolicies(state.policies, evidenceVersion, certifying, gradeError === null) : [];
    const policyPotentialsOf = contract.per_call
      ? policyPotentials(state.policies, evidenceVersion, certifying, gradeError === null)
      : undefined;
    return decideSplit({
      requestedModel: requested.id,
      requestedCostPerCall,
      candidates: relativeCandidates,
      policy,
      policies,
      ...(policyPotentialsOf === undefined ? {} : { policyPotentials: policyPotentialsOf }),
      ...(prior === undefined ? {} : { prior }),
    });
  }
  return decideRoute({
    requestedModel: requested.id,
    requestedCostPerCall,
    candidates,
    policy: {
      passRate: contract.pass_rate,
      confidence: contract.confidence,
      minSamples: contract.min_samples,
      maxSamples: DEFAULT_ROUTING.maxSamples,
    },
  });
}

/** Whether a decision was made under a relative contract (it carries shares, possibly none). */
export function isSplitDecision(decision: RouteDecision): decision is SplitDecision {
  return 'shares' in decision;
}

/** A model's latency sketches as stored with its counts, decoded (null where none was measured). */
export function sketchesOf(counts: CandidateCounts | undefined): LatencySketches {
  return {
    latency: counts?.latency == null ? null : decodeSketch(counts.latency),
    ttft: counts?.ttft == null ? null : decodeSketch(counts.ttft),
  };
}
