/**
 * The router worker: off the hot path, it turns a sample of production calls
 * into evidence and the evidence into routes (sample-processor.ts says how
 * one sample is processed, route-changes.ts how a route changes).
 *
 * On the hot path it only counts and draws: `offer` sees every successful
 * production call, counts it for the route's traffic, counts a routed call
 * as unchecked until a check of the serving model succeeds (and falls the
 * route back once too many went unchecked: never unmonitored), and samples
 * it for monitoring (the shadow rate) and for exploration (the rate of the
 * route's exploration plan, exploration.ts). Samples wait in a bounded queue
 * for a pool of workers; when it is full, new ones are dropped and counted
 * per workload.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { ModelPool } from '../engines/engine-pool.js';
import { errorFields, type Logger } from '../log/logger.js';
import type { Scope } from '../api/scope.js';
import type { RouterStateRecord, RoutingStore } from '../store/routing-store.js';
import { createReplayGate, type ReplayGate } from './replay-gate.js';
import { decideAgain, fallBack } from './route-changes.js';
import {
  explorationRate,
  routeKey,
  routeState,
  remember,
  DEFAULT_ROUTER_SETTINGS,
  type RouteState,
  type RouterContext,
  type RouterSettings,
} from './router-context.js';
import { scopeKey, type RouteTable } from './route-table.js';
import type { RouterWorkloadCounters } from '../tracking/metrics.js';
import type { QueuedSample, ReplaySample } from './replay-sample.js';
import { processSample } from './sample-processor.js';
import type { Handoff } from './sample-handoff.js';
import { createDisabledTelemetry } from '../telemetry/disabled-telemetry.js';
import type { CallOrigin, Telemetry } from '../telemetry/telemetry.js';
import { decodeRouteState, encodeRouteState, restoreRouteState } from './router-state-record.js';
import { createTrafficMeter } from './traffic-meter.js';
import { activityOf, type RouteActivity } from './route-activity.js';
import { catalogPrices, costAt, type PriceOf } from './model-prices.js';

export type { ReplaySample } from './replay-sample.js';

export { boundedReplay } from './replays.js';
export { fallbacksOf } from './route-changes.js';

export type { RouteActivity } from './route-activity.js';

export interface RouterWorker {
  /**
   * On the hot path, after a successful call: counts and samples it; never
   * waits. `origin` gives the call's request id and span for a sample it
   * keeps (asked only then: the span's ids are made into hex for it).
   */
  offer(sample: ReplaySample, origin?: () => CallOrigin): void;
  /** Whether this process leads the fleet's router (`fleet-router.ts`); a worker alone always does. */
  isLeader(): boolean;
  /** A routed reply failed the inline guard: one failed evaluation for the model that gave it. */
  countGuardFailure(scope: Scope, requestedModel: string, servedModel: string): void;
  /** After a contract edit that kept the evidence: decide every route of the workload again. */
  decideAgain(scope: Scope, detail: string): Promise<void>;
  activity(scope: Scope, requestedModel: string): RouteActivity;
  /** Resolves once the queue is empty and nothing is being processed. */
  idle(): Promise<void>;
  stats(): { queued: number; dropped: number; processed: number; workloads: RouterWorkloadCounters[] };
  /** Replays running and waiting per engine. */
  replayLoad(): ReturnType<ReplayGate['load']>;
  close(): Promise<void>;
}

/** What the fleet router (`fleet-router.ts`) needs of the worker that does the leader's work. */
export interface LeaderWorker extends RouterWorker {
  /** A sample a follower chose and handed over: queued as is (dropped and counted when the queue is full). */
  enqueue(sample: QueuedSample): void;
  /** A follower's count of the calls it served on a route. */
  applyTally(tally: Extract<Handoff, { type: 'tally' }>): void;
  /** Takes over routes' state as the last leader left it. */
  restore(records: readonly RouterStateRecord[]): void;
  /** The state of every route changed since the last call, to write to the store. */
  takeChangedStates(): RouterStateRecord[];
}

export interface RouterWorkerOptions {
  routing: RoutingStore;
  routes: RouteTable;
  catalog: Catalog;
  pools: ReadonlyMap<string, ModelPool>;
  logger: Logger;
  /** Replay slots per engine id (default 1 for an engine not named). */
  replayConcurrency?: ReadonlyMap<string, number>;
  maxQueue?: number;
  /**
   * True when production calls are waiting for this model (an engine with a
   * queue of its own, such as the CPU engine). Replays on it are then skipped:
   * evidence can wait, callers should not.
   */
  isBusy?: (modelId: string) => boolean;
  settings?: Partial<RouterSettings>;
  /** The price candidates are ranked by (`routing.cost`); default their catalog price. */
  priceOf?: PriceOf;
  /** Spans of replays and judge calls (default: none). */
  telemetry?: Telemetry;
  random?: () => number;
  now?: () => number;
}

export function createRouterWorker(options: RouterWorkerOptions): LeaderWorker {
  const closing = new AbortController();
  const settings = { ...DEFAULT_ROUTER_SETTINGS, ...options.settings };
  const context: RouterContext = {
    routing: options.routing,
    routes: options.routes,
    catalog: options.catalog,
    pools: options.pools,
    logger: options.logger,
    gate: createReplayGate(options.replayConcurrency ?? new Map()),
    telemetry: options.telemetry ?? createDisabledTelemetry(),
    traffic: createTrafficMeter(),
    settings,
    priceOf: options.priceOf ?? catalogPrices,
    isBusy: options.isBusy ?? (() => false),
    random: options.random ?? Math.random,
    now: options.now ?? Date.now,
    signal: closing.signal,
    states: new Map(),
    backoffs: new Map(),
    poolFits: new Map(),
  };
  const maxQueue = options.maxQueue ?? 256;
  const queue: QueuedSample[] = [];
  const running = new Set<Promise<void>>();
  let dropped = 0;
  let processed = 0;
  /** Routes whose state changed since `takeChangedStates`. */
  const changed = new Set<RouteState>();

  function offer(sample: ReplaySample, origin?: () => CallOrigin): void {
    if (sample.environment !== 'production' || closing.signal.aborted) return;
    const requested = context.catalog.resolve(sample.requestedModel);
    if (requested === undefined) return;
    // One key for both maps: it is built and hashed on every call.
    const key = routeKey(sample.scope, requested.id);
    const state = routeState(context, sample.scope, requested.id, key);
    context.traffic.observe(key, context.now());
    const routed = sample.servedModel !== requested.id;
    if (routed) {
      const served = context.catalog.resolve(sample.servedModel);
      if (served !== undefined)
        state.savedUsd += costAt(context.priceOf, requested, sample.usage) - costAt(context.priceOf, served, sample.usage);
      state.uncheckedCalls += 1;
      remember(state.servedLatencies, sample.latencyMs, settings.latencyWindow);
      remember(state.servedTtfts, sample.ttftMs, settings.latencyWindow);
      if (state.uncheckedCalls > settings.maxUnmonitoredCalls && !state.changing) void fallBack(context, state, requested);
    }
    changed.add(state);
    const { contract } = context.routes.contract(sample.scope);
    const monitor = routed && context.random() < settings.shadowRate;
    const explore = context.random() < explorationRate(state, contract.sample_rate, context.now(), settings);
    if (monitor || explore) enqueue({ ...sample, origin: sample.origin ?? origin?.(), monitor, explore });
  }

  function enqueue(sample: QueuedSample): void {
    if (closing.signal.aborted) return;
    if (queue.length >= maxQueue) {
      const state = routeState(context, sample.scope, sample.requestedModel);
      dropped += 1;
      state.dropped += 1;
      if (sample.monitor) state.monitoringProblem = 'samples are being dropped: the router cannot keep up';
      return;
    }
    queue.push(sample);
    pump();
  }

  function applyTally(tally: Extract<Handoff, { type: 'tally' }>): void {
    const requested = context.catalog.resolve(tally.requestedModel);
    if (requested === undefined || closing.signal.aborted) return;
    const state = routeState(context, tally.scope, requested.id);
    context.traffic.observe(routeKey(tally.scope, requested.id), tally.at, tally.calls);
    state.uncheckedCalls += tally.routedCalls;
    for (const latency of tally.latencies) remember(state.servedLatencies, latency, settings.latencyWindow);
    for (const ttft of tally.ttfts) remember(state.servedTtfts, ttft, settings.latencyWindow);
    changed.add(state);
    if (state.uncheckedCalls > settings.maxUnmonitoredCalls && !state.changing) void fallBack(context, state, requested);
  }

  // A store that refuses writes fails every sample: one line per 10 s says so, with the count.
  let unloggedFailures = 0;
  let lastFailureLogAt = Number.NEGATIVE_INFINITY;
  function sampleFailed(sample: QueuedSample, error: unknown): void {
    unloggedFailures += 1;
    const now = Date.now();
    if (now - lastFailureLogAt < 10_000) return;
    lastFailureLogAt = now;
    context.logger.warn('router sample failed', {
      workload: sample.scope.workload,
      failed_samples: unloggedFailures,
      ...errorFields(error),
    });
    unloggedFailures = 0;
  }

  /** Starts workers up to the pool's size while samples wait. */
  function pump(): void {
    while (running.size < settings.workers && queue.length > 0 && !closing.signal.aborted) {
      const sample = queue.shift() as QueuedSample;
      const work = processSample(context, sample)
        .catch((error: unknown) => sampleFailed(sample, error))
        .finally(() => {
          processed += 1;
          changed.add(routeState(context, sample.scope, sample.requestedModel));
          running.delete(work);
          pump();
        });
      running.add(work);
    }
  }

  return {
    offer,
    isLeader: () => true,
    enqueue,
    applyTally,
    restore(records) {
      for (const record of records) {
        const decoded = decodeRouteState(record.state);
        if (decoded !== null) restoreRouteState(routeState(context, record.scope, record.requestedModel), decoded);
      }
    },
    takeChangedStates() {
      const now = context.now();
      const records = [...changed].map((state) => ({
        scope: state.scope,
        requestedModel: state.requestedModel,
        state: encodeRouteState(state, context.traffic.callsPerDay(routeKey(state.scope, state.requestedModel), now)),
        updatedAt: now,
      }));
      changed.clear();
      return records;
    },
    countGuardFailure(scope, requestedModel, servedModel) {
      const { evidenceVersion } = context.routes.contract(scope);
      const failed = { evaluated: 1, passed: 0, errors: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMsTotal: 0 };
      context.routing
        .addEvidence(scope, requestedModel, servedModel, evidenceVersion, failed, context.now())
        .catch((error: unknown) => context.logger.warn('guard failure not recorded', errorFields(error)));
    },
    decideAgain: (scope, detail) => decideAgain(context, scope, detail),
    activity(scope, requestedModel) {
      return activityOf(
        routeState(context, scope, requestedModel),
        context.traffic.callsPerDay(routeKey(scope, requestedModel), context.now()),
      );
    },
    async idle() {
      while (running.size > 0 || queue.length > 0) await Promise.all(running);
    },
    stats() {
      const byWorkload = new Map<string, RouterWorkloadCounters>();
      for (const state of context.states.values()) {
        const key = scopeKey(state.scope);
        const entry = byWorkload.get(key) ?? { ...state.scope, droppedSamples: 0, evalSpendUsd: 0, savedUsd: 0 };
        entry.droppedSamples += state.dropped;
        entry.evalSpendUsd += state.evalSpendUsd;
        entry.savedUsd += state.savedUsd;
        byWorkload.set(key, entry);
      }
      return { queued: queue.length, dropped, processed, workloads: [...byWorkload.values()] };
    },
    replayLoad: () => context.gate.load(),
    async close() {
      closing.abort();
      queue.length = 0;
      await Promise.all(running);
    },
  };
}
