/**
 * What the router worker's parts share: their dependencies, the router's
 * settings, and the state it keeps in memory per route (the rollback
 * detector, how long the serving model has gone unchecked, the exploration
 * plan, recent production latencies of the serving model) and per model (the
 * backoff after replay errors). The evidence itself lives in the store.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { ModelPool } from '../engines/engine-pool.js';
import type { Logger } from '../log/logger.js';
import type { CachedPoolFit } from './project-prior.js';
import type { CandidatePolicies } from './route-policies.js';
import type { Scope } from '../api/scope.js';
import type { RoutingStore } from '../store/routing-store.js';
import type { CallShape } from './candidates.js';
import type { CusumState } from './cusum.js';
import type { ExplorationPlan } from './exploration.js';
import type { JudgeCalibration } from './judge-ladder.js';
import type { PriceOf } from './model-prices.js';
import type { CandidateVerdict } from './route-decision.js';
import type { ReplayGate } from './replay-gate.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { scopeKey, type RouteTable } from './route-table.js';
import type { TrafficMeter } from './traffic-meter.js';

export interface RouterSettings {
  /** Share of a routed model's calls also scored against the reference, feeding the rollback detector. */
  shadowRate: number;
  /** Share of the daily eval budget kept for those checks: exploring stops at the rest. */
  monitorBudgetShare: number;
  /** Routed calls served without a successful check before the route falls back. */
  maxUnmonitoredCalls: number;
  /** How long a route that fell back for lack of monitoring waits before its model may serve again (a spent budget waits for the next UTC day). */
  unmonitoredRetryMs: number;
  /** How long a model demoted for quality or latency stays out before it is tested again from zero. */
  cooldownMs: number;
  /** How far ahead a saving counts when weighing a test. */
  horizonDays: number;
  maxSamplesPerDay: number;
  /** An exploration plan older than this is made again on the next call. */
  planTtlMs: number;
  /** After a replay error the model rests this long, doubling up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Recent production latencies of the serving model kept to catch a drift. */
  latencyWindow: number;
  /** Samples processed at once. */
  workers: number;
  /** One judged sample in this many also judges the reference against itself. */
  judgeSelfCheckEvery: number;
  /**
   * Relative contracts: the share of agreeing samples whose reference reply a
   * judge grades on its own (ties are always graded). The grades are what
   * bounds the requested model's quality, which sets the slack a share may
   * spend; a random share of them is as good an estimate at a fraction of
   * the judge spend.
   */
  gradeShare: number;
  /** Relative contracts: every agreement is graded until a candidate's evidence holds this many graded agreements. */
  gradeAllAgreementsUntil: number;
  /** Share of the reference judge's verdicts also asked of a cheaper judge being measured (judge-ladder.ts). */
  judgeCalibrationShare: number;
  /** Share of the win and loss verdicts on which the grader also grades the requested model's reply, to measure the grader (judge-error.ts). */
  graderCheckShare: number;
  replayTimeoutMs: number;
}

export const DEFAULT_ROUTER_SETTINGS: RouterSettings = {
  shadowRate: 0.05,
  monitorBudgetShare: 0.5,
  maxUnmonitoredCalls: 1_000,
  unmonitoredRetryMs: 10 * 60_000,
  cooldownMs: 24 * 60 * 60 * 1000,
  horizonDays: 30,
  maxSamplesPerDay: 20_000,
  planTtlMs: 10 * 60_000,
  backoffMs: 5_000,
  maxBackoffMs: 60_000,
  latencyWindow: 200,
  workers: 4,
  judgeSelfCheckEvery: 20,
  gradeShare: 0.2,
  gradeAllAgreementsUntil: 100,
  judgeCalibrationShare: 0.25,
  graderCheckShare: 0.2,
  replayTimeoutMs: 120_000,
};

/** In-memory state of one (workload, requested model). */
export interface RouteState {
  scope: Scope;
  requestedModel: string;
  /** The rollback detector of `detectorModel` (reset when another model serves). */
  detector: CusumState | null;
  detectorModel: string | null;
  /** Routed calls since the serving model was last scored. */
  uncheckedCalls: number;
  /**
   * Models that left this route unchecked (`unmonitored`): their evidence is
   * older than the gap, so when one serves again its detector starts halfway
   * to the alarm, and a model that degraded meanwhile is caught twice as fast.
   */
  probation: Set<string>;
  /** Why the last check of the serving model could not be made. */
  monitoringProblem: string | null;
  plan: ExplorationPlan | null;
  planAt: number;
  /** The verdicts of the route's last decision (with the plan), as the router judged its candidates: what the routes view shows. */
  verdicts: CandidateVerdict[];
  /** When a call was last sampled to make a plan. */
  planAskedAt: number;
  /** Recent production latencies (and times to first token) of the serving model, newest last. */
  servedLatencies: number[];
  servedTtfts: number[];
  /** The last sampled call's shape: what costs per call are computed for. */
  shape: CallShape | null;
  /** Judges used on this route, and whether each was of a candidate's own family (flagged in the routes view). */
  judges: Map<string, { sameFamily: boolean }>;
  /** The judge of the last judged reply: the one the self-checks measure. */
  lastJudge: string | null;
  /** Cheaper judges measured against the reference judge (judge-ladder.ts). */
  judgeCalibration: JudgeCalibration;
  /** Graders measured against the judge's win and loss verdicts (judge-error.ts). */
  graderChecks: JudgeCalibration;
  /** Judged samples at which the next self-check of the judge is due. */
  nextSelfCheckAt: number;
  /** Judge spend per scored candidate reply, smoothed. */
  judgeCostPerEval: number;
  judgedSamples: number;
  /** Samples dropped because the queue was full. */
  dropped: number;
  /** In this process: eval spend, and what routed calls cost less than on the requested model, USD. */
  evalSpendUsd: number;
  savedUsd: number;
  /** A fallback or demotion is being written: do not start another. */
  changing: boolean;
  /** Per candidate, its per-call policies (contracts with `per_call`; route-policies.ts). */
  policies: Map<string, CandidatePolicies>;
}

export interface RouterContext {
  routing: RoutingStore;
  routes: RouteTable;
  catalog: Catalog;
  pools: ReadonlyMap<string, ModelPool>;
  logger: Logger;
  gate: ReplayGate;
  /** Each replay and judge call is a span of its own (a trace linked to the call it replays). */
  telemetry: Telemetry;
  traffic: TrafficMeter;
  settings: RouterSettings;
  /** The price candidates are ranked and compared by (`routing.cost`: catalog or measured). */
  priceOf: PriceOf;
  isBusy: (modelId: string) => boolean;
  random: () => number;
  now: () => number;
  /** Aborted when the worker closes. */
  signal: AbortSignal;
  states: Map<string, RouteState>;
  /** Replay backoff per model: consecutive failures, and until when it rests. */
  backoffs: Map<string, { failures: number; until: number }>;
  /** Fits of the projects' pooled priors (project-prior.ts), by pool. */
  poolFits: Map<string, CachedPoolFit>;
}

export function routeKey(scope: Scope, requestedModel: string): string {
  return `${scopeKey(scope)}\u0000${requestedModel}`;
}

/** The route's state, made on first use; `key` is its `routeKey`, when the caller has it already. */
export function routeState(
  context: RouterContext,
  scope: Scope,
  requestedModel: string,
  key = routeKey(scope, requestedModel),
): RouteState {
  let state = context.states.get(key);
  if (state === undefined) {
    state = {
      scope,
      requestedModel,
      detector: null,
      detectorModel: null,
      uncheckedCalls: 0,
      probation: new Set(),
      monitoringProblem: null,
      plan: null,
      planAt: 0,
      verdicts: [],
      planAskedAt: -Infinity,
      servedLatencies: [],
      servedTtfts: [],
      shape: null,
      judges: new Map(),
      lastJudge: null,
      judgeCalibration: {},
      graderChecks: {},
      nextSelfCheckAt: 1,
      judgeCostPerEval: 0,
      judgedSamples: 0,
      policies: new Map(),
      dropped: 0,
      evalSpendUsd: 0,
      savedUsd: 0,
      changing: false,
    };
    context.states.set(key, state);
  }
  return state;
}

/** A route without a fresh plan samples one call to make it, then waits this long before asking again. */
const PLAN_RETRY_MS = 5_000;

/**
 * The share of a route's calls to sample for exploration: a fixed rate, or
 * the rate of the route's fresh plan. With no plan, or an old one (traffic and
 * cooldowns change), one call is sampled to make a new one, then none for
 * `PLAN_RETRY_MS`. `view.planAskedAt` records that call.
 */
export function explorationRate(
  view: Pick<RouteState, 'plan' | 'planAt' | 'planAskedAt'>,
  fixed: number | 'auto',
  now: number,
  settings: Pick<RouterSettings, 'planTtlMs'>,
): number {
  const fresh = view.plan !== null && now - view.planAt <= settings.planTtlMs;
  const nothingToTest = fresh && view.plan?.candidates.length === 0;
  // A fixed rate samples at that rate (each sample remakes the plan first); a fresh plan with nothing to test stops it.
  if (fixed !== 'auto') return nothingToTest ? 0 : fixed;
  if (!fresh && now - view.planAskedAt > PLAN_RETRY_MS) {
    view.planAskedAt = now;
    return 1;
  }
  return view.plan === null || view.plan.candidates.length === 0 ? 0 : view.plan.sampleRate;
}

/** Appends to a window of at most `size` values. */
export function remember(window: number[], value: number | null | undefined, size: number): void {
  if (value === null || value === undefined) return;
  window.push(value);
  if (window.length > size) window.splice(0, window.length - size);
}

/** The UTC day of a time, `YYYY-MM-DD`: eval budgets are per day. */
export function dayOf(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The next UTC midnight after `at`. */
export function nextDayStart(at: number): number {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
}
