/**
 * One sampled production call, processed off the hot path:
 *
 *   1. The reference reply: the call's own when the requested model served
 *      it, else a replay on the requested model.
 *   2. Monitoring (a shadow-sampled call of a cheaper serving model): its
 *      reply is scored against the reference and feeds the rollback detector
 *      (cusum.ts) and its evidence, with the call's real latency; its recent
 *      production latencies are held to the contract's limit. Checks of the
 *      serving model come first, and may spend the whole daily budget.
 *   3. Exploration (an exploration sample): replays on the candidates the
 *      exploration plan says are worth their tests, scored and counted, up to
 *      the part of the budget exploring may spend. An engine error is not a
 *      verdict: it is counted apart and the model rests (5 s, doubling to a
 *      minute) before it is tried again, so it is re-tested within a minute of
 *      its engine's recovery. A candidate whose replay found no replica (its
 *      model file missing, its circuits open) rests the same way, and the
 *      plan leaves it out (its rate, its cost) while it rests.
 *   4. The route is decided again on the new evidence, and the plan remade.
 *
 * Every replay and judge call goes through the pool's replay path (healthy
 * replicas only, never counted against their circuits) and the engine's
 * replay slots (replays.ts, replay-gate.ts); how replies are scored is in
 * sample-scoring.ts.
 */
import type { AssistantMessage, GenerationParameters, Usage } from '../api/chat-types.js';
import type { CatalogModel } from '../catalog/catalog.js';
import { qualitySemantics, type EvalContract } from '../evals/eval-contract.js';
import type { Environment } from '../store/store.js';
import type { CandidateCounts, Scope } from '../store/routing-store.js';
import { callShapeOf, costPerCall, NO_CALL_SHAPE } from './candidates.js';
import { cusumOptionsFor, initialCusum, updateCusum } from './cusum.js';
import { planExploration, waitsForTraffic } from './exploration.js';
import { latencyLimitMs, latencyPolicyOf, percentileOf } from './latency-limit.js';
import { boundedReplay, replay, restModel } from './replays.js';
import { applyDecision, change, decide, demote, isSplitDecision, sketchesOf } from './route-changes.js';
import { DEFAULT_ROUTING } from './route-decision.js';
import { dayOf, routeKey, routeState, type RouteState, type RouterContext } from './router-context.js';
import { ASSUMED_JUDGE_ERROR, relativePolicyOf } from './judge-error.js';
import type { PairedSample } from './paired-quality.js';
import { learnPolicy } from './route-policies.js';
import { score, scorePaired, selfCheckJudge, toScored, type Scored, type Scoring } from './sample-scoring.js';
import { newSketch } from '../tracking/latency-sketch.js';
import type { CallOrigin } from '../telemetry/telemetry.js';

export interface ReplaySample {
  scope: Scope;
  environment: Environment;
  /** Canonical ids. */
  requestedModel: string;
  servedModel: string;
  parameters: GenerationParameters;
  reply: AssistantMessage;
  usage: Usage;
  /** The production call's latency and, when streamed, time to first token. */
  latencyMs: number;
  ttftMs: number | null;
  stream: boolean;
  /** The production call's request id and span, which the replays' spans point back to (absent from samples of older processes). */
  origin?: CallOrigin;
}

export interface QueuedSample extends ReplaySample {
  /** Score the serving (cheaper) model's reply against the reference. */
  monitor: boolean;
  /** Replay on the candidates of the exploration plan. */
  explore: boolean;
}

export async function processSample(context: RouterContext, sample: QueuedSample): Promise<void> {
  const requested = context.catalog.resolve(sample.requestedModel);
  if (requested === undefined) return;
  const { scope } = sample;
  const { contract, evidenceVersion } = context.routes.contract(scope);
  const state = routeState(context, scope, requested.id);
  state.shape = callShapeOf(sample.parameters, sample.usage);
  await ensureRoute(context, scope, requested.id);

  const day = dayOf(context.now());
  let spent = await context.routing.getEvalSpend(scope, day);
  const spend = async (costUsd: number) => {
    spent += costUsd;
    state.evalSpendUsd += costUsd;
    if (costUsd > 0) await context.routing.addEvalSpend(scope, day, costUsd, requested.id);
  };
  const monitorBudgetLeft = () => contract.daily_budget_usd - spent;
  const exploreBudgetLeft = () => contract.daily_budget_usd * (1 - context.settings.monitorBudgetShare) - spent;
  const record = (model: string, delta: Parameters<RouterContext['routing']['addEvidence']>[4]) =>
    context.routing.addEvidence(scope, requested.id, model, evidenceVersion, delta, context.now());
  const none = { evaluated: 0, passed: 0, errors: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMsTotal: 0 };

  const relative = qualitySemantics(contract) === 'relative';
  const routed = sample.servedModel !== requested.id;
  const shareEntry = context.routes.route(scope, requested.id)?.split?.shares.find((entry) => entry.model === sample.servedModel);
  // A call drawn into a random share explores nothing: the calls the requested model served are as random a sample, and their reference is free.
  const drawn = shareEntry !== undefined && shareEntry.policy === undefined;
  // A call a per-call policy picked is no random sample: it enters the evidence only when sampled at the exploration rate, as every call is.
  const picked = shareEntry?.policy !== undefined;
  const learning = relative && contract.per_call ? relativePolicyOf(contract, ASSUMED_JUDGE_ERROR) : null;
  const learn = (model: string, delta: Scored['delta']) => {
    if (learning !== null && delta.paired !== undefined) learnPolicy(state.policies, model, evidenceVersion, sample.parameters, pairedSampleOf(delta.paired), learning);
  };
  // Relative contracts: a sample taken to remake a stale plan pays no reference when the new plan has nothing to test.
  const explore = sample.explore && !drawn && (!relative || !routed || sample.monitor || (await replan(context, state, requested, contract, exploreBudgetLeft())).candidates.length > 0);
  const wanted = (sample.monitor && monitorBudgetLeft() > 0) || (explore && exploreBudgetLeft() > 0);
  let reference: AssistantMessage | null = routed ? null : sample.reply;
  if (!routed) {
    // The requested model's own latency on this workload: the yardstick of the candidates'.
    await record(requested.id, { ...none, latencyMs: sample.latencyMs, ttftMs: sample.ttftMs });
  } else if (wanted) {
    const replayed = await replay(context, requested, boundedReplay(sample.parameters, sample.usage.completion_tokens), sample.stream, sample);
    if (replayed.kind === 'reply') {
      await spend(replayed.costUsd);
      reference = replayed.message;
      await record(requested.id, { ...none, latencyMs: replayed.latencyMs, ttftMs: replayed.ttftMs });
    } else {
      state.monitoringProblem = `the requested model could not be replayed for a reference (${replayed.reason})`;
    }
  }
  const scoring: Scoring = { context, state, contract, parameters: sample.parameters, requested, spend };

  // An exploration sample paid for a reference reply: the serving model is checked on it too.
  if (routed && (sample.monitor || reference !== null)) {
    const served = context.catalog.resolve(sample.servedModel);
    if (monitorBudgetLeft() <= 0) state.monitoringProblem = `the day's eval budget of $${contract.daily_budget_usd} is spent`;
    else if (served !== undefined && reference !== null) {
      const scored = relative ? await scorePaired(scoring, reference, sample.reply, served) : toScored(await score(scoring, reference, sample.reply, served));
      if (scored === 'judge_down') state.monitoringProblem = 'the judge could not be reached';
      else if (scored !== null) {
        state.uncheckedCalls = 0;
        state.monitoringProblem = null;
        // A picked call counts when an unpicked one would have: sampled for exploration while the route's plan (remade after every sample) tests its model.
        const counted = !picked || (explore && state.plan?.candidates.includes(served.id) === true);
        await record(served.id, { ...none, ...(counted ? scored.delta : {}), latencyMs: sample.latencyMs, ttftMs: sample.ttftMs, latencyMsTotal: sample.latencyMs });
        if (counted) learn(served.id, scored.delta);
        if (await watch(context, state, requested, served.id, scored.passed, contract)) return;
      }
    }
  }

  // Without a reference a candidate's reply cannot be scored: no replays to waste.
  if (explore && exploreBudgetLeft() > 0 && reference !== null) {
    const plan = await replan(context, state, requested, contract, exploreBudgetLeft());
    if (plan.candidates.length > 0) context.traffic.observeSample(routeKey(scope, requested.id), context.now());
    for (const modelId of plan.candidates) {
      if (exploreBudgetLeft() <= 0) break;
      const candidate = context.catalog.resolve(modelId);
      // The model that served the call was scored on its own reply above.
      if (candidate === undefined || candidate.id === sample.servedModel) continue;
      const replayed = await replay(context, candidate, boundedReplay(sample.parameters, sample.usage.completion_tokens), sample.stream, sample);
      if (replayed.kind === 'error') await record(candidate.id, { ...none, errors: 1 });
      // Out of the plan until its rest is over: its samples would pay a reference for replays that never run.
      if (replayed.kind === 'skipped' && replayed.unavailable === true) restModel(context, candidate.id, context.backoffs.get(candidate.id));
      if (replayed.kind !== 'reply') continue;
      await spend(replayed.costUsd);
      const scored = relative ? await scorePaired(scoring, reference, replayed.message, candidate) : toScored(await score(scoring, reference, replayed.message, candidate));
      // The judge is down: nothing more can be scored in this sample (the candidate's replay stays unscored).
      if (scored === 'judge_down') break;
      const usage = replayed.usage;
      await record(candidate.id, {
        ...none,
        ...scored?.delta,
        promptTokens: usage?.prompt_tokens ?? 0,
        completionTokens: usage?.completion_tokens ?? 0,
        costUsd: replayed.costUsd,
        latencyMsTotal: replayed.latencyMs,
        latencyMs: replayed.latencyMs,
        ttftMs: replayed.ttftMs,
      });
      if (scored !== null) learn(candidate.id, scored.delta);
    }
    if (!routed) await selfCheckJudge(scoring, sample, reference);
  }
  const shape = state.shape;
  await change(context, state, async () => applyDecision(context, scope, requested, await decide(context, scope, requested, shape)));
  await replan(context, state, requested, contract, exploreBudgetLeft());
}

/** The exploration plan of a route, made again from its evidence; kept in its state for the hot path's sampling. */
export async function replan(context: RouterContext, state: RouteState, requested: CatalogModel, contract: EvalContract, budgetLeft: number) {
  const shape = state.shape ?? NO_CALL_SHAPE;
  const decision = await decide(context, state.scope, requested, shape);
  const served = context.catalog.resolve(decision.servedModel) ?? requested;
  const now = context.now();
  const traffic = context.traffic.traffic(routeKey(state.scope, requested.id), now);
  const plan = planExploration({
    policy: { passRate: contract.pass_rate, confidence: contract.confidence, minSamples: contract.min_samples, maxSamples: DEFAULT_ROUTING.maxSamples },
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

/** The rollback detector and the latency watch of the serving model; true when it was demoted. */
async function watch(context: RouterContext, state: RouteState, requested: CatalogModel, servedModel: string, passed: boolean, contract: EvalContract): Promise<boolean> {
  const { evidenceVersion } = context.routes.contract(state.scope);
  const rows = await context.routing.listEvidence(state.scope, requested.id, evidenceVersion);
  const pooled = context.routes.route(state.scope, requested.id)?.split?.shares.find((entry) => entry.model === servedModel)?.pooled;
  const options = cusumOptionsFor(healthyRateOf(contract, rows.find((row) => row.candidateModel === servedModel), pooled?.notLossRate));
  if (state.detectorModel !== servedModel) {
    // Back after going unchecked: its evidence predates the gap, so its detector starts halfway to the alarm.
    const onProbation = state.probation.delete(servedModel);
    state.detector = onProbation ? { statistic: options.threshold / 2, observed: 0 } : initialCusum();
    state.detectorModel = servedModel;
  }
  const { state: detector, alarm } = updateCusum(state.detector ?? initialCusum(), passed, options);
  state.detector = detector;
  if (alarm) {
    await demote(context, state, requested, servedModel, 'demoted', `the pass rate of ${servedModel} dropped: rollback alarm after ${detector.observed} shadow comparisons`);
    return true;
  }
  const policy = latencyPolicyOf(contract);
  const limit = latencyLimitMs(policy, sketchesOf(rows.find((row) => row.candidateModel === requested.id)).latency);
  const recent = newSketch();
  for (const latency of state.servedLatencies) recent.accept(latency);
  const observed = percentileOf(recent, policy.percentile, Math.max(policy.minObservations, 50));
  if (typeof limit === 'number' && observed !== null && observed > limit) {
    await demote(context, state, requested, servedModel, 'too_slow', `p${policy.percentile} latency of ${servedModel} rose to ${Math.round(observed)} ms over its last ${state.servedLatencies.length} calls, past the limit of ${Math.round(limit)} ms`);
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
  const rate = pooledRate !== undefined && evaluated < contract.min_samples ? pooledRate : counts === undefined || evaluated === 0 ? null : counts.passed / evaluated;
  return rate === null ? contract.pass_rate : Math.min(0.99, Math.max(0.5, rate));
}

function pairedSampleOf(paired: NonNullable<Scored['delta']['paired']>): PairedSample {
  return paired.grade === 'ungraded' ? { outcome: paired.outcome } : { outcome: paired.outcome, requestedRight: paired.grade === 'right' };
}

/** The route row exists from the first sample on, so the API lists what is being tested. */
async function ensureRoute(context: RouterContext, scope: Scope, requestedModel: string): Promise<void> {
  if (context.routes.route(scope, requestedModel) !== undefined) return;
  const route = { scope, requestedModel, servedModel: requestedModel, pinnedModel: null, certificate: null, cooldowns: {}, fallbacks: [], split: null, updatedAt: context.now() };
  // Only if absent: another process may have written this route (a pin) since this table last read.
  context.routes.apply(await context.routing.createRoute(route));
}
