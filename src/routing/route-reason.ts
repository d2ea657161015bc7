/**
 * Which model a call goes to on its route, and why (the trace's
 * `routeReason`, the span's `taskgate.route.reason`), from the same facts the
 * chat handler decided on. The guard's re-ask (`guard_fallback`) is set
 * where it happens.
 */
import type { RouteRecord } from '../store/routing-store.js';
import type { RouteReason } from '../telemetry/telemetry.js';

/** The model a route names for one call: a pin, else a draw among its shares, else its serving model. */
export interface RouteDraw {
  model: string;
  /** The share the call was drawn into (a split route), else null. */
  share: number | null;
}

/**
 * One call's model on `route`. A split route draws each call at random: a
 * share s of the calls goes to its model, the rest to the serving model, so
 * the calls each model serves are a random sample of the workload's (what
 * the router's certificate assumes). `random` in [0, 1).
 */
export function drawRoute(route: Pick<RouteRecord, 'servedModel' | 'pinnedModel' | 'split'> | undefined, requestedId: string, random: () => number): RouteDraw {
  if (route === undefined) return { model: requestedId, share: null };
  if (route.pinnedModel !== null) return { model: route.pinnedModel, share: null };
  if (route.split !== null) {
    let point = random();
    for (const entry of route.split.shares) {
      if (point < entry.share) return { model: entry.model, share: entry.share };
      point -= entry.share;
    }
  }
  return { model: route.servedModel, share: null };
}

/**
 * `route`: the workload's route for the requested model, if any; `draw`: the
 * model it named for this call; `routedId`: the model that resolved to (the
 * requested one when the route's model left the catalog or has no engine);
 * `servedId`: the model that serves after the content check.
 */
export function routeReason(route: Pick<RouteRecord, 'pinnedModel'> | undefined, draw: RouteDraw, requestedId: string, routedId: string, servedId: string): RouteReason {
  if (route === undefined || draw.model === requestedId) return 'requested';
  if (routedId === requestedId) return 'no_engine';
  if (servedId === requestedId) return 'content';
  if (route.pinnedModel !== null) return 'pinned';
  return draw.share === null ? 'routed' : 'split';
}
