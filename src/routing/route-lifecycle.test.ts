import { describe, expect, it } from 'vitest';
import type { RouteSplit } from '../store/routing-store.js';
import {
  isAllowedTransition,
  phaseOf,
  PHASE_CAUSES,
  PHASE_TRANSITIONS,
  ROUTE_PHASES,
  type PhaseActivity,
  type PhaseCause,
  type PhaseRoute,
  type RoutePhase,
} from './route-lifecycle.js';

const NOW = 1_800_000_000_000;
const LATER = NOW + 60_000;
const EARLIER = NOW - 60_000;

function split(shares: Array<[string, number]>): RouteSplit {
  return {
    shares: shares.map(([model, share]) => ({ model, share, diffLower: -0.01, samples: 400 })),
    requestedLower: 0.8,
    qualityBar: 0.95,
    confidence: 0.95,
    contractVersion: 1,
    at: 0,
  };
}

const base: PhaseRoute = { requestedModel: 'big', servedModel: 'big', pinnedModel: null, split: null, cooldowns: {} };
const idle: PhaseActivity = { exploring: [], probation: [] };
const testing: PhaseActivity = { exploring: ['small'], probation: [] };

describe('phaseOf', () => {
  const cases: Array<[string, PhaseRoute | undefined, PhaseActivity | undefined, RoutePhase]> = [
    ['no route yet, nothing planned', undefined, undefined, 'requested'],
    ['no route yet, the first plan tests candidates', undefined, testing, 'exploring'],
    ['the requested model serves, the plan tests nothing', base, idle, 'requested'],
    ['the requested model serves, the plan tests small', base, testing, 'exploring'],
    ['a share of the calls goes to small', { ...base, split: split([['small', 0.34]]) }, testing, 'split'],
    ['an empty split is no split', { ...base, split: split([]) }, idle, 'requested'],
    ['small serves the whole workload', { ...base, servedModel: 'small' }, idle, 'certified'],
    ['small serves while tiny is tested', { ...base, servedModel: 'small' }, { exploring: ['tiny'], probation: [] }, 'certified'],
    ['small was demoted and cools down', { ...base, cooldowns: { small: LATER } }, idle, 'cooling_down'],
    [
      'small cools down while tiny is tested',
      { ...base, cooldowns: { small: LATER } },
      { exploring: ['tiny'], probation: [] },
      'cooling_down',
    ],
    ['a cooldown that ended is no cooldown', { ...base, cooldowns: { small: EARLIER } }, testing, 'exploring'],
    [
      'small could not be checked and sits out',
      { ...base, cooldowns: { small: LATER } },
      { exploring: [], probation: ['small'] },
      'unmonitored',
    ],
    [
      'the wait for monitoring ended, small is on probation still',
      { ...base, cooldowns: { small: EARLIER } },
      { exploring: [], probation: ['small'] },
      'requested',
    ],
    [
      'both waits run: the wait for monitoring is the one shown',
      { ...base, cooldowns: { small: LATER, tiny: LATER } },
      { exploring: [], probation: ['tiny'] },
      'unmonitored',
    ],
    ['without the router state a cooldown reads as a demotion', { ...base, cooldowns: { small: LATER } }, undefined, 'cooling_down'],
    ['another model takes over during a cooldown', { ...base, servedModel: 'mid', cooldowns: { small: LATER } }, idle, 'certified'],
    ['shares of other models during a cooldown', { ...base, split: split([['tiny', 0.2]]), cooldowns: { small: LATER } }, idle, 'split'],
    ['a pin over a split', { ...base, pinnedModel: 'tiny', split: split([['small', 0.3]]) }, testing, 'pinned'],
    ['a pin of the requested model itself', { ...base, pinnedModel: 'big' }, idle, 'pinned'],
  ];
  it.each(cases)('%s', (_name, route, activity, phase) => {
    expect(phaseOf(route, activity, NOW)).toBe(phase);
  });

  it('names every phase', () => {
    expect(new Set(cases.map(([, , , phase]) => phase))).toEqual(new Set(ROUTE_PHASES));
  });
});

/** Every allowed transition, with what the router or a person did to cause it. */
const ALLOWED: Array<[RoutePhase, RoutePhase, PhaseCause, string]> = [
  ['requested', 'exploring', 'plan', 'the plan finds a candidate worth testing'],
  ['requested', 'split', 'split', 'a candidate earns a share at a decision (a fixed sample rate samples without a plan)'],
  ['requested', 'split', 'contract_changed', 'a looser quality bar, decided again on the same evidence, gives a share'],
  ['requested', 'certified', 'certified', 'a candidate is certified for the whole workload'],
  ['requested', 'certified', 'contract_changed', 'a looser pass rate certifies a candidate on the same evidence'],
  ['requested', 'pinned', 'pinned', 'a person pins a model'],
  ['exploring', 'requested', 'plan', 'nothing is worth testing any more'],
  ['exploring', 'split', 'split', 'a tested candidate earns a share'],
  ['exploring', 'split', 'contract_changed', 'a looser quality bar gives a share'],
  ['exploring', 'certified', 'certified', 'a tested candidate is certified for the whole workload'],
  ['exploring', 'certified', 'contract_changed', 'a looser pass rate certifies a tested candidate'],
  ['exploring', 'pinned', 'pinned', 'a person pins a model'],
  ['split', 'requested', 'split', 'the shares shrink to none and nothing is left to test'],
  ['split', 'requested', 'contract_changed', 'new checks: the evidence starts again'],
  ['split', 'exploring', 'split', 'the shares shrink to none while candidates are tested'],
  ['split', 'exploring', 'contract_changed', 'new checks: the evidence starts again and is gathered'],
  ['split', 'split', 'split', 'a share grows or another model gets one'],
  ['split', 'split', 'demoted', 'one share model is demoted, another keeps its share'],
  ['split', 'split', 'too_slow', 'one share model is too slow, another keeps its share'],
  ['split', 'split', 'unmonitored', 'share models sit out unchecked, another model gets a share'],
  ['split', 'split', 'contract_changed', 'a stricter quality bar shrinks the shares'],
  ['split', 'certified', 'certified', 'a share grows to the whole workload'],
  ['split', 'certified', 'demoted', 'a share model is demoted and another is certified for the whole workload'],
  ['split', 'certified', 'too_slow', 'a share model is too slow and another is certified for the whole workload'],
  ['split', 'certified', 'unmonitored', 'the share models sit out and another serves the whole workload'],
  ['split', 'certified', 'contract_changed', 'a looser quality bar certifies the whole workload'],
  ['split', 'cooling_down', 'demoted', 'the only share model is demoted'],
  ['split', 'cooling_down', 'too_slow', 'the only share model is too slow'],
  ['split', 'cooling_down', 'contract_changed', 'the shares go while an older demotion cools down'],
  ['split', 'unmonitored', 'unmonitored', 'the share models went unchecked too long'],
  ['split', 'unmonitored', 'demoted', 'the only share model is demoted while another waits for monitoring'],
  ['split', 'unmonitored', 'too_slow', 'the only share model is too slow while another waits for monitoring'],
  ['split', 'unmonitored', 'contract_changed', 'the shares go while a model waits for monitoring'],
  ['split', 'pinned', 'pinned', 'a person pins a model'],
  ['certified', 'requested', 'demoted', 'the certificate lapses (its bound moved), nothing to test'],
  ['certified', 'requested', 'contract_changed', 'new checks: the requested model serves again'],
  ['certified', 'exploring', 'demoted', 'the certificate lapses, candidates are tested'],
  ['certified', 'exploring', 'contract_changed', 'new checks: the evidence starts again and is gathered'],
  ['certified', 'split', 'demoted', 'the whole-workload bound lapses to a share'],
  ['certified', 'split', 'too_slow', 'the serving model is too slow, others keep shares'],
  ['certified', 'split', 'unmonitored', 'the serving model sits out unchecked, others get shares'],
  ['certified', 'split', 'contract_changed', 'a stricter quality bar leaves a share'],
  ['certified', 'certified', 'certified', 'a cheaper model is certified'],
  ['certified', 'certified', 'demoted', 'the serving model is demoted, a dearer certified one serves'],
  ['certified', 'certified', 'too_slow', 'the serving model is too slow, a dearer certified one serves'],
  ['certified', 'certified', 'unmonitored', 'the serving model sits out unchecked, a dearer certified one serves'],
  ['certified', 'certified', 'contract_changed', 'a stricter pass rate leaves a dearer certified model'],
  ['certified', 'cooling_down', 'demoted', 'the rollback detector demotes the serving model'],
  ['certified', 'cooling_down', 'too_slow', 'the serving model became too slow'],
  ['certified', 'cooling_down', 'contract_changed', 'new checks while an older demotion cools down'],
  ['certified', 'unmonitored', 'unmonitored', 'the serving model went unchecked too long'],
  ['certified', 'unmonitored', 'demoted', 'the serving model is demoted while another waits for monitoring'],
  ['certified', 'unmonitored', 'too_slow', 'the serving model is too slow while another waits for monitoring'],
  ['certified', 'unmonitored', 'contract_changed', 'new checks while a model waits for monitoring'],
  ['certified', 'pinned', 'pinned', 'a person pins a model'],
  ['cooling_down', 'requested', 'cooldown_ended', 'the cooldown ends, nothing worth testing'],
  ['cooling_down', 'exploring', 'cooldown_ended', 'the cooldown ends, the model is tested again from zero'],
  ['cooling_down', 'split', 'split', 'another candidate earns a share'],
  ['cooling_down', 'split', 'contract_changed', 'a looser quality bar gives another candidate a share'],
  ['cooling_down', 'certified', 'certified', 'another candidate is certified'],
  ['cooling_down', 'certified', 'contract_changed', 'a looser pass rate certifies another candidate'],
  ['cooling_down', 'pinned', 'pinned', 'a person pins a model'],
  ['unmonitored', 'requested', 'cooldown_ended', 'monitoring may resume; nothing serves until certified again'],
  ['unmonitored', 'exploring', 'cooldown_ended', 'monitoring may resume; candidates are tested'],
  ['unmonitored', 'split', 'split', 'the model is back with its evidence and a share'],
  ['unmonitored', 'split', 'contract_changed', 'a looser quality bar gives another candidate a share'],
  ['unmonitored', 'certified', 'certified', 'the model is back with its evidence, certified'],
  ['unmonitored', 'certified', 'contract_changed', 'a looser pass rate certifies another candidate'],
  ['unmonitored', 'cooling_down', 'cooldown_ended', 'the wait for monitoring ends while an older demotion cools down'],
  ['unmonitored', 'pinned', 'pinned', 'a person pins a model'],
  ...ROUTE_PHASES.filter((phase) => phase !== 'pinned').map((phase): [RoutePhase, RoutePhase, PhaseCause, string] => [
    'pinned',
    phase,
    'unpinned',
    'the pin is removed: the router state shows again',
  ]),
  ...PHASE_CAUSES.filter((cause) => cause !== 'unpinned').map((cause): [RoutePhase, RoutePhase, PhaseCause, string] => [
    'pinned',
    'pinned',
    cause,
    'the router goes on underneath a pin (or another pin)',
  ]),
];

const FORBIDDEN: Array<[RoutePhase, RoutePhase, PhaseCause, string]> = [
  ['requested', 'cooling_down', 'demoted', 'nothing cheaper serves: nothing to demote'],
  ['exploring', 'unmonitored', 'unmonitored', 'nothing cheaper serves: nothing goes unchecked'],
  ['requested', 'certified', 'split', 'a whole workload changes the serving model: its reason is certified'],
  ['cooling_down', 'exploring', 'plan', 'a plan does not end a cooldown'],
  ['certified', 'requested', 'too_slow', 'a demotion for latency always cools the model down'],
  ['split', 'requested', 'demoted', 'a demotion always cools the model down'],
  ['certified', 'requested', 'unmonitored', 'a model that sits out unchecked waits in unmonitored'],
  ['pinned', 'requested', 'pinned', 'only unpinning leaves a pin'],
  ['cooling_down', 'unmonitored', 'cooldown_ended', 'nothing was unchecked while nothing cheaper served'],
  ['cooling_down', 'cooling_down', 'demoted', 'nothing cheaper serves: nothing to demote again'],
];

describe('PHASE_TRANSITIONS', () => {
  it.each(ALLOWED)('allows %s → %s on %s: %s', (from, to, cause) => {
    expect(isAllowedTransition(from, to, cause)).toBe(true);
  });

  it.each(FORBIDDEN)('refuses %s → %s on %s: %s', (from, to, cause) => {
    expect(isAllowedTransition(from, to, cause)).toBe(false);
  });

  it('holds exactly the transitions listed above, each with its cause explained', () => {
    const inTable = ROUTE_PHASES.flatMap((from) =>
      ROUTE_PHASES.flatMap((to) => (PHASE_TRANSITIONS[from][to] ?? []).map((cause) => `${from} → ${to} on ${cause}`)),
    );
    expect(new Set(inTable).size).toBe(inTable.length);
    expect(new Set(inTable)).toEqual(new Set(ALLOWED.map(([from, to, cause]) => `${from} → ${to} on ${cause}`)));
  });

  it('reaches every phase from the requested model, and the requested model again from every phase', () => {
    const reachable = (start: RoutePhase, edges: (phase: RoutePhase) => RoutePhase[]) => {
      const seen = new Set<RoutePhase>([start]);
      const queue = [start];
      for (let phase = queue.shift(); phase !== undefined; phase = queue.shift()) {
        for (const next of edges(phase).filter((candidate) => !seen.has(candidate))) {
          seen.add(next);
          queue.push(next);
        }
      }
      return seen;
    };
    const forward = (phase: RoutePhase) => ROUTE_PHASES.filter((to) => (PHASE_TRANSITIONS[phase][to]?.length ?? 0) > 0);
    const backward = (phase: RoutePhase) => ROUTE_PHASES.filter((from) => (PHASE_TRANSITIONS[from][phase]?.length ?? 0) > 0);
    expect(reachable('requested', forward)).toEqual(new Set(ROUTE_PHASES));
    expect(reachable('requested', backward)).toEqual(new Set(ROUTE_PHASES));
  });
});

/**
 * A route's life as the worker and a person change it, step by step: each
 * step's phase before and after, read by `phaseOf`, must be a transition the
 * table allows for the step's cause.
 */
describe('a route through its life', () => {
  type State = { route: PhaseRoute; activity: PhaseActivity; now: number };
  const steps: Array<[string, PhaseCause, (state: State) => State, RoutePhase]> = [
    [
      'the first plan tests small and tiny',
      'plan',
      (state) => ({ ...state, activity: { ...state.activity, exploring: ['tiny', 'small'] } }),
      'exploring',
    ],
    ['small earns a share', 'split', (state) => ({ ...state, route: { ...state.route, split: split([['small', 0.3]]) } }), 'split'],
    ['the share grows', 'split', (state) => ({ ...state, route: { ...state.route, split: split([['small', 0.6]]) } }), 'split'],
    [
      'small is certified for the whole workload',
      'certified',
      (state) => ({ ...state, route: { ...state.route, servedModel: 'small', split: null } }),
      'certified',
    ],
    ['tiny, cheaper, is certified', 'certified', (state) => ({ ...state, route: { ...state.route, servedModel: 'tiny' } }), 'certified'],
    [
      'tiny goes unchecked too long',
      'unmonitored',
      (state) => ({
        ...state,
        route: { ...state.route, servedModel: 'big', cooldowns: { tiny: state.now + 600_000 } },
        activity: { exploring: [], probation: ['tiny'] },
      }),
      'unmonitored',
    ],
    ['monitoring may resume', 'cooldown_ended', (state) => ({ ...state, now: state.now + 600_001 }), 'requested'],
    [
      'tiny is back, its evidence kept',
      'certified',
      (state) => ({ ...state, route: { ...state.route, servedModel: 'tiny' }, activity: { exploring: [], probation: [] } }),
      'certified',
    ],
    [
      'the rollback detector demotes tiny',
      'demoted',
      (state) => ({ ...state, route: { ...state.route, servedModel: 'big', cooldowns: { tiny: state.now + 86_400_000 } } }),
      'cooling_down',
    ],
    [
      'small earns a share meanwhile',
      'split',
      (state) => ({ ...state, route: { ...state.route, split: split([['small', 0.4]]) } }),
      'split',
    ],
    ['a person pins big', 'pinned', (state) => ({ ...state, route: { ...state.route, pinnedModel: 'big' } }), 'pinned'],
    [
      'small is too slow, underneath the pin',
      'too_slow',
      (state) => ({
        ...state,
        route: { ...state.route, split: null, cooldowns: { ...state.route.cooldowns, small: state.now + 86_400_000 } },
      }),
      'pinned',
    ],
    ['the pin is removed', 'unpinned', (state) => ({ ...state, route: { ...state.route, pinnedModel: null } }), 'cooling_down'],
    [
      'the cooldowns end, both are tested again',
      'cooldown_ended',
      (state) => ({ ...state, now: state.now + 86_400_001, activity: { exploring: ['tiny', 'small'], probation: [] } }),
      'exploring',
    ],
    ['nothing is worth testing', 'plan', (state) => ({ ...state, activity: { exploring: [], probation: [] } }), 'requested'],
  ];

  it('moves only as the table allows', () => {
    let state: State = { route: base, activity: idle, now: NOW };
    for (const [name, cause, step, phase] of steps) {
      const from = phaseOf(state.route, state.activity, state.now);
      state = step(state);
      const to = phaseOf(state.route, state.activity, state.now);
      expect(to, name).toBe(phase);
      expect(isAllowedTransition(from, to, cause), `${name}: ${from} → ${to} on ${cause}`).toBe(true);
    }
  });
});
