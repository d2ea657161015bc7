/**
 * The composition root: from settings to a serving gateway. Everything is
 * created here and passed down; `stop` takes it down in reverse order, after
 * the last trace is written.
 */
import { createAuthenticator } from './auth/authenticator.js';
import { ensureBootstrapAdminKey } from './auth/key-issuer.js';
import { createCatalog } from './catalog/catalog.js';
import type { Settings } from './config/load-config.js';
import type { Engine } from './engines/engine.js';
import { createModelPool, type ModelPool } from './engines/engine-pool.js';
import { EngineMeter } from './engines/engine-meter.js';
import { MeasuredPrices } from './tracking/measured-prices.js';
import { catalogPrices, measuredPrices as rankByMeasured } from './routing/model-prices.js';
import { createEngines } from './engines/engines-from-config.js';
import { createRateLimiter } from './limits/create-rate-limiter.js';
import type { RateLimiter } from './limits/rate-limiter.js';
import type { Logger } from './log/logger.js';
import type { ModelDownloads } from './models/model-downloads.js';
import { createRouteTable } from './routing/route-table.js';
import { createRouterWorker, type RouterWorker } from './routing/router-worker.js';
import { createFleetRouter } from './routing/fleet-router.js';
import { DEFAULT_ROUTER_SETTINGS } from './routing/router-context.js';
import { createLeadership } from './routing/router-leadership.js';
import { followChanges } from './server/follow-changes.js';
import { createDashboard, DASHBOARD_PATH } from './dashboard/dashboard-handler.js';
import { createApp } from './server/app.js';
import { createMetricsApp } from './server/metrics-app.js';
import { createRollupStatsService } from './tracking/rollup-stats-service.js';
import { createMetrics, type Metrics } from './tracking/metrics.js';
import { createTelemetry } from './telemetry/create-telemetry.js';
import type { Telemetry } from './telemetry/telemetry.js';
import { createRetention, type Retention } from './tracking/retention.js';
import { createCallGate } from './server/call-gate.js';
import { createRoutingHandlers } from './server/routing-handlers.js';
import { listen, type HttpServer } from './server/http-server.js';
import { createScopeRegistry } from './server/scope-registry.js';
import { createShedCounter } from './server/shed-counter.js';
import { describeStoreWrites } from './server/readiness.js';
import { openStore } from './store/open-store.js';
import { withStoreErrors } from './store/store-errors.js';
import type { Store } from './store/store.js';
import { createTraceWriter, type TraceWriter } from './store/trace-writer.js';

export interface Taskgate {
  /** Base URL of the API, ending in `/v1`. */
  readonly baseUrl: string;
  readonly port: number;
  readonly store: Store;
  readonly traces: TraceWriter;
  /** The router worker (tests wait on `router.idle()`). */
  readonly router: RouterWorker;
  /** Body retention and the pruner (tests run `retention.pruneNow()`). */
  readonly retention: Retention;
  /** The OpenTelemetry export (tests flush it). */
  readonly telemetry: Telemetry;
  /** The admin key text made on this first start (print it once), else null. */
  readonly createdAdminKey: string | null;
  /** `server.metrics`'s address, when the config sets one. */
  readonly metricsUrl: string | null;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Model files being downloaded by this process (the first start's pull): their calls and `/readyz` say so. */
  downloads?: ModelDownloads;
  /** A store to use instead of opening the one the settings name (embedding taskgate; tests that make the store fail). */
  store?: Store;
  /** Whether this process makes the bootstrap admin key (default true). The workers of `serve --workers` leave it to their primary, which prints it once. */
  bootstrapAdminKey?: boolean;
  /** A rate limiter to use instead of the one the settings name; `stop` closes it. A worker of `serve --workers` asks its primary's. */
  limiter?: RateLimiter;
  /** Wraps this process's metrics: a worker of `serve --workers` answers `/metrics` with every worker's sum. */
  metrics?: (local: Metrics) => Metrics;
}

export async function startTaskgate(settings: Settings, logger: Logger, options: StartOptions = {}): Promise<Taskgate> {
  const { config } = settings;
  const store = withStoreErrors(options.store ?? (await openStore(settings.store)));
  await store.migrate();
  // A key the operator chose is in place before the first call; a generated one only once the port is ours (below).
  const bootstrap = options.bootstrapAdminKey ?? true;
  if (bootstrap && settings.adminKey !== null) await ensureBootstrapAdminKey(store, settings.adminKey);

  const { engines, close: closeEngines } = await createEngines(settings, logger, options.downloads);
  const enginesById = new Map(engines.map((engine) => [engine.id, engine]));
  const breakers = new Map(
    config.engines.map((engine) => [
      engine.id,
      {
        failureThreshold: engine.circuit_breaker.failures,
        cooldownMs: engine.circuit_breaker.cooldown_ms,
        maxCooldownMs: engine.circuit_breaker.max_cooldown_ms,
      },
    ]),
  );
  // One busy-time meter per engine, shared by the pools of every model it serves: measured cost divides by the engine's whole concurrency.
  const meters = new Map(
    config.engines.map((engine) => [engine.id, new EngineMeter({ engineId: engine.id, costPerHour: engine.cost_per_hour })]),
  );
  // What each model's tokens cost on those engines, from finished calls (the fleet's, in the store, and this process's); the router ranks by it with `routing.cost: measured`.
  const measuredPrices = new MeasuredPrices(store.rollups, logger);
  const catalog = createCatalog(config.models);
  const pools = new Map<string, ModelPool>();
  for (const model of catalog.list()) {
    const replicas = model.servedBy.map((replica) => {
      const breaker = breakers.get(replica.engine);
      return {
        engine: enginesById.get(replica.engine) as Engine,
        modelName: replica.name,
        circuit: breaker,
        meter: meters.get(replica.engine),
      };
    });
    pools.set(model.id, createModelPool({ modelId: model.id, replicas, logger }));
  }

  const limiter = options.limiter ?? (await createRateLimiter(settings.limits, { logger: logger.child({ part: 'limits' }) }));
  const authenticator = createAuthenticator({ accounts: store.accounts, logger });
  const gate = createCallGate({
    authenticator,
    limiter,
    defaultRequestsPerMinute: config.limits.requests_per_minute,
    defaultTokensPerMinute: config.limits.tokens_per_minute,
  });
  const traces = createTraceWriter({ traces: store.traces, logger, flushIntervalMs: config.traces.flush_interval_ms });
  const scopes = createScopeRegistry({ projects: store.projects, logger });
  const storeWrites = () => describeStoreWrites(traces.stats(), scopes.unwritten());
  const routes = createRouteTable({ routing: store.routing, logger });
  await routes.load();
  const routerLogger = logger.child({ part: 'router' });
  // One process of the fleet leads the router; the lease is asked for before serving, so a lone process leads from its first call.
  const leadership = createLeadership({ leases: store.leases, logger: routerLogger });
  // Off without an endpoint: then nothing of the OpenTelemetry SDK is even loaded.
  const telemetry = await createTelemetry(settings.telemetry, {
    engineTypes: new Map(config.engines.map((engine) => [engine.id, engine.type])),
    logger: logger.child({ part: 'telemetry' }),
  });
  // What "cheaper" means (`routing.cost`): candidates are ranked, and eval spend and savings counted, at this price.
  const priceOf = config.routing.cost === 'measured' ? rankByMeasured(measuredPrices) : catalogPrices;
  const router = createFleetRouter({
    worker: createRouterWorker({
      routing: store.routing,
      routes,
      catalog,
      pools,
      isBusy: (modelId) => hasWaitingCalls(catalog.resolve(modelId)?.servedBy ?? [], engines),
      replayConcurrency: new Map(
        config.engines.map((engine) => [
          engine.id,
          engine.replay_concurrency ?? (engine.type === 'openai' ? Math.max(1, Math.floor(engine.max_concurrency / 8)) : 1),
        ]),
      ),
      logger: routerLogger,
      telemetry,
      priceOf,
    }),
    leadership,
    routing: store.routing,
    routes,
    catalog,
    logger: routerLogger,
    settings: DEFAULT_ROUTER_SETTINGS,
    priceOf,
  });
  await leadership.start();
  const stats = createRollupStatsService(store.rollups);
  const engineLoads = () => [...meters.values()].map((meter) => meter.load());
  const dashboard = createDashboard({
    authenticator,
    store,
    stats,
    bodyTimeoutMs: config.server.request_timeout_ms,
    routing: createRoutingHandlers({ store, catalog, routes, router }),
    engineLoad: engineLoads,
    logger: logger.child({ part: 'dashboard' }),
  });
  const retention = createRetention({
    store: store.retention,
    defaults: {
      bodies: config.traces.bodies ? 'all' : 'none',
      sampleRate: 1,
      bodiesTtlDays: config.traces.bodies_ttl_days,
      tracesTtlDays: config.traces.ttl_days,
    },
    intervalMs: config.traces.prune_interval_ms,
    logger: logger.child({ part: 'retention' }),
  });
  const stopFollowing = followChanges(store.changes, { routes, authenticator, retention, router }, logger);
  const shed = createShedCounter(logger);
  const localMetrics = createMetrics({
    logger,
    sources: {
      engines: () => engineLoad(engines, pools),
      traceWriter: () => traces.stats(),
      storeWrites: () => ({ failing: storeWrites() !== null, unwrittenScopes: scopes.unwritten() }),
      limits: () => ({ degraded: limiter.degraded() !== null }),
      router: () => ({ leader: router.isLeader(), ...router.stats() }),
      telemetry: () => telemetry.stats(),
      engineUse: engineLoads,
      shedConnections: () => shed.counts,
    },
  });
  const metrics = options.metrics?.(localMetrics) ?? localMetrics;
  const handle = createApp({
    gate,
    authenticator,
    store,
    engines,
    catalog,
    stats,
    // The dashboard is mounted here, so the app serves it without importing it.
    mount: { prefix: DASHBOARD_PATH, handler: dashboard },
    metrics,
    retention,
    routes,
    router,
    pools,
    scopes,
    storeWrites,
    limits: () => limiter.degraded(),
    traces,
    logger,
    maxBodyBytes: config.limits.max_body_bytes,
    bodyTimeoutMs: config.server.request_timeout_ms,
    keepBodies: config.traces.bodies,
    pingIntervalMs: config.server.stream_ping_interval_ms,
    stallTimeoutMs: config.server.stream_stall_timeout_ms,
    telemetry,
    measuredPrices,
    priceOf,
  });
  /** Everything but the sockets, in order: the trace writer flushes before the store closes. */
  async function closeParts(): Promise<void> {
    stopFollowing();
    await router.close();
    await routes.close();
    await retention.close();
    scopes.close();
    await traces.close();
    await authenticator.close();
    await limiter.close();
    await closeEngines();
    // After the router and the last call: their spans are queued by now, and flushed here.
    await telemetry.shutdown();
    await store.close();
  }

  const listening: HttpServer[] = [];
  try {
    listening.push(
      await listen(handle, {
        host: settings.host,
        port: settings.port,
        requestTimeoutMs: config.server.request_timeout_ms,
        maxSlowPerAddress: config.server.max_slow_connections_per_address,
        maxSlowTotal: config.server.max_slow_connections,
        onShed: shed.count,
      }),
    );
    if (config.server.metrics !== null) listening.push(await listen(createMetricsApp(metrics), config.server.metrics));
  } catch (error) {
    // The port is taken (or not ours to take): undo what started, so the process can exit cleanly.
    for (const started of listening) await started.stop(0);
    await closeParts();
    throw error;
  }
  const [server, metricsServer = null] = listening as [HttpServer, HttpServer?];
  // Made only now that the port is ours: a start that fails to listen never prints a key it then loses.
  const createdAdminKey = bootstrap && settings.adminKey === null ? await ensureBootstrapAdminKey(store, null) : null;
  const displayHost = settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;

  return {
    baseUrl: `http://${displayHost.includes(':') ? `[${displayHost}]` : displayHost}:${server.port}/v1`,
    port: server.port,
    store,
    traces,
    router,
    retention,
    telemetry,
    createdAdminKey,
    metricsUrl: metricsServer === null ? null : `http://${config.server.metrics!.host}:${metricsServer.port}/metrics`,
    async stop() {
      await metricsServer?.stop(0);
      await server.stop(config.server.shutdown_timeout_ms);
      await closeParts();
    },
  };
}

/** Calls in flight and queued per engine and model: the engine's own count when it queues, else the pool's. */
function engineLoad(
  engines: readonly Engine[],
  pools: ReadonlyMap<string, ModelPool>,
): Array<{ engine: string; model: string; inFlight: number; queued: number }> {
  const rows: Array<{ engine: string; model: string; inFlight: number; queued: number }> = [];
  const queuing = new Set<string>();
  for (const engine of engines) {
    const load = engine.occupancy?.();
    if (load === undefined) continue;
    queuing.add(engine.id);
    for (const entry of load) rows.push({ engine: engine.id, ...entry });
  }
  for (const [model, pool] of pools) {
    for (const state of pool.replicaStates())
      if (!queuing.has(state.replica)) rows.push({ engine: state.replica, model, inFlight: state.inFlight, queued: 0 });
  }
  return rows;
}

/** Whether calls wait for a free slot on any replica of a model (engines that queue report it through `occupancy`). */
function hasWaitingCalls(replicas: ReadonlyArray<{ engine: string; name: string }>, engines: readonly Engine[]): boolean {
  return replicas.some(
    (replica) =>
      engines
        .find((engine) => engine.id === replica.engine)
        ?.occupancy?.()
        .some((entry) => entry.model === replica.name && entry.queued > 0) === true,
  );
}
