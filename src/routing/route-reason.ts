/**
 * Why a call is served by the model it is (the `taskgate.route.reason` of its
 * span), from the same facts the chat handler decided on. The guard's re-ask
 * (`guard_fallback`) is set where it happens.
 */
import type { RouteReason } from '../telemetry/telemetry.js';

/**
 * `route`: the workload's route for the requested model, if any; `routedId`:
 * the model the route table's answer resolved to (the requested one when the
 * route's model left the catalog or has no engine); `servedId`: the model
 * that serves after the content check.
 */
export function routeReason(route: { servedModel: string; pinnedModel: string | null } | undefined, requestedId: string, routedId: string, servedId: string): RouteReason {
  const named = route === undefined ? requestedId : (route.pinnedModel ?? route.servedModel);
  if (named === requestedId) return 'requested';
  if (routedId === requestedId) return 'no_engine';
  if (servedId === requestedId) return 'content';
  return route?.pinnedModel != null ? 'pinned' : 'routed';
}
