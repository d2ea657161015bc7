/**
 * A route's lifecycle: the phase a (workload, requested model) is in, and
 * which phase may follow which, for what cause. Pure: the phase is a function
 * of the route record and the router's state of the route, nothing else.
 *
 * The phases, in the order `phaseOf` tests them:
 *   - `pinned`: a person chose the model; the router goes on deciding underneath.
 *   - `split`: shares of the calls are drawn to cheaper models, the rest
 *     served by the route's serving model (relative contracts).
 *   - `certified`: a cheaper model serves the whole workload.
 *   - `unmonitored`: nothing cheaper serves because a model that did could
 *     not be checked, and sits out until monitoring can resume (its cooldown
 *     came from an `unmonitored` change: the model is on probation).
 *   - `cooling_down`: nothing cheaper serves because the last serving model
 *     was demoted (quality or latency) and cools down.
 *   - `exploring`: the requested model serves; candidates are under test.
 *   - `requested`: the requested model serves; nothing is under test.
 *
 * A change of phase has a cause: a route change's reason (the route history's
 * `reason`), or one of two events no history row records: `plan` (the
 * exploration plan starts or stops testing candidates) and `cooldown_ended`.
 *
 * What calls it today: the routes view (src/server/routes-view.ts) shows each
 * route's `phaseOf`; every route change the router writes (route-changes.ts
 * `applyDecision`: certifications, shares, demotions, fallbacks, contract
 * edits) is checked against `PHASE_TRANSITIONS` and logged as a bug when the
 * table does not allow it. Pins (routing-handlers.ts) write their changes
 * directly; the table's `pinned` rows document them.
 */
import type { RouteChangeReason, RouteRecord } from '../store/routing-store.js';
import type { RouteActivity } from './route-activity.js';

export type RoutePhase = 'requested' | 'exploring' | 'split' | 'certified' | 'cooling_down' | 'unmonitored' | 'pinned';

export const ROUTE_PHASES: readonly RoutePhase[] = [
  'requested',
  'exploring',
  'split',
  'certified',
  'cooling_down',
  'unmonitored',
  'pinned',
];

/** What moves a route from one phase to another: a route change's reason, or an event of the router's own. */
export type PhaseCause = RouteChangeReason | 'plan' | 'cooldown_ended';

export const PHASE_CAUSES: readonly PhaseCause[] = [
  'certified',
  'split',
  'demoted',
  'too_slow',
  'unmonitored',
  'pinned',
  'unpinned',
  'contract_changed',
  'plan',
  'cooldown_ended',
];

/** The route's facts a phase is read from (absent: the workload has no route for the model yet). */
export type PhaseRoute = Pick<RouteRecord, 'requestedModel' | 'servedModel' | 'pinnedModel' | 'split' | 'cooldowns'>;

/** The router's state a phase is read from; absent before the router has planned the route. */
export type PhaseActivity = Pick<RouteActivity, 'exploring' | 'probation'>;

export function phaseOf(route: PhaseRoute | undefined, activity: PhaseActivity | undefined, now: number): RoutePhase {
  if (route?.pinnedModel != null) return 'pinned';
  if (route !== undefined && route.split !== null && route.split.shares.length > 0) return 'split';
  if (route !== undefined && route.servedModel !== route.requestedModel) return 'certified';
  const cooling = Object.entries(route?.cooldowns ?? {})
    .filter(([, until]) => until > now)
    .map(([model]) => model);
  // Waiting for monitoring is the nearer wait (minutes, or the next budget day) and the one an operator can act on.
  if (cooling.some((model) => activity?.probation.includes(model) === true)) return 'unmonitored';
  if (cooling.length > 0) return 'cooling_down';
  return (activity?.exploring.length ?? 0) > 0 ? 'exploring' : 'requested';
}

type Transitions = Readonly<Partial<Record<RoutePhase, readonly PhaseCause[]>>>;

const UNPINNED: readonly RoutePhase[] = ROUTE_PHASES.filter((phase) => phase !== 'pinned');

/**
 * Which phase may follow which, and for what causes. Read with the worker's
 * behaviour in mind:
 *   - a demotion (`demoted`, `too_slow`) always starts a cooldown, so it ends
 *     in `cooling_down` unless another model takes over (a split, or a dearer
 *     certified model); `demoted` is also the reason the worker gives when a
 *     whole-workload certificate lapses without a cooldown (the bound moved,
 *     or the upper bound fell below the pass rate);
 *   - `unmonitored` puts the unchecked models on probation with a cooldown;
 *   - a cooldown outlives the change that follows it, so a change from a
 *     serving phase may land in `cooling_down` or `unmonitored` while an
 *     older cooldown runs (a contract edit, a lapsed certificate);
 *   - while pinned, every change but `unpinned` keeps the route pinned.
 */
export const PHASE_TRANSITIONS: Readonly<Record<RoutePhase, Transitions>> = {
  requested: {
    exploring: ['plan'],
    split: ['split', 'contract_changed'],
    certified: ['certified', 'contract_changed'],
    pinned: ['pinned'],
  },
  exploring: {
    requested: ['plan'],
    split: ['split', 'contract_changed'],
    certified: ['certified', 'contract_changed'],
    pinned: ['pinned'],
  },
  split: {
    requested: ['split', 'contract_changed'],
    exploring: ['split', 'contract_changed'],
    split: ['split', 'demoted', 'too_slow', 'unmonitored', 'contract_changed'],
    certified: ['certified', 'demoted', 'too_slow', 'unmonitored', 'contract_changed'],
    cooling_down: ['demoted', 'too_slow', 'contract_changed'],
    unmonitored: ['unmonitored', 'demoted', 'too_slow', 'contract_changed'],
    pinned: ['pinned'],
  },
  certified: {
    requested: ['demoted', 'contract_changed'],
    exploring: ['demoted', 'contract_changed'],
    split: ['demoted', 'too_slow', 'unmonitored', 'contract_changed'],
    certified: ['certified', 'demoted', 'too_slow', 'unmonitored', 'contract_changed'],
    cooling_down: ['demoted', 'too_slow', 'contract_changed'],
    unmonitored: ['unmonitored', 'demoted', 'too_slow', 'contract_changed'],
    pinned: ['pinned'],
  },
  cooling_down: {
    requested: ['cooldown_ended'],
    exploring: ['cooldown_ended'],
    split: ['split', 'contract_changed'],
    certified: ['certified', 'contract_changed'],
    pinned: ['pinned'],
  },
  unmonitored: {
    requested: ['cooldown_ended'],
    exploring: ['cooldown_ended'],
    split: ['split', 'contract_changed'],
    certified: ['certified', 'contract_changed'],
    // The wait for monitoring ended while an older demotion still cools down.
    cooling_down: ['cooldown_ended'],
    pinned: ['pinned'],
  },
  pinned: {
    ...Object.fromEntries(UNPINNED.map((phase) => [phase, ['unpinned'] as const])),
    pinned: PHASE_CAUSES.filter((cause) => cause !== 'unpinned'),
  },
};

export function isAllowedTransition(from: RoutePhase, to: RoutePhase, cause: PhaseCause): boolean {
  return PHASE_TRANSITIONS[from][to]?.includes(cause) === true;
}
