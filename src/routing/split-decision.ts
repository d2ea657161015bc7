/**
 * Which models serve a workload under a relative contract (`quality_bar`):
 * a pure function of the candidates' paired evidence against the requested
 * model R, their absolute checks, their latency and their prices.
 *
 * The route is a split: each call is drawn, one by one at random, to a
 * cheaper candidate with its certified share, else served by R. The shares
 * are the ones that save the most while the workload's quality stays
 * certified ≥ quality_bar × R's (workload-shares.ts `certifiedShares`: the
 * bounds split α over every candidate on the list, one more for E[r]). A
 * candidate whose certified share is the whole workload serves it outright:
 * the route's `servedModel`, with a relative certificate.
 *
 * What keeps a candidate from any share, whatever its paired evidence:
 *   - its absolute checks (reference-free checks, rubric judges): once it
 *     has been scored on any, their anytime-valid lower bound must reach the
 *     contract's `pass_rate`, as every serving model must pass them itself;
 *   - its latency, too slow or not yet known (latency-limit.ts);
 *   - a cooldown after the rollback detector demoted it;
 *   - fewer than `min_samples` paired samples.
 * Such a candidate stays on the list with no saving, so α is split over the
 * same list whatever the outcomes (the list is the contract's eligible
 * candidates: catalog, prices, engines).
 *
 * The shares are recomputed from the counts every time: the bounds hold at
 * every n at once, so the route may follow them after every sample, growing
 * with evidence; drift is the rollback detector's to catch, and a demotion
 * resets the model's counts, which takes its share back to 0 at once.
 *
 * Which samples count: a random sample of the workload's calls, whichever
 * model served them (a split route's draw is random too), and the judge's
 * and grader's error rates are upper bounds (paired-quality.ts says why).
 */
import { passRateBounds, thresholdPrior } from './confidence-sequence.js';
import type { LatencyVerdict } from './latency-limit.js';
import {
  DIFF_RANGE,
  emptyPairedEvidence,
  pairedSampleCount,
  sampleValues,
  type PairedEvidence,
  type QualityBarContract,
} from './paired-quality.js';
import type { RouteSplit, StoredCallPolicy } from '../store/routing-store.js';
import type { CandidateVerdict, RouteDecision } from './route-decision.js';
import type { PriorShare } from './pooled-prior.js';
import type { OfferedPolicy } from './route-policies.js';
import { certifiedShares, shareFromBounds } from './workload-shares.js';

/**
 * A second model takes a share only when it adds this much (a fraction) to
 * the saving of the best model alone: each model serving a share is one
 * more to watch, and it spends the slack of the bar on worse replies. A
 * coin-flip model beside one as good as the requested model would save a
 * few tenths of a percent more.
 */
export const MIN_PAIR_GAIN = 0.05;

export interface RelativeEvidence {
  model: string;
  /** Expected USD per call on this workload. */
  costPerCall: number;
  paired: PairedEvidence;
  /** Replies scored by the absolute checks alone, and passed. */
  constraintsEvaluated: number;
  constraintsPassed: number;
  /** Replays that failed (not a verdict). */
  errors: number;
  latency?: LatencyVerdict;
  coolingDown?: boolean;
}

export interface RelativePolicy extends QualityBarContract {
  /** The pass rate of the absolute checks. */
  passRate: number;
  minSamples: number;
}

export interface SplitShare {
  model: string;
  share: number;
  diffLower: number;
  samples: number;
  /** Set when the share rests on the project's pooled prior (pooled-prior.ts), not on the workload's own certificate. */
  pooled?: PooledBasis;
  /** Set when the share is of the calls a per-call policy picks (route-policies.ts). */
  policy?: StoredCallPolicy;
}

/** What a prior's share rests on: the pool's workloads and samples, and its not-loss rate (the rollback detector's healthy rate until the workload's own evidence can tell). */
export type PooledBasis = NonNullable<RouteSplit['shares'][number]['pooled']>;

export interface SplitDecision extends RouteDecision {
  /** Shares of calls drawn to cheaper models (each in (0, 1)); empty when a candidate serves the whole workload or none has a share. */
  shares: SplitShare[];
  /** Lower bound on R's quality E[r] the shares rest on. */
  requestedLower: number;
  /** Expected USD saved per call by the shares (or by the whole-workload model). */
  savingPerCall: number;
  /** Per candidate: the share the sample means would certify (no margin; 1 before min_samples): what exploring may still win. */
  possibleShares: Map<string, number>;
}

/** Why a candidate may get no share now; `final`: it is out (failing checks, too slow), not waiting for more evidence. */
interface Block {
  reason: string;
  final: boolean;
}

function blockOf(candidate: RelativeEvidence, policy: RelativePolicy): Block | null {
  if (candidate.coolingDown === true) return { reason: 'cooling down after a demotion', final: false };
  if (candidate.constraintsEvaluated > 0) {
    const { lower, upper } = passRateBounds(candidate.constraintsEvaluated, candidate.constraintsPassed, policy.confidence, {
      prior: thresholdPrior(policy.passRate),
    });
    if (upper < policy.passRate)
      return { reason: `fails the absolute checks: its pass rate is at most ${upper.toFixed(3)}, below ${policy.passRate}`, final: true };
    if (lower < policy.passRate) return { reason: `its absolute checks are not yet certified at ${policy.passRate}`, final: false };
  }
  const latency = candidate.latency ?? { state: 'ok' as const };
  if (latency.state !== 'ok') return { reason: latency.reason, final: latency.state === 'too_slow' };
  if (pairedSampleCount(candidate.paired) < policy.minSamples)
    return { reason: `fewer than ${policy.minSamples} paired samples`, final: false };
  return null;
}

export function decideSplit(input: {
  requestedModel: string;
  requestedCostPerCall: number;
  candidates: RelativeEvidence[];
  policy: RelativePolicy;
  prior?: PriorShare;
  /** Certified per-call policies (route-policies.ts), each served in place of the random shares when it saves more. */
  policies?: readonly OfferedPolicy[];
  /** Per candidate learning a policy, the share of calls one may yet send it (route-policies.ts `policyPotentials`): what exploring may win. */
  policyPotentials?: ReadonlyMap<string, number>;
}): SplitDecision {
  const { policy } = input;
  const candidates = input.candidates
    .filter((candidate) => candidate.model !== input.requestedModel)
    .sort((left, right) => left.costPerCall - right.costPerCall || left.model.localeCompare(right.model));
  const cheaper = candidates.filter((candidate) => candidate.costPerCall < input.requestedCostPerCall);
  const blocks = new Map(cheaper.map((candidate) => [candidate.model, blockOf(candidate, policy)]));
  // E[r] from the stream with the most samples: the same calls replayed on two candidates must not count twice.
  const requested = cheaper.reduce<PairedEvidence>(
    (most, candidate) => (pairedSampleCount(candidate.paired) > pairedSampleCount(most) ? candidate.paired : most),
    emptyPairedEvidence(),
  );
  const allocation = certifiedShares(
    requested,
    cheaper.map((candidate) => ({
      model: candidate.model,
      evidence: candidate.paired,
      savingPerCall: blocks.get(candidate.model) === null ? input.requestedCostPerCall - candidate.costPerCall : 0,
    })),
    policy,
    { minPairGain: MIN_PAIR_GAIN },
  );
  const whole = allocation.shares.find((entry) => entry.share >= 1);
  const own: SplitShare[] =
    whole === undefined
      ? allocation.shares
          .filter((entry) => entry.share > 0)
          .map((entry) => ({ ...entry, samples: pairedSampleCount(evidenceOf(cheaper, entry.model)) }))
      : [];
  const prior = whole === undefined ? priorOffer(input.prior, cheaper, policy, input.requestedCostPerCall, allocation.shares) : null;
  const picked = whole === undefined ? policyOffer(input.policies ?? [], cheaper, policy, input.requestedCostPerCall) : null;
  const onPicked = picked !== null && picked.saving > Math.max(allocation.savingPerCall, prior?.saving ?? 0);
  const onPrior = !onPicked && prior !== null && prior.saving > allocation.savingPerCall;
  const shares = onPicked ? [picked.share] : onPrior ? [prior.share] : own;
  // Verdicts carry what the workload's own evidence certifies: what exploring may still win is measured from it, prior or not.
  const shareOf = new Map(allocation.shares.map((entry) => [entry.model, entry]));
  const possibleShares = new Map(
    cheaper.map((candidate) => [
      candidate.model,
      Math.max(possibleShare(candidate.paired, policy), input.policyPotentials?.get(candidate.model) ?? 0),
    ]),
  );

  const verdicts: CandidateVerdict[] = candidates.map((candidate) => {
    const samples = pairedSampleCount(candidate.paired);
    const entry = shareOf.get(candidate.model);
    // A policy's share of all calls, when it serves: what exploring has won for this candidate.
    const share =
      onPicked && picked.share.model === candidate.model ? picked.share.share * picked.share.policy.routedShare : (entry?.share ?? 0);
    const block =
      candidate.costPerCall < input.requestedCostPerCall
        ? (blocks.get(candidate.model) ?? null)
        : { reason: 'not cheaper than the requested model', final: true };
    const verdict: CandidateVerdict = {
      model: candidate.model,
      state: share > 0 ? 'certified' : block?.final === true ? 'eliminated' : 'testing',
      lower: entry?.diffLower ?? Number.NEGATIVE_INFINITY,
      upper: Number.POSITIVE_INFINITY,
      evaluated: samples,
      passed: samples - lossesOf(candidate.paired),
      costPerCall: candidate.costPerCall,
      share,
    };
    if (block !== null && share === 0) verdict.reason = block.reason;
    if (onPicked && candidate.model === picked.share.model) {
      verdict.reason = `serves ${(picked.share.share * 100).toFixed(1)}% of the calls per-call policy #${picked.share.policy.epoch} picks (${(picked.share.policy.routedShare * 100).toFixed(1)}% of calls), certified on ${picked.share.samples} held-out samples`;
    }
    if (onPrior && candidate.model === prior.share.model) {
      verdict.reason = `serves ${(prior.share.share * 100).toFixed(1)}% of calls on the prior of ${prior.share.pooled.workloads} workloads of the project (${prior.share.pooled.samples} paired samples), until its own evidence certifies more`;
    }
    if (candidate.coolingDown === true) verdict.coolingDown = true;
    return verdict;
  });
  const servedCost = cheaper.find((candidate) => candidate.model === whole?.model)?.costPerCall ?? input.requestedCostPerCall;
  const toTest = verdicts
    .filter(
      (verdict) =>
        verdict.costPerCall < servedCost &&
        verdict.coolingDown !== true &&
        verdict.state !== 'eliminated' &&
        verdict.share !== undefined &&
        verdict.share < (possibleShares.get(verdict.model) ?? 0),
    )
    .map((verdict) => verdict.model);
  const wholeEvidence = whole === undefined ? null : evidenceOf(cheaper, whole.model);
  const certificate =
    whole === undefined || wholeEvidence === null
      ? null
      : {
          model: whole.model,
          evaluated: pairedSampleCount(wholeEvidence),
          passed: pairedSampleCount(wholeEvidence) - lossesOf(wholeEvidence),
          lower: whole.diffLower,
          passRate: policy.qualityBar,
          confidence: policy.confidence,
          qualityBar: policy.qualityBar,
        };
  return {
    servedModel: whole?.model ?? input.requestedModel,
    certificate,
    verdicts,
    toTest,
    shares,
    requestedLower: allocation.requestedLower,
    savingPerCall: onPicked ? picked.saving : onPrior ? prior.saving : allocation.savingPerCall,
    possibleShares,
  };
}

/**
 * The prior's share as the route would serve it, and its saving per call:
 * only for a cheaper candidate that nothing but its own sample count keeps
 * from a share (a cooldown, failing checks or latency bar the prior too; a
 * latency not yet known on the workload is judged over the pool).
 */
function priorOffer(
  prior: PriorShare | undefined,
  cheaper: readonly RelativeEvidence[],
  policy: RelativePolicy,
  requestedCostPerCall: number,
  allocated: readonly { model: string; diffLower: number }[],
): { share: SplitShare & { pooled: PooledBasis }; saving: number } | null {
  if (prior === undefined || !(prior.share > 0)) return null;
  const found = cheaper.find((entry) => entry.model === prior.model);
  if (found === undefined) return null;
  // The pool's latency verdict stands in while the workload's own latencies are too few to judge.
  const candidate = found.latency?.state === 'unknown' && prior.latency?.state === 'ok' ? { ...found, latency: prior.latency } : found;
  if (blockOf(candidate, { ...policy, minSamples: 0 }) !== null) return null;
  const diffLower = allocated.find((entry) => entry.model === prior.model)?.diffLower ?? DIFF_RANGE.min;
  const pooled = { workloads: prior.workloads, samples: prior.samples, notLossRate: prior.notLossRate };
  return {
    share: { model: prior.model, share: prior.share, diffLower, samples: pairedSampleCount(candidate.paired), pooled },
    saving: prior.share * (requestedCostPerCall - candidate.costPerCall),
  };
}

/**
 * The certified per-call policy that saves the most, as the route would
 * serve it (its share is of the calls it picks), for a cheaper candidate
 * nothing else bars; its saving per call is the share of the saving it makes
 * (its certified fraction of the held-out samples' saving it picks).
 */
function policyOffer(
  offered: readonly OfferedPolicy[],
  cheaper: readonly RelativeEvidence[],
  policy: RelativePolicy,
  requestedCostPerCall: number,
): { share: SplitShare & { policy: StoredCallPolicy }; saving: number } | null {
  let best: { share: SplitShare & { policy: StoredCallPolicy }; saving: number } | null = null;
  for (const item of offered) {
    const candidate = cheaper.find((entry) => entry.model === item.model);
    if (candidate === undefined || blockOf(candidate, policy) !== null) continue;
    // The share of the saving it makes (it weighs calls by their size, as the bill does) × what serving every call would save.
    const saving = item.certified.savingShare * (requestedCostPerCall - candidate.costPerCall);
    if (saving <= (best?.saving ?? 0)) continue;
    const { verdict } = item.certified;
    best = {
      share: { model: item.model, share: verdict.share, diffLower: verdict.diffLower, samples: verdict.samples, policy: item.stored },
      saving,
    };
  }
  return best;
}

function evidenceOf(candidates: readonly RelativeEvidence[], model: string): PairedEvidence {
  return candidates.find((candidate) => candidate.model === model)?.paired ?? emptyPairedEvidence();
}

function lossesOf(evidence: PairedEvidence): number {
  return evidence.loss.right + evidence.loss.wrong + evidence.loss.ungraded;
}

/**
 * The share the sample means would certify, with no confidence margin: what
 * the evidence suggests there is to win (1 before `min_samples`, so a new
 * candidate is worth its first tests). E[r] from the graded agreements when
 * they are a random sample of them, optimistic (1) while none is graded.
 */
export function possibleShare(evidence: PairedEvidence, policy: RelativePolicy): number {
  const samples = pairedSampleCount(evidence);
  if (samples < policy.minSamples) return 1;
  const values = sampleValues({ routed: evidence, kept: emptyPairedEvidence() }, policy);
  const total = (pick: (value: (typeof values)[number]) => number): number =>
    values.reduce((sum, value) => sum + value.count * pick(value), 0);
  const diff = total((value) => value.diff) / samples;
  let requested = total((value) => value.requested) / samples;
  if (policy.agreementGradesSampled === true) {
    const graded = values.filter((value) => value.agreement && value.graded);
    const gradedCount = graded.reduce((sum, value) => sum + value.count, 0);
    const gradedMean = gradedCount === 0 ? 1 : graded.reduce((sum, value) => sum + value.count * value.requested, 0) / gradedCount;
    requested =
      total((value) => (value.agreement ? 0 : value.requested)) / samples +
      (total((value) => Number(value.agreement)) / samples) * gradedMean;
  }
  return shareFromBounds(diff, requested, policy.qualityBar);
}
