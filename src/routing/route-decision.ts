/**
 * Which model serves a (workload, requested model): a pure function of the
 * candidates' evidence and the workload's eval contract.
 *
 * A candidate is `certified` once the anytime-valid lower bound on its pass
 * rate (confidence-sequence.ts) reaches the contract's pass rate after at
 * least `minSamples` evals; `eliminated` once the upper bound falls below the
 * pass rate, or after `maxSamples` evals without certification; `testing`
 * otherwise. The cheapest certified candidate that is cheaper than the
 * requested model and not cooling down serves; with none, the requested model
 * serves itself.
 *
 * Because the bounds hold at every n at once, the worker may call this after
 * every sample: a model whose true rate is exactly the pass rate is certified
 * with probability at most 1 - confidence, however long it is tested.
 *
 * The verdicts are recomputed from the counts every time, so the counts must
 * mean "evidence under the contract in force, gathered since the model last
 * re-entered testing": a model demoted by the rollback detector must start
 * again from zero after its cooldown, or its old counts would certify it at
 * once. A changed contract starts every count again for the same reason.
 */
import { passRateBounds, thresholdPrior, type BetaPrior } from './confidence-sequence.js';
import type { LatencyVerdict } from './latency-limit.js';

export interface DecisionPolicy {
  /** The contract's pass rate: the lowest acceptable true pass rate. */
  passRate: number;
  /** Level of the confidence sequence (0.95: a model at exactly `passRate` is certified in at most 5% of workloads). */
  confidence: number;
  /** No certification before this many evals, whatever the bound says. */
  minSamples: number;
  /** A candidate still uncertified after this many evals is eliminated: near-threshold models would otherwise be tested forever. */
  maxSamples: number;
  /** Mixing prior of the confidence sequence; `thresholdPrior(passRate)` when omitted. */
  prior?: BetaPrior;
}

/**
 * The decision's defaults (contract fields `pass_rate`, `confidence`,
 * `min_samples`; `maxSamples` is a router setting), tuned with the
 * simulation in bench/router (see docs/routing.md for the figures). The
 * worker's own settings (shadow rate, budgets, cooldowns) are in
 * router-context.ts.
 */
export const DEFAULT_ROUTING = {
  passRate: 0.95,
  confidence: 0.95,
  minSamples: 50,
  maxSamples: 3_000,
} as const;

export const DEFAULT_POLICY: DecisionPolicy = {
  passRate: DEFAULT_ROUTING.passRate,
  confidence: DEFAULT_ROUTING.confidence,
  minSamples: DEFAULT_ROUTING.minSamples,
  maxSamples: DEFAULT_ROUTING.maxSamples,
};

export interface CandidateEvidence {
  model: string;
  /** Expected USD per call on this workload (from the candidate's price and the workload's observed tokens); orders candidates. */
  costPerCall: number;
  /** Replies scored under the contract's checks since the model (re-)entered testing. */
  evaluated: number;
  passed: number;
  /**
   * Replays that ended in an engine error or timeout. An outage is not a
   * verdict on quality: they are not in `evaluated`, and change nothing here
   * (the worker backs off and tries again once the engine recovers).
   */
  errors: number;
  /** Its latency against the contract's limits (latency-limit.ts); absent: no limit applies. */
  latency?: LatencyVerdict;
  /** Demoted by the rollback detector and still cooling down: cannot serve. */
  coolingDown?: boolean;
  /**
   * Certified earlier under this contract and still serving. Certification is
   * a one-time decision (the running lower bound of a confidence sequence may
   * be kept at its maximum): later evidence does not take it back, so the
   * route does not flap as the bound wanders near the threshold. Only the
   * rollback detector or an upper bound below the pass rate removes it.
   */
  certified?: boolean;
}

export type CandidateState = 'testing' | 'certified' | 'eliminated';

export interface CandidateVerdict {
  model: string;
  state: CandidateState;
  /** Why an eliminated candidate is out, or what a testing one waits for, when it is not its pass rate. */
  reason?: string;
  lower: number;
  upper: number;
  evaluated: number;
  passed: number;
  costPerCall: number;
  /**
   * Relative contracts (split-decision.ts): the candidate's certified share of
   * the workload's calls, and `lower` is then the lower bound on E[c − r]
   * (`upper` is not bounded), `evaluated` counts paired samples and `passed`
   * those that were not losses.
   */
  share?: number;
  /** Copied from the evidence: a cooling-down candidate neither serves nor is tested. */
  coolingDown?: boolean;
}

export interface RouteDecision {
  /** The model that should serve: the cheapest certified candidate, else the requested model. */
  servedModel: string;
  /** The evidence for servedModel (null when it is the requested model). */
  certificate: {
    model: string;
    evaluated: number;
    passed: number;
    lower: number;
    passRate: number;
    confidence: number;
    qualityBar?: number;
  } | null;
  /** Cheapest first. */
  verdicts: CandidateVerdict[];
  /** Candidates still worth sampling (testing, cheaper than the served model), cheapest first: what the worker should replay on next. */
  toTest: string[];
}

/**
 * A candidate too slow for the contract is out whatever its pass rate; one
 * whose latency is not known yet may be eliminated on quality but not
 * certified.
 */
export function judgeCandidate(evidence: CandidateEvidence, policy: DecisionPolicy): CandidateVerdict {
  const { lower, upper } = passRateBounds(evidence.evaluated, evidence.passed, policy.confidence, {
    prior: policy.prior ?? thresholdPrior(policy.passRate),
  });
  const latency = evidence.latency ?? { state: 'ok' };
  let state: CandidateState = 'testing';
  let reason: string | undefined;
  if (upper < policy.passRate) state = 'eliminated';
  else if (latency.state === 'too_slow') [state, reason] = ['eliminated', latency.reason];
  else if (evidence.certified === true || (lower >= policy.passRate && evidence.evaluated >= policy.minSamples && latency.state === 'ok'))
    state = 'certified';
  else if (evidence.evaluated >= policy.maxSamples) [state, reason] = ['eliminated', `not certified within ${policy.maxSamples} evals`];
  else if (latency.state === 'unknown' && lower >= policy.passRate) reason = latency.reason;
  const verdict: CandidateVerdict = {
    model: evidence.model,
    state,
    lower,
    upper,
    evaluated: evidence.evaluated,
    passed: evidence.passed,
    costPerCall: evidence.costPerCall,
  };
  if (reason !== undefined) verdict.reason = reason;
  if (evidence.coolingDown === true) verdict.coolingDown = true;
  return verdict;
}

export function decideRoute(input: {
  requestedModel: string;
  requestedCostPerCall: number;
  candidates: CandidateEvidence[];
  policy: DecisionPolicy;
}): RouteDecision {
  const verdicts = input.candidates
    .filter((candidate) => candidate.model !== input.requestedModel)
    .map((candidate) => judgeCandidate(candidate, input.policy));
  return routeFromVerdicts({
    requestedModel: input.requestedModel,
    requestedCostPerCall: input.requestedCostPerCall,
    verdicts,
    policy: input.policy,
  });
}

/**
 * The choice `decideRoute` makes, from verdicts already judged: lets a
 * comparison (bench/router's naive rule) judge candidates its own way and
 * still choose exactly as the router does.
 *
 * Only candidates strictly cheaper than the requested model serve or are
 * tested: one costing the same saves nothing and one costing more is never
 * chosen. They stay in `verdicts` so a dashboard can show them.
 */
export function routeFromVerdicts(input: {
  requestedModel: string;
  requestedCostPerCall: number;
  verdicts: CandidateVerdict[];
  policy: Pick<DecisionPolicy, 'passRate' | 'confidence'>;
}): RouteDecision {
  const verdicts = [...input.verdicts].sort((left, right) => left.costPerCall - right.costPerCall || left.model.localeCompare(right.model));
  const usable = verdicts.filter((verdict) => verdict.costPerCall < input.requestedCostPerCall && verdict.coolingDown !== true);
  const served = usable.find((verdict) => verdict.state === 'certified');
  const servedCost = served?.costPerCall ?? input.requestedCostPerCall;
  return {
    servedModel: served?.model ?? input.requestedModel,
    certificate:
      served === undefined
        ? null
        : {
            model: served.model,
            evaluated: served.evaluated,
            passed: served.passed,
            lower: served.lower,
            passRate: input.policy.passRate,
            confidence: input.policy.confidence,
          },
    verdicts,
    toTest: usable.filter((verdict) => verdict.state === 'testing' && verdict.costPerCall < servedCost).map((verdict) => verdict.model),
  };
}
