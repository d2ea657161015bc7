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
import { createEngines } from './engines/engines-from-config.js';
import { createMemoryRateLimiter } from './limits/memory-rate-limiter.js';
import type { Logger } from './log/logger.js';
import { createRouteTable } from './routing/route-table.js';
import { createRouterWorker, type RouterWorker } from './routing/router-worker.js';
import { createApp } from './server/app.js';
import { createCallGate } from './server/call-gate.js';
import { listen } from './server/http-server.js';
import { createScopeRegistry } from './server/scope-registry.js';
import { openStore } from './store/open-store.js';
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
  /** The admin key text made on this first start (print it once), else null. */
  readonly createdAdminKey: string | null;
  stop(): Promise<void>;
}

export async function startTaskgate(settings: Settings, logger: Logger): Promise<Taskgate> {
  const { config } = settings;
  const store = openStore(settings);
  await store.migrate();
  const createdAdminKey = await ensureBootstrapAdminKey(store.accounts, settings.adminKey);

  const { engines, close: closeEngines } = await createEngines(settings, logger);
  const enginesById = new Map(engines.map((engine) => [engine.id, engine]));
  const breakers = new Map(
    config.engines.map((engine) => [
      engine.id,
      { failureThreshold: engine.circuit_breaker.failures, cooldownMs: engine.circuit_breaker.cooldown_ms, maxCooldownMs: engine.circuit_breaker.max_cooldown_ms },
    ]),
  );
  const catalog = createCatalog(config.models);
  const pools = new Map<string, ModelPool>();
  for (const model of catalog.list()) {
    const replicas = model.servedBy.map((replica) => {
      const breaker = breakers.get(replica.engine);
      return { engine: enginesById.get(replica.engine) as Engine, modelName: replica.name, circuit: breaker };
    });
    pools.set(model.id, createModelPool({ modelId: model.id, replicas, logger }));
  }

  const limiter = createMemoryRateLimiter();
  const authenticator = createAuthenticator({ accounts: store.accounts, logger });
  const gate = createCallGate({ authenticator, limiter, defaultRequestsPerMinute: config.limits.requests_per_minute });
  const traces = createTraceWriter({ traces: store.traces, logger });
  const routes = createRouteTable({ routing: store.routing, logger });
  await routes.load();
  const router = createRouterWorker({ routing: store.routing, routes, catalog, pools, logger: logger.child({ part: 'router' }) });
  const handle = createApp({
    gate,
    authenticator,
    store,
    engines,
    catalog,
    routes,
    router,
    pools,
    scopes: createScopeRegistry(store.projects),
    traces,
    logger,
    maxBodyBytes: config.limits.max_body_bytes,
    keepBodies: config.traces.bodies,
    pingIntervalMs: config.server.stream_ping_interval_ms,
  });
  const server = await listen(handle, { host: settings.host, port: settings.port });
  const displayHost = settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;

  return {
    baseUrl: `http://${displayHost.includes(':') ? `[${displayHost}]` : displayHost}:${server.port}/v1`,
    port: server.port,
    store,
    traces,
    router,
    createdAdminKey,
    async stop() {
      await server.stop(config.server.shutdown_timeout_ms);
      await router.close();
      await routes.close();
      await traces.close();
      await authenticator.close();
      await limiter.close();
      await closeEngines();
      await store.close();
    },
  };
}
