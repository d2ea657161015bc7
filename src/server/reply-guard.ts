/**
 * The per-call guard: a routed (cheaper) model's reply must pass the
 * contract's reference-free checks (json_schema, regex, tool_call_valid).
 * One that fails is re-asked of the next stronger model (the next certified
 * one, else the requested model) before the caller sees anything; the
 * failure counts against the cheaper model and its cost is billed to the
 * workload with the call. Streams are never buffered for it.
 */
import { costOf, type Catalog, type CatalogModel } from '../catalog/catalog.js';
import type { ModelPool } from '../engines/engine-pool.js';
import type { EngineCompletion } from '../engines/engine.js';
import { guardChecks } from '../evals/evaluate-contract.js';
import type { RouteTable } from '../routing/route-table.js';
import type { RouterWorker } from '../routing/router-worker.js';
import { engineReply, noUsage, type CallReply, type EngineReply } from './call-reply.js';

export interface ReplyGuardDependencies {
  catalog: Catalog;
  routes: RouteTable;
  /** Counts a guard failure against the cheaper model. */
  router: RouterWorker;
  pools: ReadonlyMap<string, ModelPool>;
}

/** The reply the caller gets: the first, or the stronger model's re-ask, with what the failed one cost. */
export interface GuardedReply {
  completion: EngineCompletion;
  replica: string;
  /** The model that gave `completion`. */
  model: CatalogModel;
  /** The failed first reply's cost, billed with the call; 0 when it passed. */
  extraCostUsd: number;
}

export type ReplyGuard = (reply: CallReply, first: EngineReply) => Promise<GuardedReply>;

export function createReplyGuard(dependencies: ReplyGuardDependencies): ReplyGuard {
  const { catalog, routes, router, pools } = dependencies;
  return async function guarded(reply: CallReply, first: EngineReply): Promise<GuardedReply> {
    // Fields spelled out rather than spreading `first` (not measured yet: docs/benchmarks.md).
    const unchanged = { completion: first.completion, replica: first.replica, model: reply.model, extraCostUsd: 0 };
    const message = first.completion.choices[0]?.message;
    if (reply.model === reply.requested || message === undefined) return unchanged;
    const { contract } = routes.contract(reply.scope);
    if (guardChecks(contract, { request: reply.parameters, candidate: message }).passed !== false) return unchanged;
    const route = routes.route(reply.scope, reply.requested.id);
    const stronger =
      route?.pinnedModel === null
        ? route.fallbacks.map((id) => catalog.resolve(id)).find((model) => model !== undefined && pools.has(model.id))
        : undefined;
    const fallbackModel = stronger ?? reply.requested;
    const fallback = pools.get(fallbackModel.id);
    if (fallback === undefined) return unchanged;
    router.countGuardFailure(reply.scope, reply.requested.id, reply.model.id);
    reply.call.servedModel = fallbackModel.id;
    reply.call.routeReason = 'guard_fallback';
    reply.call.routeShare = null;
    reply.span.setRouteReason('guard_fallback');
    const second = await engineReply(reply, fallbackModel, fallback, true);
    return {
      completion: second.completion,
      replica: second.replica,
      model: fallbackModel,
      extraCostUsd: costOf(reply.model, first.completion.usage ?? noUsage),
    };
  };
}
