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
 * replay slots (replay-gate.ts).
 */
import type { AssistantMessage, ChatMessage, GenerationParameters, Usage } from '../api/chat-types.js';
import type { CatalogModel } from '../catalog/catalog.js';
import { NoReplicaForReplayError } from '../engines/engine-pool.js';
import type { EvalContract } from '../evals/eval-contract.js';
import { chooseJudge, evaluateContract, JUDGE_MAX_TOKENS } from '../evals/index.js';
import { errorFields } from '../log/logger.js';
import type { Environment } from '../store/store.js';
import type { Scope } from '../store/routing-store.js';
import { callShapeOf, costPerCall, NO_CALL_SHAPE } from './candidates.js';
import { cusumOptionsFor, initialCusum, updateCusum } from './cusum.js';
import { planExploration, waitsForTraffic } from './exploration.js';
import { latencyLimitMs, latencyPolicyOf, percentileOf } from './latency-limit.js';
import { costAt } from './model-prices.js';
import { applyDecision, change, decide, demote, sketchesOf } from './route-changes.js';
import { DEFAULT_ROUTING } from './route-decision.js';
import { dayOf, routeKey, routeState, type RouteState, type RouterContext } from './router-context.js';
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

type Replayed =
  | { kind: 'reply'; message: AssistantMessage; usage: Usage | null; costUsd: number; latencyMs: number; ttftMs: number | null }
  /** The engine failed or timed out: counted apart from quality. */
  | { kind: 'error'; reason: string }
  /** Not tried: no healthy replica, production calls waiting, or the model resting after errors. `unavailable`: no replica could take it now (no engine, model file missing, circuits open). */
  | { kind: 'skipped'; reason: string; unavailable?: boolean };

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

  const routed = sample.servedModel !== requested.id;
  const wanted = (sample.monitor && monitorBudgetLeft() > 0) || (sample.explore && exploreBudgetLeft() > 0);
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
  const scoring = { context, state, contract, parameters: sample.parameters, requested, spend };

  // An exploration sample paid for a reference reply: the serving model is checked on it too.
  if (routed && (sample.monitor || reference !== null)) {
    const served = context.catalog.resolve(sample.servedModel);
    if (monitorBudgetLeft() <= 0) state.monitoringProblem = `the day's eval budget of $${contract.daily_budget_usd} is spent`;
    else if (served !== undefined && reference !== null) {
      const passed = await score(scoring, reference, sample.reply, served);
      if (passed === 'judge_down') state.monitoringProblem = 'the judge could not be reached';
      else if (passed !== null) {
        state.uncheckedCalls = 0;
        state.monitoringProblem = null;
        await record(served.id, { ...none, evaluated: 1, passed: passed ? 1 : 0, latencyMs: sample.latencyMs, ttftMs: sample.ttftMs, latencyMsTotal: sample.latencyMs });
        if (await watch(context, state, requested, served.id, passed, contract)) return;
      }
    }
  }

  // Without a reference a candidate's reply cannot be scored: no replays to waste.
  if (sample.explore && exploreBudgetLeft() > 0 && reference !== null) {
    const plan = await replan(context, state, requested, contract, exploreBudgetLeft());
    if (plan.candidates.length > 0) context.traffic.observeSample(routeKey(scope, requested.id), context.now());
    for (const modelId of plan.candidates) {
      if (exploreBudgetLeft() <= 0) break;
      const candidate = context.catalog.resolve(modelId);
      if (candidate === undefined) continue;
      const replayed = await replay(context, candidate, boundedReplay(sample.parameters, sample.usage.completion_tokens), sample.stream, sample);
      if (replayed.kind === 'error') await record(candidate.id, { ...none, errors: 1 });
      // Out of the plan until its rest is over: its samples would pay a reference for replays that never run.
      if (replayed.kind === 'skipped' && replayed.unavailable === true) restModel(context, candidate.id, context.backoffs.get(candidate.id));
      if (replayed.kind !== 'reply') continue;
      await spend(replayed.costUsd);
      const passed = await score(scoring, reference, replayed.message, candidate);
      // The judge is down: nothing more can be scored in this sample (the candidate's replay stays unscored).
      if (passed === 'judge_down') break;
      const usage = replayed.usage;
      await record(candidate.id, {
        evaluated: passed === null ? 0 : 1,
        passed: passed === true ? 1 : 0,
        errors: 0,
        promptTokens: usage?.prompt_tokens ?? 0,
        completionTokens: usage?.completion_tokens ?? 0,
        costUsd: replayed.costUsd,
        latencyMsTotal: replayed.latencyMs,
        latencyMs: replayed.latencyMs,
        ttftMs: replayed.ttftMs,
      });
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
  });
  state.plan = plan;
  // Made again on a call 5 s later (explorationRate), not kept for planTtlMs: a new route's first calls decide nothing.
  state.planAt = waitsForTraffic(plan, { ageMs: traffic.ageMs }) ? 0 : now;
  return plan;
}

/** The rollback detector and the latency watch of the serving model; true when it was demoted. */
async function watch(context: RouterContext, state: RouteState, requested: CatalogModel, servedModel: string, passed: boolean, contract: EvalContract): Promise<boolean> {
  const options = cusumOptionsFor(contract.pass_rate);
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
  const { evidenceVersion } = context.routes.contract(state.scope);
  const rows = await context.routing.listEvidence(state.scope, requested.id, evidenceVersion);
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

interface Scoring {
  context: RouterContext;
  state: RouteState;
  contract: EvalContract;
  parameters: GenerationParameters;
  requested: CatalogModel;
  spend: (costUsd: number) => Promise<void>;
}

/**
 * true/false; null when no check of the contract applies; 'judge_down' when a
 * judge was needed and its engine failed (no verdict either way: the sample
 * is not counted, as an engine error of a candidate is not). A judge that
 * answered without a verdict, or no judge at all, fails the reply: counting
 * only the replies that pass by rule would certify anything.
 */
async function score(scoring: Scoring, reference: AssistantMessage, candidate: AssistantMessage, candidateModel: CatalogModel): Promise<boolean | null | 'judge_down'> {
  const { context, state, contract } = scoring;
  let judgeSpend = 0;
  let judgeNeeded = false;
  let judgeDown = false;
  const result = await evaluateContract(
    contract,
    { request: scoring.parameters, reference, candidate },
    {
      signal: context.signal,
      judgeModel: (checkIndex) => {
        judgeNeeded = true;
        const check = contract.checks[checkIndex];
        const preferred = check?.type === 'judge' ? check.model : check?.type === 'agreement' ? check.judge_model : undefined;
        const shape = state.shape ?? NO_CALL_SHAPE;
        const available = context.catalog.list().filter((model) => context.pools.has(model.id)).map((model) => ({ id: model.id, family: model.family, costPerCall: costPerCall(model, shape) }));
        const choice = chooseJudge(candidateModel.family, available, preferred);
        if (choice !== null) {
          state.judges.set(choice.model, { sameFamily: choice.sameFamily || state.judges.get(choice.model)?.sameFamily === true });
          state.lastJudge = choice.model;
        }
        return choice?.model ?? null;
      },
      judge: async (modelId, messages: ChatMessage[]) => {
        const judge = context.catalog.resolve(modelId);
        if (judge === undefined) throw new Error(`no judge model '${modelId}'`);
        const replayed = await replay(context, judge, { messages, temperature: 0, max_tokens: JUDGE_MAX_TOKENS }, false, { scope: scoring.state.scope });
        if (replayed.kind !== 'reply') {
          judgeDown = true;
          throw new Error(replayed.reason);
        }
        judgeSpend += replayed.costUsd;
        await scoring.spend(replayed.costUsd);
        return typeof replayed.message.content === 'string' ? replayed.message.content : '';
      },
    },
  );
  if (judgeNeeded && !judgeDown) {
    state.judgedSamples += 1;
    state.judgeCostPerEval = state.judgeCostPerEval === 0 ? judgeSpend : 0.9 * state.judgeCostPerEval + 0.1 * judgeSpend;
  }
  if (result.passed !== null) return result.passed;
  if (judgeDown) return 'judge_down';
  return judgeNeeded ? false : null;
}

/**
 * A judge's own error on this workload: now and then, the reference is
 * replayed and judged against its own production reply. Both are the
 * reference, so a judge that fails one of them is wrong; the rate shows in
 * the routes view, next to the pass rates it vouches for.
 */
async function selfCheckJudge(scoring: Scoring, sample: ReplaySample, reference: AssistantMessage): Promise<void> {
  const { context, state, requested } = scoring;
  const judge = state.lastJudge;
  if (judge === null || state.judgedSamples < state.nextSelfCheckAt) return;
  state.nextSelfCheckAt = state.judgedSamples + context.settings.judgeSelfCheckEvery;
  const second = await replay(context, requested, boundedReplay(sample.parameters, sample.usage.completion_tokens), false, sample);
  if (second.kind !== 'reply') return;
  await scoring.spend(second.costUsd);
  const selfCheck: EvalContract = { ...scoring.contract, checks: [{ type: 'agreement', method: 'judge', judge_model: judge }] };
  const judged = { ...scoring, state: { ...state, judges: new Map(state.judges) } };
  const passed = await score({ ...judged, contract: selfCheck }, reference, second.message, requested);
  if (typeof passed === 'boolean') await context.routing.addJudgeCheck(sample.scope, judge, !passed);
}

/** One replay through the pool's replay path and the engine's replay slots; `of` names the workload and, for a sample's replays, the call replayed (its span's root links to it). */
export async function replay(context: RouterContext, model: CatalogModel, parameters: GenerationParameters, stream: boolean, of: Pick<ReplaySample, 'scope' | 'origin'>): Promise<Replayed> {
  const pool = context.pools.get(model.id);
  if (pool === undefined) return { kind: 'skipped', reason: 'no engine serves it', unavailable: true };
  const rest = context.backoffs.get(model.id);
  const now = context.now();
  if (rest !== undefined && rest.until > now) return { kind: 'skipped', reason: `resting after ${rest.failures} failed or skipped replays` };
  if (context.isBusy(model.id)) return { kind: 'skipped', reason: 'production calls are waiting for it' };
  try {
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(context.settings.replayTimeoutMs)]);
    const span = context.telemetry.startReplay(model.id, of.origin, of.scope);
    const result = await pool.replay(parameters, signal, { stream, gate: context.gate.acquire }).catch((error: unknown) => {
      span.end({ replica: null, error });
      throw error;
    });
    span.end({ replica: result.replica, usage: result.completion.usage, finishReason: result.completion.choices[0]?.finish_reason ?? null });
    context.backoffs.delete(model.id);
    const message = result.completion.choices[0]?.message;
    if (message === undefined) return { kind: 'error', reason: 'the reply has no choice' };
    const usage = result.completion.usage;
    return { kind: 'reply', message, usage, costUsd: usage === null ? 0 : costAt(context.priceOf, model, usage), latencyMs: result.latencyMs, ttftMs: result.ttftMs };
  } catch (error) {
    if (error instanceof NoReplicaForReplayError) return { kind: 'skipped', reason: error.message, unavailable: true };
    if (context.signal.aborted) return { kind: 'skipped', reason: 'the router is closing' };
    const failures = restModel(context, model.id, rest);
    context.logger.debug('replay failed', { model: model.id, failures, ...errorFields(error) });
    return { kind: 'error', reason: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The model rests (5 s, doubling to a minute) before its next replay: after
 * an error, or when a candidate's replay found no replica. Either way it is
 * tried again within a minute of its engine's recovery. `previous` is the
 * rest the replay started from: replays that fail together count once.
 * Returns the count.
 */
function restModel(context: RouterContext, modelId: string, previous: { failures: number } | undefined): number {
  const failures = (previous?.failures ?? 0) + 1;
  const wait = Math.min(context.settings.maxBackoffMs, context.settings.backoffMs * 2 ** (failures - 1));
  context.backoffs.set(modelId, { failures, until: context.now() + wait });
  return failures;
}

/**
 * A replay may not run far past the reply it is compared with: a candidate
 * still writing at several times the reference's length has failed anyway,
 * and an unbounded replay would hold an engine slot for as long as the
 * context allows.
 */
export function boundedReplay(parameters: GenerationParameters, referenceTokens: number): GenerationParameters {
  const limit = Math.max(64, 4 * referenceTokens);
  return { ...parameters, max_tokens: Math.min(parameters.max_tokens ?? limit, limit) };
}

/** The route row exists from the first sample on, so the API lists what is being tested. */
async function ensureRoute(context: RouterContext, scope: Scope, requestedModel: string): Promise<void> {
  if (context.routes.route(scope, requestedModel) !== undefined) return;
  const route = { scope, requestedModel, servedModel: requestedModel, pinnedModel: null, certificate: null, cooldowns: {}, fallbacks: [], updatedAt: context.now() };
  // Only if absent: another process may have written this route (a pin) since this table last read.
  context.routes.apply(await context.routing.createRoute(route));
}
