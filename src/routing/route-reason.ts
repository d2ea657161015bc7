/**
 * Which model a call goes to on its route, and why (the trace's
 * `routeReason`, the span's `taskgate.route.reason`), from the same facts the
 * chat handler decided on: `policy` for a call a share entry's per-call
 * policy picked and drew. The guard's re-ask (`guard_fallback`) is set
 * where it happens.
 */
import type { RouteRecord, RouteSplit, StoredCallPolicy } from '../store/routing-store.js';
import type { RouteReason } from '../telemetry/telemetry.js';
import { callFeatures, requestSize, type CallFeatures, type CallRequest } from './call-features.js';
import { routesToCandidate } from './call-policy.js';

/** The model a route names for one call: a pin, else a draw among its shares, else its serving model. */
export interface RouteDraw {
  model: string;
  /** The share the call was drawn into (a split route), else null. */
  share: number | null;
  /** Whether `share` is of the calls a per-call policy picks (the policy picked this call), not of all calls. */
  policy: boolean;
}

type Routed = Pick<RouteRecord, 'servedModel' | 'pinnedModel' | 'split'>;

/**
 * One call's model on `route`. A split route draws each call at random: a
 * share s of the calls goes to its model, the rest to the serving model, so
 * the calls each model serves are a random sample of the workload's (what
 * the router's certificate assumes). `random` in [0, 1).
 *
 * A share entry with a per-call policy (`policy`) takes a share of the calls
 * its policy picks instead: the call goes to its model when the policy picks
 * it (call-policy.ts `routesToCandidate` on the request's features,
 * call-features.ts with the default options, weighed by `requestSize`) and an independent
 * `random()` is below the share. `request` is what the features are read
 * from (the chat request itself will do); it is read only when an entry has
 * a policy, at most once per call, and only once a call's draw falls in a
 * policy's share. Without it a policy picks no call. A route without a
 * policy costs what it always did: one `random()`, no allocation.
 */
export function drawRoute(route: Routed | undefined, requestedId: string, random: () => number, request?: CallRequest): RouteDraw {
  if (route === undefined) return { model: requestedId, share: null, policy: false };
  if (route.pinnedModel !== null) return { model: route.pinnedModel, share: null, policy: false };
  if (route.split !== null) {
    const draw = random();
    let point = draw;
    for (const entry of route.split.shares) {
      // The first entry with a policy hands the whole draw over (the entries before it, drawn again on the same `draw`, miss again).
      if (entry.policy !== undefined) return drawWithPolicies(route, route.split.shares, draw, random, request);
      if (point < entry.share) return { model: entry.model, share: entry.share, policy: false };
      point -= entry.share;
    }
  }
  return { model: route.servedModel, share: null, policy: false };
}

/**
 * `drawRoute` on a split with a policy: the entries in order, random shares
 * on the call's `draw` as in `drawRoute`, a policy's share on a `random()`
 * of its own (so it is the share of the calls the policy picks whatever
 * comes before it). The features are computed at most once, for the first
 * policy whose share the call is drawn into.
 */
function drawWithPolicies(
  route: Routed,
  shares: RouteSplit['shares'],
  draw: number,
  random: () => number,
  request: CallRequest | undefined,
): RouteDraw {
  let features: CallFeatures | undefined;
  let size = 0;
  let point = draw;
  for (const entry of shares) {
    if (entry.policy === undefined) {
      if (point < entry.share) return { model: entry.model, share: entry.share, policy: false };
      point -= entry.share;
      continue;
    }
    if (request === undefined || !(random() < entry.share)) continue;
    if (features === undefined) {
      features = callFeatures(request);
      size = requestSize(request);
    }
    if (picks(entry.policy, features, size)) return { model: entry.model, share: entry.share, policy: true };
  }
  return { model: route.servedModel, share: null, policy: false };
}

/** Whether `policy` picks a call of these features; a policy of another dimension than the default features' (not one this process can read) picks none. */
function picks(policy: StoredCallPolicy, features: CallFeatures, size: number): boolean {
  return policy.dimension === features.dimension && routesToCandidate(policy, features, size);
}

/**
 * `route`: the workload's route for the requested model, if any; `draw`: the
 * model it named for this call; `routedId`: the model that resolved to (the
 * requested one when the route's model left the catalog or has no engine);
 * `servedId`: the model that serves after the content check.
 */
export function routeReason(
  route: Pick<RouteRecord, 'pinnedModel'> | undefined,
  draw: RouteDraw,
  requestedId: string,
  routedId: string,
  servedId: string,
): RouteReason {
  if (route === undefined || draw.model === requestedId) return 'requested';
  if (routedId === requestedId) return 'no_engine';
  if (servedId === requestedId) return 'content';
  if (route.pinnedModel !== null) return 'pinned';
  if (draw.share === null) return 'routed';
  return draw.policy ? 'policy' : 'split';
}
