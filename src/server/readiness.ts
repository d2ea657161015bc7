/**
 * `/readyz`: may a load balancer send calls here? Ready while the store
 * answers and at least one model can answer: its engine answers and it is
 * not unavailable there (a CPU model whose file is not downloaded yet). An
 * engine that fails while others still serve makes the process degraded, not
 * unready: a 503 would take away the models that still work. The body says
 * what is wrong either way.
 *
 * A store that refuses writes (a full disk) or does not answer at all
 * (PostgreSQL restarting or failing over) is degraded, not unready, for the
 * same reason: calls are still answered from cached keys, scopes and routes,
 * their traces and new scopes wait in memory, and a 503 from every process
 * at once would empty the load balancer. So are rate limits shared in Redis while Redis is
 * away: each process limits on its own meanwhile.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { Engine } from '../engines/engine.js';
import type { Store } from '../store/store.js';
import type { TraceWriterStats } from '../store/trace-writer.js';

export interface ReadinessReport {
  ready: boolean;
  /** Why the process is not ready; null when it is. */
  reason: string | null;
  store: string;
  /** "ok", or how the store's writes fail and what waits in memory for them. */
  store_writes: string;
  /** "ok", or why the rate limits are per process though configured as shared (Redis does not answer). */
  limits: string;
  /** "ok" or what went wrong, per engine id. */
  engines: Record<string, string>;
  /** Models that can answer now, and why each of the others cannot. */
  models: { available: string[]; unavailable: Record<string, string> };
  /** Parts that fail while the process still serves: `store`, `limits`, `engine:<id>`. */
  degraded: string[];
  /** Whether this process leads the fleet's router, or hands its samples to the one that does. */
  router: 'leader' | 'follower';
}

export interface ReadinessParts {
  store: Store;
  engines: readonly Engine[];
  catalog: Catalog;
  /** Why the store's writes are failing, or null while they succeed. */
  storeWrites: () => string | null;
  /** Why the rate limits are not where the config put them (`RateLimiter.degraded`), or null while they are. */
  limits: () => string | null;
  routerLeads: () => boolean;
}

export async function checkReadiness(parts: ReadinessParts, timeoutMs = 2_000): Promise<ReadinessReport> {
  const signal = AbortSignal.timeout(timeoutMs);
  const describe = (promise: Promise<void>) =>
    promise.then(
      () => 'ok',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
  const [storeState, ...engineStates] = await Promise.all([
    describe(parts.store.ping()),
    ...parts.engines.map((engine) => describe(engine.checkReady(signal))),
  ]);
  const engines: Record<string, string> = {};
  parts.engines.forEach((engine, index) => (engines[engine.id] = engineStates[index] as string));

  const available: string[] = [];
  const unavailable: Record<string, string> = {};
  for (const model of parts.catalog.list()) {
    const reasons = model.servedBy.map(({ engine: engineId, name }) => {
      const engine = parts.engines.find((candidate) => candidate.id === engineId);
      if (engine === undefined || engines[engineId] !== 'ok') return `engine ${engineId}: ${engines[engineId] ?? 'not configured'}`;
      return engine.unavailableReason?.(name) ?? null;
    });
    if (reasons.includes(null)) available.push(model.id);
    else unavailable[model.id] = reasons.join('; ');
  }

  const storeWrites = parts.storeWrites() ?? 'ok';
  const limits = parts.limits() ?? 'ok';
  const degraded = parts.engines.filter((engine) => engines[engine.id] !== 'ok').map((engine) => `engine:${engine.id}`);
  if (limits !== 'ok') degraded.unshift('limits');
  if (storeWrites !== 'ok' || storeState !== 'ok') degraded.unshift('store');
  const models = { available, unavailable };
  let reason: string | null = null;
  if (parts.catalog.list().length === 0) reason = 'no models are configured: start taskgate with --config naming an engine and its models';
  else if (available.length === 0) {
    // A model being downloaded is the likeliest reason on a first start: name it first.
    const entries = Object.entries(unavailable);
    const [firstId, firstReason] = entries.find(([, text]) => text.includes('downloading')) ?? (entries[0] as [string, string]);
    reason = `no model can answer yet (${firstId}: ${firstReason}${Object.keys(unavailable).length > 1 ? '; the others are in models.unavailable' : ''})`;
  }
  return {
    ready: reason === null,
    reason,
    store: storeState as string,
    store_writes: storeWrites,
    limits,
    engines,
    models,
    degraded,
    router: parts.routerLeads() ? 'leader' : 'follower',
  };
}

/** `storeWrites` from the trace writer and the scope registry: what fails and what waits for the store. */
export function describeStoreWrites(traces: TraceWriterStats, unwrittenScopes: number, now = Date.now()): string | null {
  if (traces.failingSince === null && unwrittenScopes === 0) return null;
  const since = traces.failingSince === null ? '' : ` for ${Math.round((now - traces.failingSince) / 1000)} s`;
  return `failing${since}: ${traces.queued} traces and ${unwrittenScopes} new workloads wait in memory, ${traces.dropped} traces dropped`;
}
