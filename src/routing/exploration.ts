/**
 * Exploration that pays for itself: which candidates are still worth
 * replaying on, and how many of a route's calls to sample for it. A pure
 * function of the evidence, the prices, the traffic and the budget.
 *
 * A candidate is worth testing while the saving it may bring beats what
 * testing it will cost. For each candidate still under test:
 *
 *   P      the chance it ends up certified: the posterior probability that
 *          its pass rate is at least `pass_rate` (a normal approximation of
 *          the Beta posterior under the router's threshold prior);
 *   evals  how many more scored replies its verdict needs: for a true rate m,
 *          a confidence sequence at level 1 - α crosses `pass_rate` after
 *          about ln(1/α) / KL(m ‖ pass_rate) evals (129 for 0.99 against 0.95,
 *          the simulation's median; 246 for 0.98), within the min and max
 *          samples, weighted by P for certification and 1 - P for elimination;
 *   gain   P × (what a call costs on the model serving now - on the
 *          candidate) × the calls left in the horizon once it is certified;
 *   cost   evals × (its replay + the judge's spend per eval), plus, for the
 *          samples, a reply of the reference when the reference does not
 *          serve (the calls' own replies are free when it does).
 *
 * The plan keeps the candidates whose gain beats their cost, drops the worst
 * until the whole plan (with the shared reference replies) has a positive
 * expected net, and stops exploring when nothing is left: a workload whose
 * remaining candidates save too little for their tests is no longer
 * sampled. The gain counts the calls the route actually had over the last
 * day (`callsSeen`), never an extrapolation, so a burst does not promise a
 * saving it cannot deliver; a new route whose first calls pay for no test
 * yet makes its plan again a few seconds later (`waitsForTraffic`).
 *
 * The rate of an `auto` contract is as high as the budget and a cap on
 * samples per day allow: the tests cost the same whenever they happen, so
 * the sooner they are done the longer the saving lasts.
 *
 *   - First evidence: while the requested model serves (its replies are
 *     the samples' references, for free) and a planned candidate has fewer
 *     than `min_samples` scored replies (a new workload, new checks, a model
 *     back from its cooldown), every call is sampled as long as the day's
 *     cap and budget have anything left, whatever the traffic. Once a
 *     cheaper model serves, each sample pays a reply of the reference (for a
 *     candidate whose engine is down, for nothing), so the rate is spread.
 *   - Then the cap and the budget left are spread over a day of the route's
 *     calls: min(1, cap / calls per day, budget left / (cost of a sample ×
 *     calls per day)). traffic-meter.ts never scales a route's first hour up
 *     to a day, so a burst is sampled at the highest rate until the samples
 *     taken today reach the cap (`samplesToday`) or the budget is spent;
 *     scaled up from its first minute, 16,000 calls in five minutes read as
 *     4.6 million a day and were sampled at 0.4%. The cap is what guards the
 *     replay workers, counted against the samples actually taken.
 *
 * A low-traffic workload is sampled on every call until it has its verdicts.
 *
 * A candidate whose replays would be skipped now (its model file missing,
 * its circuits open, resting after errors: `unavailable`) is assessed but
 * not planned: it neither raises the rate nor adds its cost, so a route
 * that has nothing else to test stops sampling instead of paying reference
 * replies for replays that never run. It is planned again once its rest is
 * over (replan-exploration.ts).
 */
import { thresholdPrior } from './confidence-sequence.js';
import type { CandidateVerdict, DecisionPolicy, RouteDecision } from './route-decision.js';
import { UNEXTRAPOLATED_MS } from './traffic-meter.js';

export interface ExplorationInput {
  policy: DecisionPolicy;
  decision: Pick<RouteDecision, 'toTest' | 'verdicts'>;
  /** USD a call costs on the model serving now. */
  servedCostPerCall: number;
  /** USD per sample for a reference reply: 0 while the requested model serves (the call's own reply is the reference). */
  referenceCostPerSample: number;
  /** USD of judge spend per scored candidate reply, as measured on this route (0 for checks decided by rule). */
  judgeCostPerEval: number;
  /** The route's production calls per day, as estimated (traffic-meter.ts: a young route's calls are not scaled up to a day): what the cap and the budget are spread over. */
  callsPerDay: number;
  /** Calls the route actually had over the last day: the gain's horizon counts these. Default `callsPerDay`. */
  callsSeen?: number;
  /** How far ahead a saving counts, in days. */
  horizonDays: number;
  /** The contract's `sample_rate` when it sets one; null for `auto`. */
  fixedRate: number | null;
  /** What exploring may still spend today, USD. */
  budgetLeftToday: number;
  /** Samples per day at most, so a burst of traffic does not flood the replay workers. */
  maxSamplesPerDay: number;
  /** Exploration samples taken today, counted against `maxSamplesPerDay`. Default 0. */
  samplesToday?: number;
  /**
   * Candidates whose replays would be skipped now (no replica can take one,
   * or resting after failed replays): left out of the plan, its rate and its
   * cost, until their rest is over. A sample taken for one of them alone
   * would pay a reference reply for nothing.
   */
  unavailable?: ReadonlySet<string>;
  /**
   * Relative contracts (split-decision.ts): per candidate, the share its
   * sample means would certify. A candidate's gain is then the share it may
   * still win over its certified one (`verdict.share`), and its tests as
   * many again as it has had (bounds narrow by about √2 when the evidence
   * doubles), or what `min_samples` still needs. Candidates are then tested
   * one at a time, the one that may still save the most per call first
   * (share it may still win × saving per call), if its tests pay: each
   * sample replays one model. While none has evidence (each may take the
   * whole workload) that is the cheapest; once the cheapest is seen to earn
   * only a share, a dearer one that may take it all comes next.
   */
  possibleShares?: ReadonlyMap<string, number>;
}

export interface PlannedCandidate {
  model: string;
  /** Probability it ends up certified (relative contracts: the share of the calls it may still win). */
  certifyChance: number;
  /** Scored replies its verdict still needs, expected. */
  evalsLeft: number;
  gainUsd: number;
  costUsd: number;
}

export interface ExplorationPlan {
  /** Candidates to replay on, cheapest first. Empty: nothing is worth its tests. */
  candidates: string[];
  /** Share of the route's production calls to sample; 0 when `candidates` is empty. */
  sampleRate: number;
  /** Expected saving of the plan over the horizon, net of its eval spend, USD. */
  expectedNetUsd: number;
  /** Every candidate under test, planned or not, with its figures (for the routes view). */
  assessed: PlannedCandidate[];
}

const NOTHING: Omit<ExplorationPlan, 'assessed'> = { candidates: [], sampleRate: 0, expectedNetUsd: 0 };

export function planExploration(input: ExplorationInput): ExplorationPlan {
  const testing = input.decision.toTest
    .map((model) => input.decision.verdicts.find((verdict) => verdict.model === model))
    .filter((verdict): verdict is CandidateVerdict => verdict !== undefined);
  if (testing.length === 0 || input.callsPerDay <= 0) return { ...NOTHING, assessed: [] };
  const available = testing.filter((verdict) => input.unavailable?.has(verdict.model) !== true);
  if (input.possibleShares === undefined) return planAmong(input, testing, available);
  // One candidate at a time: the one that may still save the most per call, if its tests pay (the cheapest while none has evidence).
  const stillToWin = (verdict: CandidateVerdict): number =>
    shareToWin(input, verdict) * Math.max(0, input.servedCostPerCall - verdict.costPerCall);
  for (const verdict of [...available].sort(
    (left, right) => stillToWin(right) - stillToWin(left) || left.costPerCall - right.costPerCall,
  )) {
    const plan = planAmong(input, testing, [verdict]);
    if (plan.candidates.length > 0) return plan;
  }
  return planAmong(input, testing, []);
}

/** The plan among `planned`: the worst dropped until the whole plan has a positive expected net; `testing` are all assessed. */
function planAmong(input: ExplorationInput, testing: readonly CandidateVerdict[], available: readonly CandidateVerdict[]): ExplorationPlan {
  const rate = (planned: readonly CandidateVerdict[]): number => sampleRateFor(input, planned);
  let planned = [...available];
  let assessed = testing.map((verdict) => assess(input, verdict, rate(planned)));
  for (;;) {
    const sampleRate = rate(planned);
    if (planned.length === 0 || sampleRate <= 0) return { ...NOTHING, assessed };
    assessed = testing.map((verdict) => assess(input, verdict, sampleRate));
    const figures = planned.map((verdict) => assessed.find((entry) => entry.model === verdict.model) as PlannedCandidate);
    const samples = Math.max(...figures.map((entry) => entry.evalsLeft));
    const net = figures.reduce((sum, entry) => sum + entry.gainUsd - entry.costUsd, 0) - samples * input.referenceCostPerSample;
    const worst = figures.reduce((low, entry) => (entry.gainUsd - entry.costUsd < low.gainUsd - low.costUsd ? entry : low));
    if (net > 0 && worst.gainUsd > worst.costUsd)
      return { candidates: planned.map((verdict) => verdict.model), sampleRate, expectedNetUsd: net, assessed };
    planned = planned.filter((verdict) => verdict.model !== worst.model);
  }
}

/**
 * Whether a plan that tests nothing only because the route is new should be
 * made again on a later call instead of being kept for the plan's lifetime.
 * A route in its first hour that finds no candidate worth its tests judged
 * that on the few calls it has had (the gain counts only those), and each
 * call adds to them, whichever model serves: a route that has just moved to
 * a cheaper model still has its next candidate to weigh on the calls to
 * come. Making a plan costs no replay. Without this, a route's first call
 * (or its first call after a switch) would stop its exploration for the
 * plan's lifetime: a whole burst.
 */
export function waitsForTraffic(plan: ExplorationPlan, route: { ageMs: number }): boolean {
  return plan.candidates.length === 0 && plan.assessed.length > 0 && route.ageMs < UNEXTRAPOLATED_MS;
}

function costPerSample(input: ExplorationInput, planned: readonly CandidateVerdict[]): number {
  return input.referenceCostPerSample + planned.reduce((sum, verdict) => sum + verdict.costPerCall + input.judgeCostPerEval, 0);
}

function sampleRateFor(input: ExplorationInput, planned: readonly CandidateVerdict[]): number {
  if (input.fixedRate !== null) return input.fixedRate;
  const perSample = costPerSample(input, planned);
  if (input.maxSamplesPerDay - (input.samplesToday ?? 0) <= 0 || (perSample > 0 && input.budgetLeftToday <= 0)) return 0;
  // First evidence, while its samples cost no reply of the reference: the sooner it is in, the sooner the plan knows.
  if (input.referenceCostPerSample === 0 && planned.some((verdict) => verdict.evaluated < input.policy.minSamples)) return 1;
  const affordable = perSample > 0 ? input.budgetLeftToday / (perSample * input.callsPerDay) : Infinity;
  return Math.max(0, Math.min(1, input.maxSamplesPerDay / input.callsPerDay, affordable));
}

function assess(input: ExplorationInput, verdict: CandidateVerdict, sampleRate: number): PlannedCandidate {
  if (input.possibleShares?.has(verdict.model) === true) return assessShare(input, verdict, sampleRate);
  const { policy } = input;
  const prior = policy.prior ?? thresholdPrior(policy.passRate);
  const weight = prior.alpha + prior.beta + verdict.evaluated;
  const mean = (prior.alpha + verdict.passed) / weight;
  const spread = Math.sqrt((mean * (1 - mean)) / (weight + 1));
  const certifyChance = spread === 0 ? (mean >= policy.passRate ? 1 : 0) : 1 - normalCdf((policy.passRate - mean) / spread);
  const toVerdict = evalsToVerdict(mean, policy);
  const evalsLeft = Math.max(
    1,
    certifyChance * Math.max(toVerdict.certify - verdict.evaluated, 1) +
      (1 - certifyChance) * Math.max(toVerdict.eliminate - verdict.evaluated, 1),
  );
  const saving = Math.max(0, input.servedCostPerCall - verdict.costPerCall);
  const callsUntilVerdict = sampleRate > 0 ? evalsLeft / sampleRate : Infinity;
  const callsAfter = Math.max(0, (input.callsSeen ?? input.callsPerDay) * input.horizonDays - callsUntilVerdict);
  return {
    model: verdict.model,
    certifyChance,
    evalsLeft,
    gainUsd: certifyChance * saving * callsAfter,
    costUsd: evalsLeft * (verdict.costPerCall + input.judgeCostPerEval),
  };
}

/**
 * The share of the calls a relative candidate may still win: what its
 * sample means would certify, within the calls no cheaper candidate holds
 * (moving a cheaper one's share to it would save less), less what it holds.
 */
function shareToWin(input: ExplorationInput, verdict: CandidateVerdict): number {
  const heldBelow = input.decision.verdicts
    .filter((other) => other.costPerCall < verdict.costPerCall)
    .reduce((sum, other) => sum + (other.share ?? 0), 0);
  return Math.max(0, Math.min(input.possibleShares?.get(verdict.model) ?? 0, 1 - heldBelow) - (verdict.share ?? 0));
}

/** A relative candidate: what a larger share would save, against as many tests again. */
function assessShare(input: ExplorationInput, verdict: CandidateVerdict, sampleRate: number): PlannedCandidate {
  const evalsLeft = verdict.evaluated < input.policy.minSamples ? input.policy.minSamples - verdict.evaluated : verdict.evaluated;
  const more = shareToWin(input, verdict);
  const callsUntilMore = sampleRate > 0 ? evalsLeft / sampleRate : Infinity;
  const callsAfter = Math.max(0, (input.callsSeen ?? input.callsPerDay) * input.horizonDays - callsUntilMore);
  return {
    model: verdict.model,
    certifyChance: more,
    evalsLeft,
    gainUsd: more * Math.max(0, input.servedCostPerCall - verdict.costPerCall) * callsAfter,
    costUsd: evalsLeft * (verdict.costPerCall + input.judgeCostPerEval),
  };
}

/**
 * Evals until a verdict for a model whose true rate is `mean`: to its
 * certification when it is above the pass rate, to its elimination when
 * below. The other branch (the posterior's chance of being wrong about the
 * side) is priced as a model as far on the other side as the pass rate's
 * failure share: 0.90 for a 0.95 contract, 0.975 the other way.
 */
export function evalsToVerdict(
  mean: number,
  policy: Pick<DecisionPolicy, 'passRate' | 'confidence' | 'minSamples' | 'maxSamples'>,
): { certify: number; eliminate: number } {
  const margin = 1 - policy.passRate;
  const evals = (rate: number) => {
    const divergence = bernoulliDivergence(rate, policy.passRate);
    return Math.min(policy.maxSamples, divergence > 0 ? Math.log(1 / (1 - policy.confidence)) / divergence : Infinity);
  };
  const above = mean > policy.passRate ? mean : policy.passRate + margin / 2;
  const below = mean < policy.passRate ? mean : policy.passRate - margin;
  return { certify: Math.max(policy.minSamples, evals(above)), eliminate: Math.max(1, evals(below)) };
}

/** KL(Bernoulli(p) ‖ Bernoulli(q)), in nats. */
export function bernoulliDivergence(p: number, q: number): number {
  const term = (a: number, b: number) => (a <= 0 ? 0 : a * Math.log(a / b));
  return term(p, q) + term(1 - p, 1 - q);
}

/** Φ, by the Abramowitz-Stegun 7.1.26 approximation of erf (error below 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}
