/**
 * A route's router state as the leader writes it to the store
 * (`RouterStateRecord.state`): what a new leader needs to go on where the
 * last one stopped (the rollback detector, probation, the calls since the
 * serving model was last checked, the latency windows, the exploration plan
 * and the judges' self-check schedule), and what followers need to sample
 * the calls they serve and to show the route's activity (the last
 * decision's verdicts among it, so every process's routes view shows the
 * router's own judgement rather than one of its own). What stays per
 * process on purpose: dropped samples, eval spend and savings counted for
 * `/metrics` (each process reports its own, and Prometheus sums them).
 */
import type { CallShape } from './candidates.js';
import type { CusumState } from './cusum.js';
import type { ExplorationPlan } from './exploration.js';
import type { CandidateVerdict } from './route-decision.js';
import type { RouteState } from './router-context.js';
import type { JudgeCalibration } from './judge-ladder.js';

export interface RouteStateRecord {
  detector: CusumState | null;
  detectorModel: string | null;
  uncheckedCalls: number;
  probation: string[];
  monitoringProblem: string | null;
  plan: ExplorationPlan | null;
  planAt: number;
  /** The verdicts of the route's last decision (a record written before they were kept decodes with none). */
  verdicts: CandidateVerdict[];
  servedLatencies: number[];
  servedTtfts: number[];
  shape: CallShape | null;
  judges: Array<[string, { sameFamily: boolean }]>;
  lastJudge: string | null;
  /** Cheaper judges measured against the reference judge (absent from records of older leaders: none measured). */
  judgeCalibration?: JudgeCalibration;
  /** Graders measured against the judge's verdicts (absent from records of older leaders). */
  graderChecks?: JudgeCalibration;
  nextSelfCheckAt: number;
  judgeCostPerEval: number;
  judgedSamples: number;
  /** The route's calls per day across the fleet, as the leader counts them. */
  callsPerDay: number;
  /** Samples the leader dropped (its queue was full). */
  dropped: number;
}

export function encodeRouteState(state: RouteState, callsPerDay: number): string {
  const record: RouteStateRecord = {
    detector: state.detector,
    detectorModel: state.detectorModel,
    uncheckedCalls: state.uncheckedCalls,
    probation: [...state.probation],
    monitoringProblem: state.monitoringProblem,
    plan: state.plan,
    planAt: state.planAt,
    verdicts: state.verdicts,
    servedLatencies: state.servedLatencies,
    servedTtfts: state.servedTtfts,
    shape: state.shape,
    judges: [...state.judges],
    lastJudge: state.lastJudge,
    judgeCalibration: state.judgeCalibration,
    graderChecks: state.graderChecks,
    nextSelfCheckAt: state.nextSelfCheckAt,
    judgeCostPerEval: state.judgeCostPerEval,
    judgedSamples: state.judgedSamples,
    callsPerDay,
    dropped: state.dropped,
  };
  return JSON.stringify(record);
}

/** The record, or null when it is not one this version wrote (a new leader then starts the route afresh). */
export function decodeRouteState(text: string): RouteStateRecord | null {
  try {
    const record = JSON.parse(text) as Partial<RouteStateRecord>;
    if (typeof record.uncheckedCalls !== 'number' || !Array.isArray(record.probation) || !Array.isArray(record.judges)) return null;
    return { ...(record as RouteStateRecord), verdicts: Array.isArray(record.verdicts) ? record.verdicts.map(revivedVerdict) : [] };
  } catch {
    return null;
  }
}

/** Puts a stored record's fields into a route's state (a new leader taking over). */
export function restoreRouteState(state: RouteState, record: RouteStateRecord): void {
  state.detector = record.detector;
  state.detectorModel = record.detectorModel;
  state.uncheckedCalls = record.uncheckedCalls;
  state.probation = new Set(record.probation);
  state.monitoringProblem = record.monitoringProblem;
  state.plan = record.plan;
  state.planAt = record.planAt;
  state.verdicts = record.verdicts;
  state.servedLatencies = record.servedLatencies;
  state.servedTtfts = record.servedTtfts;
  state.shape = record.shape;
  state.judges = new Map(record.judges);
  state.lastJudge = record.lastJudge;
  state.judgeCalibration = { ...record.judgeCalibration };
  state.graderChecks = { ...record.graderChecks };
  state.nextSelfCheckAt = record.nextSelfCheckAt;
  state.judgeCostPerEval = record.judgeCostPerEval;
  state.judgedSamples = record.judgedSamples;
}

/** A route's record before the leader has written one. */
export function emptyRouteStateRecord(): RouteStateRecord {
  return {
    detector: null,
    detectorModel: null,
    uncheckedCalls: 0,
    probation: [],
    monitoringProblem: null,
    plan: null,
    planAt: 0,
    verdicts: [],
    servedLatencies: [],
    servedTtfts: [],
    shape: null,
    judges: [],
    lastJudge: null,
    judgeCalibration: {},
    graderChecks: {},
    nextSelfCheckAt: 1,
    judgeCostPerEval: 0,
    judgedSamples: 0,
    callsPerDay: 0,
    dropped: 0,
  };
}

/**
 * JSON writes an unbounded bound (a relative verdict's `lower` without a
 * share is −∞, its `upper` always +∞) as null: read back as the infinity it was.
 */
function revivedVerdict(
  verdict: Omit<CandidateVerdict, 'lower' | 'upper'> & { lower: number | null; upper: number | null },
): CandidateVerdict {
  return { ...verdict, lower: verdict.lower ?? Number.NEGATIVE_INFINITY, upper: verdict.upper ?? Number.POSITIVE_INFINITY };
}
