/**
 * The router worker: off the hot path, it turns a sample of production calls
 * into evidence and the evidence into routes.
 *
 * For each sampled call (production only, at the contract's `sample_rate`):
 *   1. The reference reply is the call's own reply when the requested model
 *      served it. When a cheaper routed model served it (shadow sample, at the
 *      router's shadow rate), the call is replayed on the requested model for
 *      a reference, the served reply is scored against it, and the score feeds
 *      the served model's evidence and its rollback detector (CUSUM): an alarm
 *      demotes the route at once to the next certified model or the reference,
 *      and the demoted model cools down before it is tested again.
 *   2. The call is replayed, with the same parameters, on the candidates
 *      `decideRoute` still wants evidence on (cheaper than the route,
 *      supporting what the call needs), cheapest first, a few per sample; each
 *      reply is scored with the workload's contract. Engine errors and
 *      timeouts count as failures.
 *   3. `decideRoute` runs on the new counts; a change of route is stored with
 *      its certificate and applied to this process's route table at once.
 *
 * It spends at most the contract's `daily_budget_usd` a day per workload on
 * replays and judges (tracked apart from production spend), runs one replay
 * at a time, never longer than a few times the reference reply, and skips a
 * model while production calls wait for it (replays never crowd out callers).
 * Its own queue is bounded: when full, new samples are dropped and counted.
 */
import type { AssistantMessage, ChatMessage, GenerationParameters, Usage } from '../api/chat-types.js';
import { costOf, type Catalog, type CatalogModel } from '../catalog/catalog.js';
import type { ModelPool } from '../engines/engine-pool.js';
import type { EvalContract } from '../evals/eval-contract.js';
import { evaluateContract, pickJudgeModel } from '../evals/index.js';
import { errorFields, type Logger } from '../log/logger.js';
import type { Environment } from '../store/store.js';
import type { RouteChange, RouteRecord, RoutingStore, Scope } from '../store/routing-store.js';
import { callShapeOf, costPerCall, eligibleCandidates, type CallShape } from './candidates.js';
import { cusumOptionsFor, initialCusum, updateCusum, type CusumState } from './cusum.js';
import { decideRoute, DEFAULT_ROUTING, type RouteDecision } from './route-decision.js';
import { scopeKey, type RouteTable } from './route-table.js';

export interface ReplaySample {
  scope: Scope;
  environment: Environment;
  /** Canonical ids. */
  requestedModel: string;
  servedModel: string;
  parameters: GenerationParameters;
  reply: AssistantMessage;
  usage: Usage;
}

export interface RouterWorker {
  /** On the hot path, after a successful call: decides whether to sample it; never waits. */
  offer(sample: ReplaySample): void;
  /** A routed reply failed the inline guard: one failed evaluation for the model that gave it. */
  countGuardFailure(scope: Scope, requestedModel: string, servedModel: string): void;
  /** Resolves once the queue is empty and nothing is being replayed. */
  idle(): Promise<void>;
  stats(): { queued: number; dropped: number; processed: number };
  close(): Promise<void>;
}

export interface RouterWorkerOptions {
  routing: RoutingStore;
  routes: RouteTable;
  catalog: Catalog;
  pools: ReadonlyMap<string, ModelPool>;
  logger: Logger;
  maxQueue?: number;
  /**
   * True when production calls are waiting for this model (an engine with a
   * queue of its own, such as the CPU engine). Replays on it are then skipped,
   * not queued: evidence can wait, callers should not.
   */
  isBusy?: (modelId: string) => boolean;
  /** Candidates replayed per sample at most (default: all `decideRoute` wants evidence on, within the budget). */
  replaysPerSample?: number;
  replayTimeoutMs?: number;
  /** How long a demoted model waits before it is tested again. */
  cooldownMs?: number;
  random?: () => number;
  now?: () => number;
}

interface Replayed {
  message: AssistantMessage | null;
  usage: Usage | null;
  costUsd: number;
  latencyMs: number;
}

export function createRouterWorker(options: RouterWorkerOptions): RouterWorker {
  const { routing, routes, catalog, pools, logger } = options;
  const maxQueue = options.maxQueue ?? 256;
  const replaysPerSample = options.replaysPerSample ?? Infinity;
  const replayTimeoutMs = options.replayTimeoutMs ?? 120_000;
  const cooldownMs = options.cooldownMs ?? DEFAULT_ROUTING.cooldownMs;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const queue: ReplaySample[] = [];
  const detectors = new Map<string, CusumState>();
  const closing = new AbortController();
  let running: Promise<void> | null = null;
  let dropped = 0;
  let processed = 0;

  function offer(sample: ReplaySample): void {
    if (sample.environment !== 'production' || closing.signal.aborted) return;
    const { contract } = routes.contract(sample.scope);
    const routed = sample.servedModel !== sample.requestedModel;
    const rate = routed ? Math.max(contract.sample_rate, DEFAULT_ROUTING.shadowRate) : contract.sample_rate;
    if (random() >= rate) return;
    if (queue.length >= maxQueue) {
      dropped++;
      return;
    }
    queue.push(sample);
    running ??= drain().finally(() => (running = null));
  }

  async function drain(): Promise<void> {
    for (let sample = queue.shift(); sample !== undefined && !closing.signal.aborted; sample = queue.shift()) {
      try {
        await process(sample);
      } catch (error) {
        logger.warn('router sample failed', { workload: sample.scope.workload, ...errorFields(error) });
      }
      processed++;
    }
  }

  async function process(sample: ReplaySample): Promise<void> {
    const { scope, parameters } = sample;
    const requested = catalog.resolve(sample.requestedModel);
    if (requested === undefined) return;
    const { contract, version } = routes.contract(scope);
    const shape = callShapeOf(parameters, sample.usage);
    if (routes.route(scope, requested.id) === undefined) {
      // The route exists from the first sample on, so the API lists what is being tested.
      const route: RouteRecord = { scope, requestedModel: requested.id, servedModel: requested.id, pinnedModel: null, certificate: null, cooldowns: {}, fallbacks: [], updatedAt: now() };
      await routing.saveRoute(route, null);
      routes.apply(route);
    }
    const day = new Date(now()).toISOString().slice(0, 10);
    let spent = await routing.getEvalSpend(scope, day);
    const spend = async (costUsd: number) => {
      spent += costUsd;
      if (costUsd > 0) await routing.addEvalSpend(scope, day, costUsd);
    };
    const overBudget = () => spent >= contract.daily_budget_usd;

    let reference = sample.reply;
    let referenceTokens = sample.usage.completion_tokens;
    const isBusy = options.isBusy ?? (() => false);
    if (sample.servedModel !== requested.id) {
      if (overBudget() || isBusy(requested.id)) return;
      const replayed = await replay(requested, boundedReplay(parameters, sample.usage.completion_tokens));
      await spend(replayed.costUsd);
      if (replayed.message === null) return;
      reference = replayed.message;
      referenceTokens = replayed.usage?.completion_tokens ?? referenceTokens;
      const served = catalog.resolve(sample.servedModel);
      const passed = served === undefined ? null : await score(contract, parameters, reference, sample.reply, served, spend);
      if (served !== undefined && passed !== null) {
        await record(scope, requested.id, served.id, version, { passed, error: false, usage: sample.usage, costUsd: 0, latencyMs: 0 });
        if (await watchServedModel(sample, requested, served.id, passed, contract, version, shape)) return;
      }
    }

    const before = await decide(scope, requested, shape, contract, version);
    for (const modelId of before.toTest.slice(0, replaysPerSample)) {
      if (overBudget()) break;
      const candidate = catalog.resolve(modelId);
      if (candidate === undefined || isBusy(candidate.id)) continue;
      const replayed = await replay(candidate, boundedReplay(parameters, referenceTokens));
      await spend(replayed.costUsd);
      const passed = replayed.message === null ? false : await score(contract, parameters, reference, replayed.message, candidate, spend);
      if (passed === null) continue;
      await record(scope, requested.id, candidate.id, version, {
        passed,
        error: replayed.message === null,
        usage: replayed.usage,
        costUsd: replayed.costUsd,
        latencyMs: replayed.latencyMs,
      });
    }
    await applyDecision(scope, requested, await decide(scope, requested, shape, contract, version), version);
  }

  async function decide(scope: Scope, requested: CatalogModel, shape: CallShape, contract: EvalContract, version: number): Promise<RouteDecision> {
    const evidence = new Map((await routing.listEvidence(scope, requested.id, version)).map((counts) => [counts.candidateModel, counts]));
    const route = routes.route(scope, requested.id);
    const cooldowns = route?.cooldowns ?? {};
    const holder = route?.certificate?.contractVersion === version ? route.certificate.model : null;
    const candidates = eligibleCandidates(catalog.list(), requested, shape, contract)
      .filter((model) => pools.has(model.id))
      .map((model) => {
        const counts = evidence.get(model.id);
        return {
          model: model.id,
          costPerCall: costPerCall(model, shape),
          evaluated: counts?.evaluated ?? 0,
          passed: counts?.passed ?? 0,
          errors: counts?.errors ?? 0,
          coolingDown: (cooldowns[model.id] ?? 0) > now(),
          certified: model.id === holder && route?.servedModel === holder,
        };
      });
    return decideRoute({
      requestedModel: requested.id,
      requestedCostPerCall: costPerCall(requested, shape),
      candidates,
      policy: { passRate: contract.pass_rate, confidence: contract.confidence, minSamples: contract.min_samples, maxSamples: DEFAULT_ROUTING.maxSamples },
    });
  }

  async function applyDecision(scope: Scope, requested: CatalogModel, decision: RouteDecision, version: number, detail: string | null = null): Promise<void> {
    const current = routes.route(scope, requested.id);
    const from = current?.servedModel ?? requested.id;
    if (decision.servedModel === from) return;
    const at = now();
    const certificate = decision.certificate === null ? null : { ...decision.certificate, contractVersion: version, at };
    const toCost = decision.verdicts.find((verdict) => verdict.model === decision.servedModel)?.costPerCall ?? Infinity;
    const fromCost = decision.verdicts.find((verdict) => verdict.model === from)?.costPerCall ?? Infinity;
    const reason: RouteChange['reason'] = detail !== null || toCost > fromCost ? 'demoted' : 'certified';
    const route: RouteRecord = {
      scope,
      requestedModel: requested.id,
      servedModel: decision.servedModel,
      pinnedModel: current?.pinnedModel ?? null,
      certificate,
      cooldowns: current?.cooldowns ?? {},
      fallbacks: fallbacksOf(decision),
      updatedAt: at,
    };
    await routing.saveRoute(route, { requestedModel: requested.id, fromModel: from, toModel: decision.servedModel, reason, certificate, detail, at });
    routes.apply(route);
    detectors.delete(detectorKey(scope, requested.id, decision.servedModel));
    logger.info('route changed', { project: scope.project, workload: scope.workload, requested: requested.id, from, to: decision.servedModel, reason });
  }

  /** The rollback detector of the served model; true when it demoted the route. */
  async function watchServedModel(
    sample: ReplaySample,
    requested: CatalogModel,
    servedModel: string,
    passed: boolean,
    contract: EvalContract,
    version: number,
    shape: CallShape,
  ): Promise<boolean> {
    const key = detectorKey(sample.scope, requested.id, servedModel);
    const { state, alarm } = updateCusum(detectors.get(key) ?? initialCusum(), passed, cusumOptionsFor(contract.pass_rate));
    detectors.set(key, state);
    if (!alarm) return false;
    const current = routes.route(sample.scope, requested.id);
    if (current === undefined || current.servedModel !== servedModel) return false;
    const cooled: RouteRecord = { ...current, cooldowns: { ...current.cooldowns, [servedModel]: now() + cooldownMs }, updatedAt: now() };
    routes.apply(cooled);
    await routing.resetEvidence(sample.scope, requested.id, servedModel, version);
    const decision = await decide(sample.scope, requested, shape, contract, version);
    await applyDecision(sample.scope, requested, decision, version, `the pass rate of ${servedModel} dropped: rollback alarm after ${state.observed} shadow comparisons`);
    return true;
  }

  async function record(
    scope: Scope,
    requestedModel: string,
    candidateModel: string,
    version: number,
    outcome: { passed: boolean; error: boolean; usage: Usage | null; costUsd: number; latencyMs: number },
  ): Promise<void> {
    await routing.addEvidence(
      scope,
      requestedModel,
      candidateModel,
      version,
      {
        evaluated: 1,
        passed: outcome.passed ? 1 : 0,
        errors: outcome.error ? 1 : 0,
        promptTokens: outcome.usage?.prompt_tokens ?? 0,
        completionTokens: outcome.usage?.completion_tokens ?? 0,
        costUsd: outcome.costUsd,
        latencyMsTotal: outcome.latencyMs,
      },
      now(),
    );
  }

  async function replay(model: CatalogModel, parameters: GenerationParameters): Promise<Replayed> {
    const pool = pools.get(model.id);
    const started = performance.now();
    if (pool === undefined) return { message: null, usage: null, costUsd: 0, latencyMs: 0 };
    try {
      const signal = AbortSignal.any([closing.signal, AbortSignal.timeout(replayTimeoutMs)]);
      const { completion } = await pool.complete(parameters, signal);
      const usage = completion.usage;
      return {
        message: completion.choices[0]?.message ?? null,
        usage,
        costUsd: usage === null ? 0 : costOf(model, usage),
        latencyMs: performance.now() - started,
      };
    } catch (error) {
      logger.debug('replay failed', { model: model.id, ...errorFields(error) });
      return { message: null, usage: null, costUsd: 0, latencyMs: performance.now() - started };
    }
  }

  /** true/false, or null when no check of the contract applied to this reply. */
  async function score(
    contract: EvalContract,
    request: GenerationParameters,
    reference: AssistantMessage,
    candidate: AssistantMessage,
    candidateModel: CatalogModel,
    spend: (costUsd: number) => Promise<void>,
  ): Promise<boolean | null> {
    const result = await evaluateContract(
      contract,
      { request, reference, candidate },
      {
        signal: closing.signal,
        judgeModel: (checkIndex) => {
          const check = contract.checks[checkIndex];
          const preferred = check?.type === 'judge' ? check.model : check?.type === 'agreement' ? check.judge_model : undefined;
          // Only contracts with judge checks get here: the list is built for them alone.
          const judges = catalog.list().filter((model) => pools.has(model.id)).map((model) => ({ id: model.id, family: model.family }));
          return pickJudgeModel(candidateModel.family, judges, preferred);
        },
        judge: async (modelId, messages: ChatMessage[], signal) => {
          const judge = catalog.resolve(modelId);
          const pool = pools.get(modelId);
          if (judge === undefined || pool === undefined) throw new Error(`no judge model '${modelId}'`);
          const { completion } = await pool.complete({ messages, temperature: 0, max_tokens: 256 }, signal);
          if (completion.usage !== null) await spend(costOf(judge, completion.usage));
          const content = completion.choices[0]?.message.content;
          return typeof content === 'string' ? content : '';
        },
      },
    );
    return result.passed;
  }

  return {
    offer,
    countGuardFailure(scope, requestedModel, servedModel) {
      const { version } = routes.contract(scope);
      const failed = { passed: false, error: false, usage: null, costUsd: 0, latencyMs: 0 };
      record(scope, requestedModel, servedModel, version, failed).catch((error: unknown) => logger.warn('guard failure not recorded', errorFields(error)));
    },
    async idle() {
      while (running !== null) await running;
    },
    stats: () => ({ queued: queue.length, dropped, processed }),
    async close() {
      closing.abort();
      queue.length = 0;
      await running;
    },
  };
}

/**
 * A replay may not run far past the reply it is compared with: a candidate
 * still writing at several times the reference's length has failed anyway,
 * and an unbounded replay would hold an engine slot (on the CPU engine, one
 * of a model's few sequences) for as long as the context allows.
 */
export function boundedReplay(parameters: GenerationParameters, referenceTokens: number): GenerationParameters {
  const limit = Math.max(64, 4 * referenceTokens);
  return { ...parameters, max_tokens: Math.min(parameters.max_tokens ?? limit, limit) };
}

/** The certified models dearer than the one a decision serves, cheapest first. */
export function fallbacksOf(decision: RouteDecision): string[] {
  const servedCost = decision.verdicts.find((verdict) => verdict.model === decision.servedModel)?.costPerCall ?? Infinity;
  return decision.verdicts
    .filter((verdict) => verdict.state === 'certified' && verdict.coolingDown !== true && verdict.costPerCall > servedCost)
    .sort((left, right) => left.costPerCall - right.costPerCall)
    .map((verdict) => verdict.model);
}

function detectorKey(scope: Scope, requestedModel: string, servedModel: string): string {
  return `${scopeKey(scope)}\u0000${requestedModel}\u0000${servedModel}`;
}
