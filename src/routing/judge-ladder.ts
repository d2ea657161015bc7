/**
 * The cheapest judge whose measured accuracy is good enough (issue 37 item 4).
 *
 * The judge of a paired comparison starts as the strongest model of another
 * family than the candidate (`chooseJudge`: the most expensive, as the
 * catalog has no better measure of strength): the reference judge. A
 * verdict can cost several calls of the requested model, so the router
 * measures the cheaper judges of another family against it: on a share of
 * the disagreements the reference judges, the cheapest judge not yet
 * settled is asked the same question, and whether the two verdicts differ
 * is counted (`JudgeCalibration`). A cheaper judge is
 *   adequate  after `CALIBRATION_SAMPLES` comparisons, when the upper
 *             confidence bound of its disagreement rate is at most
 *             `MAX_DISAGREEMENT`; the cheapest adequate judge then judges;
 *   rejected  when the lower bound is above it, or after four times as many
 *             comparisons without being adequate; the next one is measured.
 * Its error is at most the reference judge's plus its disagreement rate
 * (it is wrong only where the reference is, or where the two differ), so
 * the decisions charge ε_reference + the upper bound of that rate
 * (`calibratedJudgeError`), never less than the reference's own ε. Only a
 * judge of another family than the judged model is measured: one of its
 * family favours it, whatever it agrees on with the reference.
 */
import type { JudgeOption } from '../evals/pick-judge-model.js';

/** Comparisons before a cheaper judge may be used. */
export const CALIBRATION_SAMPLES = 100;
/** The largest disagreement rate with the reference judge a cheaper judge may have. */
export const MAX_DISAGREEMENT = 0.05;
/** One-sided 95% normal quantile of the Wilson bounds. */
const Z = 1.645;

/** Per cheaper judge: disagreements judged by both it and the reference judge, and how many of their verdicts differed. */
export type JudgeCalibration = Record<string, { compared: number; differed: number }>;

export interface JudgeLadder {
  /** The judge whose verdicts the others are measured against. */
  reference: string;
  /** The cheapest adequate judge, else the reference: who judges now. */
  active: string;
  /** The cheapest cheaper judge neither adequate nor rejected, and cheaper than `active`: who is measured now; null when none. */
  measuring: string | null;
}

/**
 * The ladder for judging a model of `judgedFamily`: `reference` is the
 * judge `chooseJudge` picked; the others are `available` models of another
 * family than the judged one, cheaper than the reference.
 */
export function judgeLadder(
  reference: string,
  judgedFamily: string,
  available: readonly JudgeOption[],
  calibration: JudgeCalibration,
): JudgeLadder {
  const referenceCost = available.find((option) => option.id === reference)?.costPerCall ?? Number.POSITIVE_INFINITY;
  const cheaper = available
    .filter(
      (option) =>
        option.id !== reference &&
        option.family.trim().toLowerCase() !== judgedFamily.trim().toLowerCase() &&
        (option.costPerCall ?? Number.POSITIVE_INFINITY) < referenceCost,
    )
    .sort((left, right) => (left.costPerCall ?? 0) - (right.costPerCall ?? 0) || left.id.localeCompare(right.id));
  const active = cheaper.find((option) => standing(calibration[option.id]) === 'adequate')?.id ?? reference;
  const activeCost = available.find((option) => option.id === active)?.costPerCall ?? referenceCost;
  const measuring =
    cheaper.find((option) => (option.costPerCall ?? 0) < activeCost && standing(calibration[option.id]) === 'measuring')?.id ?? null;
  return { reference, active, measuring };
}

export function standing(counts: { compared: number; differed: number } | undefined): 'measuring' | 'adequate' | 'rejected' {
  if (counts === undefined || counts.compared < CALIBRATION_SAMPLES) return 'measuring';
  if (wilson(counts.differed, counts.compared, Z) <= MAX_DISAGREEMENT) return 'adequate';
  if (wilson(counts.differed, counts.compared, -Z) > MAX_DISAGREEMENT || counts.compared >= 4 * CALIBRATION_SAMPLES) return 'rejected';
  return 'measuring';
}

/**
 * The error to charge on a route's verdicts: the reference judge's, plus the
 * largest upper bound of disagreement of any cheaper judge found adequate
 * (its verdicts may be among the evidence, whichever judges now).
 */
export function calibratedJudgeError(referenceError: number, calibration: JudgeCalibration): number {
  let extra = 0;
  for (const counts of Object.values(calibration))
    if (standing(counts) === 'adequate') extra = Math.max(extra, wilson(counts.differed, counts.compared, Z));
  return referenceError + extra;
}

/** The Wilson score bound of a rate: upper for z > 0, lower for z < 0. */
export function wilson(failures: number, trials: number, z: number): number {
  if (trials === 0) return z > 0 ? 1 : 0;
  const rate = failures / trials;
  const denominator = 1 + (z * z) / trials;
  const centre = rate + (z * z) / (2 * trials);
  const spread = Math.abs(z) * Math.sqrt((rate * (1 - rate)) / trials + (z * z) / (4 * trials * trials));
  return Math.min(1, Math.max(0, (z > 0 ? centre + spread : centre - spread) / denominator));
}
