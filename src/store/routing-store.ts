/**
 * The routing domain of the Store contract: eval contracts, the evidence the
 * router collects, routes with their certificates and history, pins, eval
 * spend and user feedback. Same rules as `store.ts` (epoch ms, account-scoped
 * lookups, idempotent writes).
 *
 * A workload is named by its scope (account, project slug, workload name), as
 * traces name it, so the hot path and the router never look up workload ids.
 */

import type { ProjectScope, Scope } from '../api/scope.js';

/** One version of a workload's eval contract (the JSON as validated by `parseEvalContract`). */
export interface StoredContract {
  version: number;
  /**
   * The version whose evidence this one uses: its own, or, when the checks did
   * not change, the one before's (evidence depends on the checks alone, so a
   * new pass rate, budget or sample rate keeps it). 0 is the default contract's.
   */
  evidenceVersion: number;
  contract: unknown;
  createdAt: number;
}

/** What made a model serve a workload: the evidence at the moment it was certified. */
export interface RouteCertificate {
  model: string;
  evaluated: number;
  passed: number;
  /** The anytime-valid lower bound on the pass rate, which reached `passRate`. */
  lower: number;
  passRate: number;
  confidence: number;
  contractVersion: number;
  at: number;
  /**
   * Set when the certificate is relative (a contract with `quality_bar`): the
   * model's quality was certified ≥ this × the requested model's by paired
   * comparison; then `evaluated` counts paired samples, `passed` those that
   * were not losses, and `lower` is the lower bound on E[c] − bar·E[r].
   */
  qualityBar?: number;
}

/**
 * The evidence for one model under one evidence version (`StoredContract.
 * evidenceVersion`). The requested model has a row of its own: its latency on
 * the workload, the yardstick of a candidate's.
 */
export interface CandidateCounts {
  requestedModel: string;
  candidateModel: string;
  contractVersion: number;
  /** Replies scored (passed or failed). Engine errors are not scores: they count in `errors` alone. */
  evaluated: number;
  passed: number;
  /** Replays that ended in an engine error or timeout. */
  errors: number;
  promptTokens: number;
  completionTokens: number;
  /** Eval spend on this candidate (replays), USD. */
  costUsd: number;
  latencyMsTotal: number;
  /** DDSketch (protobuf) of the replies' latencies in ms, null before the first. */
  latency: Uint8Array | null;
  /** DDSketch of the times to first token of streamed replies, null before the first. */
  ttft: Uint8Array | null;
  /** Paired comparisons with the requested model on the same calls (relative contracts); all zero before the first. */
  paired: PairedCounts;
  /** Replies scored by the contract's absolute checks alone (reference-free checks and rubric judges), and those that passed them. */
  constraintsEvaluated: number;
  constraintsPassed: number;
  updatedAt: number;
}

/** Paired outcomes of a candidate against the requested model on the same calls (routing/paired-quality.ts says what each means). */
export type PairedOutcomeName = 'same' | 'win' | 'loss' | 'tie';
/** How the requested model's own reply was graded on the sample: right, wrong, or not graded. */
export type RequestedGrade = 'right' | 'wrong' | 'ungraded';
/** Counts of paired samples by outcome and grade of the requested model's reply. */
export type PairedCounts = Record<PairedOutcomeName, Record<RequestedGrade, number>>;

export interface EvidenceDelta extends Pick<
  CandidateCounts,
  'evaluated' | 'passed' | 'errors' | 'promptTokens' | 'completionTokens' | 'costUsd' | 'latencyMsTotal'
> {
  /** One reply's latency to add to the sketch (null: none measured). */
  latencyMs?: number | null;
  ttftMs?: number | null;
  /** One paired sample to count. */
  paired?: { outcome: PairedOutcomeName; grade: RequestedGrade };
  /** Absolute-check results to add. */
  constraintsEvaluated?: number;
  constraintsPassed?: number;
}

export interface RouteRecord {
  scope: Scope;
  requestedModel: string;
  /** The model serving calls for `requestedModel` (itself until the router has evidence). */
  servedModel: string;
  /** Set by a person: serves whatever the router says. */
  pinnedModel: string | null;
  certificate: RouteCertificate | null;
  /** Models demoted by the rollback detector, and until when they may not be tested again. */
  cooldowns: Record<string, number>;
  /**
   * Certified models dearer than the served one, cheapest first: where the
   * inline guard re-asks a call whose reply failed (the requested model when
   * empty).
   */
  fallbacks: string[];
  /**
   * Shares of the calls drawn, one by one at random, to cheaper models (relative
   * contracts): the rest go to `servedModel`. Null when no share is certified.
   */
  split: RouteSplit | null;
  updatedAt: number;
}

/** A route's certified shares, and the evidence behind them (routing/workload-shares.ts). */
/** A frozen per-call policy as a route stores it (call-policy.ts `CallPolicy`, with its epoch and the share of calls it picks). */
export interface StoredCallPolicy {
  epoch: number;
  dimension: number;
  weights: number[];
  bias: number;
  threshold: number;
  routedShare: number;
}

export interface RouteSplit {
  /** Each share in (0, 1); together less than 1. */
  shares: Array<{
    model: string;
    share: number;
    /** Anytime-valid lower bound on E[c − r] on the workload. */
    diffLower: number;
    /** Paired samples behind it. */
    samples: number;
    /**
     * Set when the share rests on the pooled prior of the project's workloads
     * that ask the same model (routing/pooled-prior.ts), not on the
     * workload's own certificate: how many workloads and paired samples, and
     * their rate of samples that were not losses.
     */
    pooled?: { workloads: number; samples: number; notLossRate: number };
    /**
     * Set when the share is of the calls a per-call policy picks
     * (routing/policy-epochs.ts, call-policy.ts), not of all calls: a call
     * goes to `model` when the policy picks it (its predicted loss on the
     * request's features, routing/call-features.ts with the default options,
     * is at most `threshold`) and then with probability `share`. `epoch`:
     * the policy's number on the route; `routedShare`: the share of its
     * held-out samples it picks.
     */
    policy?: StoredCallPolicy;
  }>;
  /** Anytime-valid lower bound on the requested model's quality E[r]. */
  requestedLower: number;
  qualityBar: number;
  confidence: number;
  contractVersion: number;
  at: number;
}

/**
 * `demoted`: the rollback detector saw the pass rate drop; `too_slow`: the
 * serving model's latency drifted past the contract's limit; `unmonitored`:
 * the serving model could not be checked for too long (budget spent, judge or
 * reference down); `split`: the certified shares of cheaper models changed
 * (the serving model may stay the same); `contract_changed`: new checks, or a stricter pass rate.
 */
export type RouteChangeReason = 'certified' | 'split' | 'demoted' | 'too_slow' | 'unmonitored' | 'pinned' | 'unpinned' | 'contract_changed';

export interface RouteChange {
  requestedModel: string;
  fromModel: string;
  toModel: string;
  reason: RouteChangeReason;
  certificate: RouteCertificate | null;
  detail: string | null;
  at: number;
}

export interface Feedback {
  requestId: string;
  accountId: string;
  /** The model that served the call (from its trace). */
  model: string | null;
  project: string | null;
  workload: string | null;
  pass: boolean | null;
  score: number | null;
  comment: string | null;
  /** The evidence version it counted in as an evaluation of `model`; null when it did not count. */
  evidenceVersion: number | null;
  createdAt: number;
}

export interface ModelUsage {
  requestedModel: string;
  servedModel: string;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

/** How often a judge, judging the reference against a second reply of the reference, wrongly failed it. */
export interface JudgeCheckCounts {
  judgeModel: string;
  checks: number;
  falseLosses: number;
}

/**
 * The router leader's state of one route that must outlive the leader: its
 * rollback detector, probation, the calls since the serving model was last
 * checked, and the sampling rates followers use to pick the calls they hand
 * over. Opaque JSON to the store (the router encodes it).
 */
export interface RouterStateRecord {
  scope: Scope;
  requestedModel: string;
  state: string;
  updatedAt: number;
}

/**
 * A row as a poll reads it: the record as it is now, and the revision of its
 * last write. The database gives every write of a route (or a router state) a
 * revision, greater than that of every write that committed before it, so a
 * reader that asks for the rows after the highest revision it has seen misses
 * no write and never depends on a clock: `updatedAt` is the writing process's
 * clock, which may be seconds off another's, and a write's time says nothing of
 * when it committed. (PostgreSQL: a sequence taken under a lock held to the
 * commit; SQLite: a counter in the writing transaction. The migrations say how.)
 */
export interface Revised<Value> {
  record: Value;
  revision: number;
}

export interface RoutingStore {
  /** The newest contract version, or null when the workload uses the default. */
  getContract(scope: Scope): Promise<StoredContract | null>;
  /**
   * Stores the next version (1, 2, …) and returns it. `keepEvidence`: its
   * checks equal the version before's (the default's for version 1), so it
   * keeps that version's evidence version.
   */
  putContract(scope: Scope, contract: unknown, at: number, keepEvidence?: boolean): Promise<StoredContract>;

  /** Adds to a candidate's counts (created at zero the first time). */
  addEvidence(
    scope: Scope,
    requestedModel: string,
    candidateModel: string,
    contractVersion: number,
    delta: EvidenceDelta,
    at: number,
  ): Promise<void>;
  /** Forgets a candidate's counts (a demoted model starts testing afresh after its cooldown). */
  resetEvidence(scope: Scope, requestedModel: string, candidateModel: string, contractVersion: number): Promise<void>;
  /** Every candidate's counts for a requested model under one contract version. */
  listEvidence(scope: Scope, requestedModel: string, contractVersion: number): Promise<CandidateCounts[]>;
  /**
   * Every workload's counts for a requested model in one project, under every
   * evidence version, ordered by workload then candidate: the router pools
   * the evidence of a project's workloads that ask the same model (a prior
   * for a workload with little evidence of its own) and keeps each row whose
   * version is its workload's current one.
   */
  listProjectEvidence(scope: ProjectScope, requestedModel: string): Promise<Array<CandidateCounts & { workload: string }>>;

  /** Routes of one workload, by requested model. */
  listRoutes(scope: Scope): Promise<RouteRecord[]>;
  /**
   * Routes of every workload written after `revision` (0: every route), in
   * revision order, which is the order their writes committed in. Each process
   * polls this to refresh its route table, asking next after the last revision
   * it got.
   */
  listRoutesChangedAfter(revision: number): Promise<Array<Revised<RouteRecord>>>;
  /** Writes the route and, when `change` is given, one history row, atomically. */
  saveRoute(route: RouteRecord, change: RouteChange | null): Promise<void>;
  /**
   * Writes `route` only when its workload has no route for its requested
   * model yet, in one statement; returns the route the store holds after it
   * (`route`, or the one another process wrote first, such as a pin), so a
   * default route never overwrites a change it has not seen.
   */
  createRoute(route: RouteRecord): Promise<RouteRecord>;
  /** The last written first: the order the changes committed in, not their `at` (the writing process's clock). */
  listRouteChanges(scope: Scope, limit: number): Promise<RouteChange[]>;

  /**
   * Successful production calls of a workload grouped by requested name (as
   * sent) and served model, with their tokens and cost: what savings are
   * computed from.
   */
  usageByModel(scope: Scope): Promise<ModelUsage[]>;

  /** Eval spend of a workload on one UTC day (`YYYY-MM-DD`), USD, also added to the route's total. */
  addEvalSpend(scope: Scope, day: string, costUsd: number, requestedModel: string): Promise<void>;
  getEvalSpend(scope: Scope, day: string): Promise<number>;
  /** Eval spend of each route of a workload since it began, USD, by requested model. */
  evalSpendByRoute(scope: Scope): Promise<Record<string, number>>;

  /** One self-check of a judge: it judged two replies of the reference, and `falseLoss` says it failed one. */
  addJudgeCheck(scope: Scope, judgeModel: string, falseLoss: boolean): Promise<void>;
  listJudgeChecks(scope: Scope): Promise<JudgeCheckCounts[]>;

  /**
   * The router's samples, handed from the process that served a call to the
   * leader that evaluates it: a queue in the store. `body` is opaque JSON.
   * Pushing never blocks on the leader; a queue the leader cannot keep up
   * with is trimmed from its oldest end.
   */
  pushSamples(samples: ReadonlyArray<{ body: string; at: number }>): Promise<void>;
  /**
   * Takes up to `limit` of the oldest samples off the queue, for this caller
   * alone: two callers at once never get the same sample (PostgreSQL: `FOR
   * UPDATE SKIP LOCKED`). Oldest first.
   */
  takeSamples(limit: number): Promise<string[]>;
  /** Drops the oldest samples beyond the newest `keep`; returns how many were dropped. */
  trimSamples(keep: number): Promise<number>;

  /** Writes these routes' router state (insert or replace). */
  saveRouterStates(states: readonly RouterStateRecord[]): Promise<void>;
  /** Router states of every workload written after `revision` (0: all of them), in revision order (`listRoutesChangedAfter`). */
  listRouterStatesChangedAfter(revision: number): Promise<Array<Revised<RouterStateRecord>>>;

  /** One feedback per request id: a second replaces the first. */
  recordFeedback(feedback: Feedback): Promise<void>;
  getFeedback(accountId: string, requestId: string): Promise<Feedback | null>;
  /** A workload's feedback per served model: how many, passes, fails, and the mean score of those scored. */
  feedbackSummary(scope: Scope): Promise<Array<{ model: string; count: number; passed: number; failed: number; meanScore: number | null }>>;
}
