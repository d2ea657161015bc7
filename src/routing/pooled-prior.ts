/**
 * A prior for a workload with little evidence of its own: the evidence of
 * the project's workloads that ask the same model of the same candidate,
 * pooled (issue 37 item 4: "share evidence between workloads that ask the
 * same model, a prior that a small workload's own evidence then corrects").
 *
 * A workload's own certificate (workload-shares.ts) needs a few hundred
 * paired samples before it grants a useful share; at a sample rate of 0.1
 * that is thousands of calls, and a small workload never gets there. Its
 * neighbours usually have: fifty MMLU subjects asking GPT-4 differ (Mixtral
 * keeps 53% of GPT-4's accuracy on one, 105% on another), but far less than
 * nothing is known about a subject of its own.
 *
 * ## The estimate (empirical Bayes)
 * Per workload w, with n_w paired samples, the sample means d̄_w of d̲ and
 * r̄_w of r̲ (paired-quality.ts). Over the pool: the means D and R, the
 * within-workload variances σ², and the variance of the workloads' true
 * means τ² = Var(d̄_w) − mean(σ²/n_w) (method of moments, over workloads
 * with `MIN_MEMBER_SAMPLES`). The prior weighs like n₀ = σ²/τ² samples of
 * the workload's own (a pool of alike workloads weighs much, a diverse one
 * little), so the estimate for w is
 *   d̃_w = (n_w·d̄_w + n₀·D) / (n_w + n₀),   sd = σ / √(n_w + n₀)
 * (the same for r), and its own evidence takes over as it grows.
 *
 * ## The share it grants, and the limits on it
 * A prior is an estimate, not a certificate, so its share is the least of:
 *   - the share its estimates keep at the bar (`shareFromBounds(d̃, r̃, bar)`);
 *   - the share its pessimistic estimates (z standard errors below, z the
 *     normal quantile at the contract's confidence) keep at twice the bar's
 *     gap (0.90 at a bar of 0.95): an outlier the pool cannot yet tell
 *     apart is held near the bar, and its own samples soon pull it down;
 *   - `MAX_PRIOR_SHARE`: serving a workload whole takes its own certificate;
 *   - a fade: × (1 − n_w / (10 × min_samples)), so a prior serves small
 *     workloads only and hands over smoothly to the workload's own
 *     anytime-valid certificate (a share on an estimate is the exception
 *     for workloads too small to certify one, not a way around the bound);
 *   - scaled by λ ≤ 1, the largest scale at which the pool's calls as a
 *     whole, every workload at its prior share, keep the bar: anytime-valid
 *     lower bounds (α/2 each) on E[π·d] and E[r] over the pool's samples,
 *     λ = (1 − bar)·L_r / (−L_πd) when that is below 1. The shares π are
 *     estimated from the same samples they are checked on: the check holds
 *     for the shares as fixed, and is optimistic by their fit (small with
 *     many workloads; it is why the per-workload limits above are kept).
 * The route serves the larger saving of the workload's own certified
 * shares and the prior's (split-decision.ts); the rollback detector watches
 * a prior's share as any other, at the pool's not-loss rate until the
 * workload's own evidence can tell its own.
 */
import { meanLowerBound, type WeightedValue } from './bounded-mean-sequence.js';
import type { LatencyVerdict } from './latency-limit.js';
import {
  DIFF_RANGE,
  emptyPairedEvidence,
  mergeEvidence,
  pairedSampleCount,
  requestedQualityLower,
  sampleValues,
  type PairedEvidence,
  type QualityBarContract,
} from './paired-quality.js';
import { shareFromBounds } from './workload-shares.js';

/** A prior needs this many workloads with `MIN_MEMBER_SAMPLES` each: fewer cannot say how much workloads differ. */
export const MIN_POOL_WORKLOADS = 3;
export const MIN_MEMBER_SAMPLES = 10;
/** Never more than this share on the prior alone. */
export const MAX_PRIOR_SHARE = 0.5;
/**
 * A prior fades as the workload's own samples come, and is gone at this many
 * times `min_samples` (500 by default): from there its own certificate,
 * anytime-valid, serves it, as every workload with evidence enough.
 */
const FADE_FACTOR = 10;
const DEFAULT_MIN_SAMPLES = 50;
/** Bounds on n₀: a prior never weighs less than a few samples, nor more than a large workload's evidence. */
const MIN_STRENGTH = 5;
const MAX_STRENGTH = 1_000;
/** π·d̲ is rounded down to this grid before it is tallied (a lower bound on the rounded mean is one on the mean). */
const GRID = 1_000;

/** One estimated quantity over the pool: its mean, the variance of one sample about its workload's mean, and n₀. */
export interface PooledMoments {
  mean: number;
  within: number;
  strength: number;
}

export interface PoolFit {
  /** Workloads with evidence in the pool, and their paired samples. */
  workloads: number;
  samples: number;
  diff: PooledMoments;
  requested: PooledMoments;
  /** λ: every prior share is scaled by it (see the file comment). */
  scale: number;
  /** The pool's rate of samples that were not losses: the rollback detector's healthy rate for a prior's share. */
  notLossRate: number;
  /** z of the pessimistic estimates. */
  z: number;
}

/** The prior's share for one workload, with what it rests on (stored with the route's split). */
export interface PriorShare {
  model: string;
  share: number;
  workloads: number;
  samples: number;
  notLossRate: number;
  /** The candidate's latency judged over the pool: stands in for the workload's own while that is not known yet. */
  latency?: LatencyVerdict;
}

interface MemberMoments {
  samples: number;
  diff: number;
  diffSquares: number;
  requested: number;
  requestedSquares: number;
}

/**
 * The pool's fit from every member's evidence (the workload's own among
 * them), or null when the pool is too small to say anything: fewer than
 * `MIN_POOL_WORKLOADS` members with `MIN_MEMBER_SAMPLES`, or fewer samples
 * in all than the contract's `min_samples`.
 */
export function fitPool(members: readonly PairedEvidence[], policy: QualityBarContract): PoolFit | null {
  const withEvidence = members.filter((evidence) => pairedSampleCount(evidence) > 0);
  const moments = withEvidence.map((evidence) => momentsOf(evidence, policy));
  const samples = moments.reduce((sum, member) => sum + member.samples, 0);
  const counted = moments.filter((member) => member.samples >= MIN_MEMBER_SAMPLES);
  if (counted.length < MIN_POOL_WORKLOADS || samples < (policy.minSamples ?? 0)) return null;
  const fit: PoolFit = {
    workloads: withEvidence.length,
    samples,
    diff: pooled(moments, counted, (member) => [member.diff, member.diffSquares]),
    requested: pooled(moments, counted, (member) => [member.requested, member.requestedSquares]),
    scale: 1,
    notLossRate: withEvidence.reduce((sum, evidence) => sum + pairedSampleCount(evidence) - lossesOf(evidence), 0) / samples,
    z: normalQuantile(policy.confidence),
  };
  return { ...fit, scale: poolScale(fit, withEvidence, policy) };
}

/** The prior's share for a workload with `own` evidence (empty for a new one), λ applied. */
export function priorShare(fit: PoolFit, own: PairedEvidence, policy: QualityBarContract): number {
  return fit.scale * unscaledShare(fit, momentsOf(own, policy), policy);
}

/** The own samples at which a prior has faded out: `FADE_FACTOR` × min_samples. */
export function fadeSamples(policy: QualityBarContract): number {
  return FADE_FACTOR * Math.max(1, policy.minSamples ?? DEFAULT_MIN_SAMPLES);
}

function unscaledShare(fit: PoolFit, own: MemberMoments, policy: QualityBarContract): number {
  const fade = 1 - own.samples / fadeSamples(policy);
  if (fade <= 0) return 0;
  const diff = shrunk(fit.diff, own.samples, own.diff);
  const requested = shrunk(fit.requested, own.samples, own.requested);
  const atBar = shareFromBounds(diff.mean, requested.mean, policy.qualityBar);
  const atFloor = shareFromBounds(
    diff.mean - fit.z * diff.error,
    requested.mean - fit.z * requested.error,
    1 - 2 * (1 - policy.qualityBar),
  );
  return fade * Math.min(MAX_PRIOR_SHARE, atBar, atFloor);
}

/**
 * λ: the largest scale ≤ 1 at which the calls of the workloads the prior
 * serves, each at its share, keep the bar (lower bounds at α/2 each over
 * their samples). Workloads past the fade serve on their own certificates,
 * each within the bar by itself, so they are left out.
 */
function poolScale(fit: PoolFit, members: readonly PairedEvidence[], policy: QualityBarContract): number {
  const sided = 1 - (1 - policy.confidence) / 2;
  const tally = new Map<number, number>();
  const served: PairedEvidence[] = [];
  for (const evidence of members) {
    const share = unscaledShare(fit, momentsOf(evidence, policy), policy);
    if (share <= 0) continue;
    served.push(evidence);
    for (const value of sampleValues({ routed: evidence, kept: emptyPairedEvidence() }, policy)) {
      const rounded = Math.floor(share * value.diff * GRID) / GRID;
      tally.set(rounded, (tally.get(rounded) ?? 0) + value.count);
    }
  }
  if (served.length === 0) return 1;
  const weighted: WeightedValue[] = [...tally].map(([value, count]) => ({ value, count }));
  const diffLower = meanLowerBound(weighted, DIFF_RANGE, sided);
  const requestedLower = requestedQualityLower(served.reduce(mergeEvidence), sided, policy);
  return shareFromBounds(diffLower, requestedLower, policy.qualityBar);
}

function momentsOf(evidence: PairedEvidence, policy: QualityBarContract): MemberMoments {
  const values = sampleValues({ routed: evidence, kept: emptyPairedEvidence() }, policy);
  const samples = pairedSampleCount(evidence);
  const gradedAgreements = values.filter((value) => value.agreement && value.graded);
  const gradedCount = gradedAgreements.reduce((sum, value) => sum + value.count, 0);
  const agreementMean =
    gradedCount === 0 ? null : gradedAgreements.reduce((sum, value) => sum + value.count * value.requested, 0) / gradedCount;
  let diff = 0;
  let diffSquares = 0;
  let requested = 0;
  let requestedSquares = 0;
  for (const value of values) {
    // Ungraded agreements, when the graded ones are a random sample of them, count at the graded ones' mean.
    const requestedValue =
      policy.agreementGradesSampled === true && value.agreement && !value.graded && agreementMean !== null
        ? agreementMean
        : value.requested;
    diff += value.count * value.diff;
    diffSquares += value.count * value.diff * value.diff;
    requested += value.count * requestedValue;
    requestedSquares += value.count * requestedValue * requestedValue;
  }
  const per = (total: number): number => (samples === 0 ? 0 : total / samples);
  return { samples, diff: per(diff), diffSquares: per(diffSquares), requested: per(requested), requestedSquares: per(requestedSquares) };
}

/** Mean, within-workload variance and n₀ of one quantity; `pick` gives a member's mean and mean square. */
function pooled(
  members: readonly MemberMoments[],
  counted: readonly MemberMoments[],
  pick: (member: MemberMoments) => [number, number],
): PooledMoments {
  const samples = members.reduce((sum, member) => sum + member.samples, 0);
  const mean = members.reduce((sum, member) => sum + member.samples * pick(member)[0], 0) / samples;
  const withinSum = members.reduce((sum, member) => {
    const [memberMean, squares] = pick(member);
    return sum + member.samples * Math.max(0, squares - memberMean * memberMean);
  }, 0);
  const within = withinSum / Math.max(1, samples - members.length);
  const means = counted.map((member) => pick(member)[0]);
  const center = means.reduce((sum, value) => sum + value, 0) / means.length;
  const spread = means.reduce((sum, value) => sum + (value - center) ** 2, 0) / (means.length - 1);
  const noise = counted.reduce((sum, member) => sum + within / member.samples, 0) / counted.length;
  const between = spread - noise;
  const strength = between <= 0 ? MAX_STRENGTH : Math.min(MAX_STRENGTH, Math.max(MIN_STRENGTH, within / between));
  return { mean, within, strength };
}

function shrunk(moments: PooledMoments, samples: number, ownMean: number): { mean: number; error: number } {
  const weight = samples + moments.strength;
  return { mean: (samples * ownMean + moments.strength * moments.mean) / weight, error: Math.sqrt(moments.within / weight) };
}

function lossesOf(evidence: PairedEvidence): number {
  return evidence.loss.right + evidence.loss.wrong + evidence.loss.ungraded;
}

/** The standard normal quantile at p ∈ (0, 1) (Acklam's rational approximation, relative error < 1.2e-9). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be in (0, 1), got ${p}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number): number =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}
