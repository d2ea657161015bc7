/**
 * What one workload's run of the relative default (paired-shares.ts) is
 * asked to do, what it reports, and what it reads of its project's pool:
 * kept apart from the loop so that file stays readable.
 */
import type { PairedEvidence } from '../../../src/routing/paired-quality.js';
import type { PoolFit } from '../../../src/routing/pooled-prior.js';
import type { RelativePolicy } from '../../../src/routing/split-decision.js';

export interface RouterRunPlan {
  calls: number;
  callsPerDay: number;
  /** The contract's `sample_rate`: fixed, or `auto` (the default). */
  sampleRate: number | 'auto';
}

export interface EvalSpend {
  /** Replays on Mixtral (exploration). */
  candidateReplays: number;
  /** Replays on GPT-4 as the reference of a call Mixtral served (monitoring, or exploring while Mixtral serves outright). */
  referenceReplays: number;
  verdicts: number;
  grades: number;
  /** Second GPT-4 replies for the judge's self-checks. */
  selfChecks: number;
}

export interface RelativeOutcome {
  /** Scored replies of Mixtral: exploration replays, monitoring checks. */
  samples: { exploration: number; monitoring: number };
  /** The last call an exploration replay was made on, or null. */
  lastExplorationCall: number | null;
  /** Exploration replays per day of the run. */
  daily: { exploration: number[] };
  /** At the end: the certified share of all calls (1 when Mixtral serves outright, since `wholeFromCall`; a policy's share × its routed share) and the bounds it rests on. */
  share: number;
  wholeFromCall: number | null;
  diffLower: number;
  requestedLower: number;
  firstSavingCall: number | null;
  requestedCost: number;
  production: number;
  spend: EvalSpend;
  maxDailyEvaluation: number;
  served: { right: number; requestedRight: number; rightLater: number; requestedRightLater: number };
  demotions: number;
  fallbacks: number;
  /** The grader's checks against the verdicts over the run, and the grade error the last decision used (null: grades dropped; gold grades: 0). */
  graderChecks: { compared: number; differed: number };
  gradeError: number | null;
  /** Mixtral's share of the route at each call (1 while it serves outright), averaged over the run's calls. */
  meanShare: number;
  /** Calls at which Mixtral's share rested on the project's pooled prior (a share carrying `pooled`). */
  priorCalls: number;
  /** With per-call policies (the variant's `perCall`) only. */
  perCall?: PerCallOutcome;
}

/** What a run with per-call policies did with them. */
export interface PerCallOutcome {
  /** The first call a policy's share served Mixtral, and how many it served. */
  firstPolicyCall: number | null;
  policyCalls: number;
  /** Checks of calls a policy sent Mixtral: entered the evidence (sampled for exploration while the plan tested Mixtral), or fed the rollback detector alone. */
  pickedChecks: { counted: number; uncounted: number };
  /** The policy the route serves at the end (its share is of the calls it picks; `routedShare` of its held-out samples it picked), or null. */
  policy: { epoch: number; share: number; routedShare: number; samples: number } | null;
  /** The certified policy that may save the most at the end, served or not: the share of all calls it may send, of its held-out samples it picks, and how many it was certified on; null when none may send any. */
  best: { epoch: number; callShare: number; routedShare: number; heldOut: number } | null;
  /** Policies made, and samples learned from, since Mixtral's evidence last started (a demotion forgets them). */
  policiesMade: number;
  learned: number;
}

/** What a run reads of its project's pool (paired-pool.ts): the pool's fit for the policy a decision uses, or null while it has none. */
export interface PoolView {
  fit(policy: RelativePolicy): PoolFit | null;
}

/** One workload's run, advanced a call at a time. */
export interface RelativeWorkloadRun {
  /** Serves call `call` (0, 1, 2, … in turn) and processes its sample, if any. */
  step(call: number): void;
  /** Its paired evidence as its own decision would read it now (without grades when its grader's error is too large). */
  evidence(): PairedEvidence;
  /** Its paired samples now (a demotion forgets them). */
  samples(): number;
  finish(): RelativeOutcome;
}
