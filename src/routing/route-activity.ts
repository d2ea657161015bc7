/**
 * What the routes view shows of a route's life in the router: the same
 * fields whether this process leads the router (its own in-memory state) or
 * follows it (the leader's state as last written to the store,
 * router-state-record.ts). `activityOf` is the one mapping both use, so a
 * follower's view cannot drift from the leader's.
 */
import type { ExplorationPlan } from './exploration.js';
import type { CandidateVerdict } from './route-decision.js';

export interface RouteActivity {
  /** Share of calls sampled to explore; null before the first plan. */
  sampleRate: number | null;
  /** Candidates the plan replays on, and the net saving it expects over the horizon. */
  exploring: string[];
  /** Every candidate the plan weighed, tested or not. */
  assessed: string[];
  expectedNetUsd: number | null;
  callsPerDay: number;
  /** Routed calls since the serving model was last checked, and why a check failed. */
  uncheckedCalls: number;
  monitoringProblem: string | null;
  /** Samples of this route dropped because the queue was full. */
  droppedSamples: number;
  /** Judges used, and whether one shared a candidate's family. */
  judges: Array<{ model: string; sameFamily: boolean }>;
  /**
   * The verdicts of the router's last decision on the route, in its order
   * (cheapest first by its cost per call): what the routes view renders.
   * Empty until the router has decided (or from a leader older than them).
   */
  verdicts: CandidateVerdict[];
  /** Models that left the route unchecked (`unmonitored`) and have not served since: a cooldown of one of them is a wait for monitoring, not a demotion. */
  probation: string[];
}

/** The fields of a route's router state the activity is made of: `RouteState` (a Map of judges) and `RouteStateRecord` (an array) both fit. */
export interface ActivitySource {
  plan: ExplorationPlan | null;
  uncheckedCalls: number;
  monitoringProblem: string | null;
  dropped: number;
  judges: Iterable<readonly [string, { sameFamily: boolean }]>;
  verdicts: readonly CandidateVerdict[];
  probation: Iterable<string>;
}

export function activityOf(source: ActivitySource, callsPerDay: number): RouteActivity {
  const { plan } = source;
  return {
    sampleRate: plan === null ? null : plan.candidates.length === 0 ? 0 : plan.sampleRate,
    exploring: plan?.candidates ?? [],
    assessed: plan?.assessed.map((entry) => entry.model) ?? [],
    expectedNetUsd: plan?.expectedNetUsd ?? null,
    callsPerDay,
    uncheckedCalls: source.uncheckedCalls,
    monitoringProblem: source.monitoringProblem,
    droppedSamples: source.dropped,
    judges: [...source.judges].map(([model, judge]) => ({ model, sameFamily: judge.sameFamily })),
    verdicts: [...source.verdicts],
    probation: [...source.probation],
  };
}
