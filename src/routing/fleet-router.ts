/**
 * The router of a fleet: every process serves calls, one leads the router
 * (`router-leadership.ts`), and the others hand it their part of the work
 * through the store (`sample-handoff.ts`).
 *
 * The leader runs the router worker as a single process does: it samples its
 * own calls, takes the samples and tallies the followers hand over, replays,
 * judges and changes routes, and writes each changed route's state to the
 * store every `stateFlushMs` (`router-state-record.ts`), so the next leader
 * goes on where it stopped and followers know the sampling rates.
 *
 * A follower samples the calls it serves at the rates the leader wrote (the
 * shadow rate for routed calls, the plan's rate for exploration; with no
 * fresh plan, one call per route now and then so the leader can make one),
 * hands those samples over with their bodies, and tallies every call it
 * served per route. Its routes view shows the leader's state of the route.
 *
 * With one process (SQLite, one `serve`) that process takes the lease at
 * start and leads: the same code path as a fleet, with a queue nobody else
 * writes to.
 */
import type { Catalog } from '../catalog/catalog.js';
import { errorFields, type Logger } from '../log/logger.js';
import type { Scope } from '../api/scope.js';
import type { RouterStateRecord, RoutingStore } from '../store/routing-store.js';
import type { RouterWorkloadCounters } from '../tracking/metrics.js';
import type { RouteTable } from './route-table.js';
import { catalogPrices, costAt, type PriceOf } from './model-prices.js';
import { explorationRate, routeKey, type RouterSettings } from './router-context.js';
import type { Leadership } from './router-leadership.js';
import { decodeRouteState, emptyRouteStateRecord } from './router-state-record.js';
import { activityOf, type RouteActivity } from './route-activity.js';
import type { LeaderWorker, RouterWorker } from './router-worker.js';
import { createHandoffInbox, createHandoffOutbox, type Handoff, type HandoffInbox } from './sample-handoff.js';

export interface FleetRouter extends RouterWorker {
  /** Reads the leader's route states again (the change feed says it wrote some). */
  refreshStates(): void;
  /** Takes the samples followers handed over now (the change feed says there are some). */
  takeSamples(): void;
}

export interface FleetRouterOptions {
  worker: LeaderWorker;
  leadership: Leadership;
  routing: RoutingStore;
  routes: RouteTable;
  catalog: Catalog;
  logger: Logger;
  settings: Pick<RouterSettings, 'shadowRate' | 'planTtlMs'>;
  /** The price savings are counted at (`routing.cost`, as the worker's); the catalog's when absent. */
  priceOf?: PriceOf;
  stateFlushMs?: number;
  statePollMs?: number;
  random?: () => number;
  now?: () => number;
}

interface FollowedRoute {
  record: ReturnType<typeof emptyRouteStateRecord>;
  /** When this follower last sampled a call so the leader could make a plan. */
  planAskedAt: number;
}

export function createFleetRouter(options: FleetRouterOptions): FleetRouter {
  const { worker, leadership, routing, routes, catalog, logger, settings } = options;
  const random = options.random ?? Math.random;
  const priceOf = options.priceOf ?? catalogPrices;
  const now = options.now ?? Date.now;
  const outbox = createHandoffOutbox({ routing, logger, now });
  const followed = new Map<string, FollowedRoute>();
  const followerCounters = new Map<string, RouterWorkloadCounters>();
  let inbox: HandoffInbox | null = null;
  /** The highest revision of the leader's states read (`Revised`): a follower reads the states written after it. */
  let statesRevision = 0;
  let readingStates: Promise<void> | null = null;
  let trimmed = 0;

  function handle(handoff: Handoff): void {
    if (handoff.type === 'sample') worker.enqueue(handoff.sample);
    else if (handoff.type === 'tally') worker.applyTally(handoff);
    else
      void worker
        .decideAgain(handoff.scope, handoff.detail)
        .catch((error: unknown) => logger.warn('router: deciding again failed', errorFields(error)));
  }

  async function lead(): Promise<void> {
    try {
      worker.restore((await routing.listRouterStatesChangedAfter(0)).map((revised) => revised.record));
    } catch (error) {
      logger.warn("router: the last leader's route states could not be read; starting afresh", errorFields(error));
    }
    if (!leadership.isLeader()) return;
    inbox = createHandoffInbox({ routing, logger, handle, onTrimmed: (count) => (trimmed += count) });
  }

  async function follow(): Promise<void> {
    await inbox?.close();
    inbox = null;
    worker.takeChangedStates();
  }

  leadership.onChange((leader) => void (leader ? lead() : follow()));
  if (leadership.isLeader()) void lead();

  /** The leader writes the states of the routes that changed. */
  const stateTimer = setInterval(() => {
    if (!leadership.isLeader()) return;
    const records = worker.takeChangedStates();
    if (records.length > 0)
      routing.saveRouterStates(records).catch((error: unknown) => logger.warn('router: route states not written', errorFields(error)));
  }, options.stateFlushMs ?? 1_000);
  stateTimer.unref();

  /** Followers read the states the leader wrote. */
  function refreshStates(): void {
    if (leadership.isLeader() || readingStates !== null) return;
    readingStates = routing
      .listRouterStatesChangedAfter(statesRevision)
      .then((revised) => {
        for (const { record } of revised) remember(record);
        statesRevision = revised.at(-1)?.revision ?? statesRevision;
      })
      .catch((error: unknown) => logger.warn('router: route states not read', errorFields(error)))
      .finally(() => (readingStates = null));
  }
  const pollTimer = setInterval(refreshStates, options.statePollMs ?? 5_000);
  pollTimer.unref();

  function remember(record: RouterStateRecord): void {
    const decoded = decodeRouteState(record.state);
    if (decoded === null) return;
    const key = routeKey(record.scope, record.requestedModel);
    followed.set(key, { record: decoded, planAskedAt: followed.get(key)?.planAskedAt ?? Number.NEGATIVE_INFINITY });
  }

  function countSaving(scope: Scope, saved: number): void {
    const key = `${scope.accountId}\u0000${scope.project}\u0000${scope.workload}`;
    const counters = followerCounters.get(key) ?? { ...scope, droppedSamples: 0, evalSpendUsd: 0, savedUsd: 0 };
    counters.savedUsd += saved;
    followerCounters.set(key, counters);
  }

  const router: FleetRouter = {
    offer(sample, origin) {
      if (leadership.isLeader()) return worker.offer(sample, origin);
      if (sample.environment !== 'production') return;
      const requested = catalog.resolve(sample.requestedModel);
      if (requested === undefined) return;
      const routed = sample.servedModel !== requested.id;
      outbox.count(sample.scope, requested.id, routed, sample.latencyMs, sample.ttftMs);
      const served = routed ? catalog.resolve(sample.servedModel) : undefined;
      if (served !== undefined) countSaving(sample.scope, costAt(priceOf, requested, sample.usage) - costAt(priceOf, served, sample.usage));

      const key = routeKey(sample.scope, requested.id);
      let route = followed.get(key);
      if (route === undefined) followed.set(key, (route = { record: emptyRouteStateRecord(), planAskedAt: Number.NEGATIVE_INFINITY }));
      const view = { plan: route.record.plan, planAt: route.record.planAt, planAskedAt: route.planAskedAt };
      const monitor = routed && random() < settings.shadowRate;
      const explore = random() < explorationRate(view, routes.contract(sample.scope).contract.sample_rate, now(), settings);
      route.planAskedAt = view.planAskedAt;
      if (monitor || explore)
        outbox.sample({ ...sample, origin: sample.origin ?? origin?.(), requestedModel: requested.id, monitor, explore });
    },
    isLeader: () => leadership.isLeader(),
    countGuardFailure: (scope, requestedModel, servedModel) => worker.countGuardFailure(scope, requestedModel, servedModel),
    async decideAgain(scope, detail) {
      if (leadership.isLeader()) return worker.decideAgain(scope, detail);
      outbox.decideAgain(scope, detail);
    },
    activity(scope, requestedModel): RouteActivity {
      if (leadership.isLeader()) return worker.activity(scope, requestedModel);
      const record = followed.get(routeKey(scope, requestedModel))?.record ?? emptyRouteStateRecord();
      return activityOf(record, record.callsPerDay);
    },
    async idle() {
      await outbox.flush();
      await worker.idle();
    },
    stats() {
      const own = worker.stats();
      if (leadership.isLeader()) return { ...own, dropped: own.dropped + trimmed + outbox.dropped() };
      return { queued: 0, dropped: outbox.dropped(), processed: own.processed, workloads: [...followerCounters.values()] };
    },
    replayLoad: () => worker.replayLoad(),
    refreshStates,
    takeSamples: () => inbox?.poke(),
    async close() {
      clearInterval(stateTimer);
      clearInterval(pollTimer);
      await outbox.close();
      await inbox?.close();
      const leader = leadership.isLeader();
      await worker.close();
      // The next leader goes on from here: the last changes are written before the lease is released.
      if (leader)
        await routing
          .saveRouterStates(worker.takeChangedStates())
          .catch((error: unknown) => logger.warn('router: route states not written', errorFields(error)));
      await leadership.close();
    },
  };
  return router;
}
