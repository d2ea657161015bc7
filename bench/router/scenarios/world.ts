/**
 * A taskgate router in a simulated world: the real route table, router
 * worker, engine pools (with their circuit breakers), evaluators and routing
 * API handlers, on an in-memory SQLite store, with simulated engines and a
 * simulated clock. `call` serves one production call the way the chat
 * handler does (the route's model, through its pool, then offered to the
 * router) and scores it against what the simulation knows: the served
 * model's true pass rate, what the call cost, what the oracle would have
 * paid.
 */
import { traceFixture } from '../../../test/contracts/store/trace-fixture.js';
import { createCatalog, costOf, type Catalog } from '../../../src/catalog/catalog.js';
import { parseConfig } from '../../../src/config/load-config.js';
import { createModelPool, type ModelPool } from '../../../src/engines/engine-pool.js';
import { silentLogger } from '../../../src/log/logger.js';
import { LATENCY_SLACK_MS } from '../../../src/routing/latency-limit.js';
import { drawRoute } from '../../../src/routing/route-reason.js';
import { createRouteTable, type RouteTable } from '../../../src/routing/route-table.js';
import type { RouterSettings } from '../../../src/routing/router-context.js';
import { createRouterWorker, type RouterWorker } from '../../../src/routing/router-worker.js';
import { createRoutingHandlers } from '../../../src/server/routing-handlers.js';
import type { Scope } from '../../../src/api/scope.js';
import { createSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { ApiKey, Store } from '../../../src/store/store.js';
import { createRandom, seedFor } from '../random.js';
import {
  createClock,
  createSimulatedEngine,
  USAGE,
  type SimulatedClock,
  type SimulatedEngine,
  type SimulatedModelSpec,
} from './simulated-engine.js';

export const DAY_MS = 86_400_000;
/** A served model this far below the pass rate is "below the bar", as in the workload simulation. */
export const BAD_MARGIN = 0.02;

export interface WorldOptions {
  models: SimulatedModelSpec[];
  seed: number;
  /** Router settings to change (one worker by default: the clock is shared). */
  settings?: Partial<RouterSettings>;
  maxQueue?: number;
}

export interface CallResult {
  served: string;
  ok: boolean;
  requestId: string;
}

/** What one workload's calls added up to. */
export interface Tally {
  calls: number;
  /** Calls served by a model below the pass rate minus the margin. */
  bad: number;
  referenceCost: number;
  productionCost: number;
  oracleCost: number;
  productionErrors: number;
  firstSwitch: number | null;
  servedBy: Map<string, number>;
  /** The true pass rates of the models that served, and of the requested model, summed over the calls: the workload's quality against the requested model's. */
  servedQuality: number;
  requestedQuality: number;
}

export interface World {
  clock: SimulatedClock;
  store: Store;
  routes: RouteTable;
  router: RouterWorker;
  catalog: Catalog;
  pools: Map<string, ModelPool>;
  engine: SimulatedEngine;
  handlers: ReturnType<typeof createRoutingHandlers>;
  key: ApiKey;
  scope(workload: string): Scope;
  /** One production call of `workload` asking for `requested`, at the current simulated time. */
  call(workload: string, requested: string, tally: Tally, passRate: number): Promise<CallResult>;
  evalSpend(workload: string): Promise<number>;
  close(): Promise<void>;
}

export function newTally(): Tally {
  return {
    calls: 0,
    bad: 0,
    referenceCost: 0,
    productionCost: 0,
    oracleCost: 0,
    productionErrors: 0,
    firstSwitch: null,
    servedBy: new Map(),
    servedQuality: 0,
    requestedQuality: 0,
  };
}

export async function createWorld(options: WorldOptions): Promise<World> {
  const clock = createClock(Date.UTC(2026, 10, 2, 0, 0, 0));
  const random = createRandom(seedFor(options.seed, 'world'));
  /** Each call's draw on a split route, as the chat handler draws it. */
  const draws = createRandom(seedFor(options.seed, 'route draws'));
  const store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  const account = await store.accounts.ensureAccount('default');
  const key = await store.accounts.createKey({
    accountId: account.id,
    name: 'simulation',
    displayPrefix: 'tg_sim',
    hash: 'simulation',
    environment: 'production',
    role: 'admin',
    requestsPerMinute: null,
  });
  const yaml = `engines: [{ id: simulated, type: openai, base_url: "http://127.0.0.1:1/v1" }]
models:
${options.models.map((model) => `  - { id: ${model.id}, provider: ${model.family}, served_by: [{ engine: simulated }], price: { input: ${model.price}, output: ${model.price} }, context_window: 8192, supports: [json, tools] }`).join('\n')}
`;
  const catalog = createCatalog(parseConfig(yaml, {}).models);
  const engine = createSimulatedEngine('simulated', options.models, clock, createRandom(seedFor(options.seed, 'engine')));
  const pools = new Map(
    catalog
      .list()
      .map((model) => [
        model.id,
        createModelPool({ modelId: model.id, replicas: [{ engine, modelName: model.id }], logger: silentLogger, now: clock.now }),
      ]),
  );
  const routes = createRouteTable({ routing: store.routing, logger: silentLogger, now: clock.now, pollIntervalMs: 3_600_000 });
  await routes.load();
  const router = createRouterWorker({
    routing: store.routing,
    routes,
    catalog,
    pools,
    logger: silentLogger,
    replayConcurrency: new Map([['simulated', 64]]),
    maxQueue: options.maxQueue,
    settings: { workers: 1, ...options.settings },
    random: createRandom(seedFor(options.seed, 'router')),
    now: clock.now,
  });
  const handlers = createRoutingHandlers({ store, catalog, routes, router, now: clock.now });
  const specs = new Map(options.models.map((model) => [model.id, model]));
  const scopeOf = (workload: string): Scope => ({ accountId: account.id, project: 'simulation', workload });
  await store.projects.ensureScope({ accountId: account.id, project: 'simulation', workload: 'main' });
  let sequence = 0;

  /** The cheapest model that truly passes now and is fast enough, else the requested one: what an oracle would serve. */
  function oracleCost(requested: SimulatedModelSpec, passRate: number): number {
    const limit = Math.max(2 * requested.latencyMs, requested.latencyMs + LATENCY_SLACK_MS);
    const passing = options.models
      .filter(
        (model) =>
          model.price < requested.price && model.missing !== true && model.quality(clock.now()) >= passRate && model.latencyMs <= limit,
      )
      .sort((left, right) => left.price - right.price)[0];
    return priceOf(passing ?? requested);
  }

  const priceOf = (model: SimulatedModelSpec) => (model.price * (USAGE.prompt_tokens + USAGE.completion_tokens)) / 1_000_000;

  return {
    clock,
    store,
    routes,
    router,
    catalog,
    pools,
    engine,
    handlers,
    key,
    scope: scopeOf,
    async call(workload, requestedId, tally, passRate) {
      const scope = scopeOf(workload);
      const requested = catalog.resolve(requestedId)!;
      const served = catalog.resolve(drawRoute(routes.route(scope, requested.id), requested.id, draws).model) ?? requested;
      const spec = specs.get(served.id)!;
      const requestedSpec = specs.get(requested.id)!;
      const question = `What is ${Math.floor(random() * 1000)} + ${Math.floor(random() * 1000)}?`;
      const parameters = { messages: [{ role: 'user' as const, content: question }] };
      const requestId = `req_sim_${workload}_${(sequence += 1)}`;
      tally.calls += 1;
      tally.servedBy.set(served.id, (tally.servedBy.get(served.id) ?? 0) + 1);
      if (served.id !== requested.id) tally.firstSwitch ??= tally.calls;
      tally.referenceCost += priceOf(requestedSpec);
      tally.oracleCost += oracleCost(requestedSpec, passRate);
      if (spec.quality(clock.now()) < passRate - BAD_MARGIN) tally.bad += 1;
      tally.servedQuality += spec.quality(clock.now());
      tally.requestedQuality += requestedSpec.quality(clock.now());
      const at = clock.now();
      let ok = true;
      try {
        const { completion } = await pools.get(served.id)!.complete(parameters, new AbortController().signal);
        // Production calls run side by side in reality: they do not move the clock.
        clock.set(at);
        const usage = completion.usage ?? USAGE;
        tally.productionCost += costOf(served, usage);
        const reply = completion.choices[0]!.message;
        await store.traces.insertBatch([traceOf(requestId, scope, key, requested.id, served.id, costOf(served, usage), at)]);
        router.offer({
          scope,
          environment: 'production',
          requestedModel: requested.id,
          servedModel: served.id,
          parameters,
          reply,
          usage,
          latencyMs: spec.latencyMs,
          ttftMs: null,
          stream: false,
        });
      } catch {
        clock.set(at);
        ok = false;
        tally.productionErrors += 1;
      }
      return { served: served.id, ok, requestId };
    },
    async evalSpend(workload) {
      const byRoute = await store.routing.evalSpendByRoute(scopeOf(workload));
      return Object.values(byRoute).reduce((sum, value) => sum + value, 0);
    },
    async close() {
      await router.close();
      await routes.close();
      await store.close();
    },
  };
}

function traceOf(requestId: string, scope: Scope, key: ApiKey, requested: string, served: string, costUsd: number, at: number) {
  return traceFixture({
    requestId,
    accountId: scope.accountId,
    keyId: key.id,
    environment: 'production' as const,
    project: scope.project,
    workload: scope.workload,
    requestedModel: requested,
    servedModel: served,
    replica: 'simulated',
    status: 'ok' as const,
    promptTokens: USAGE.prompt_tokens,
    completionTokens: USAGE.completion_tokens,
    costUsd,
    latencyMs: 1,
    startedAt: at,
    requestBody: null,
    replyBody: null,
  });
}
