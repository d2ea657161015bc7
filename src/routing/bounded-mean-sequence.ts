/**
 * Anytime-valid bounds on the mean of a bounded variable (a confidence
 * sequence by betting).
 *
 * confidence-sequence.ts bounds a pass rate (values 0 and 1). Quality
 * relative to the requested model (paired-quality.ts) needs the same
 * guarantee for variables with other values: a paired difference c − r is
 * −1, 0 or 1, less a charge for the judge's error. This file bounds the
 * mean of any variable whose values lie in a range [min, max] fixed before
 * the data, observed one at a time, with the guarantee the router needs
 * because it looks after every sample: the bounds hold at every n at once.
 *
 * Construction: diversified Kelly betting (Waudby-Smith & Ramdas 2023,
 * "Estimating means of bounded random variables by betting", JRSS-B, §5).
 * To test "the mean is m" against "it is larger", a gambler starts with
 * capital 1 and stakes a constant fraction on every observation x:
 *
 *   K_n(m; λ) = Π_i (1 + λ (x_i − m)),   λ = θ / (m − min),  0 ≤ θ < 1.
 *
 * Each factor is positive (x_i ≥ min) and has mean 1 when m is the true
 * mean, so K_n(m; λ) is a non-negative martingale; so is the average
 * K_n(m) of a fixed grid of θ. Ville's inequality: P(∃n: K_n(μ) ≥ 1/α) ≤ α
 * at the true mean μ. Every factor decreases in m ((x − m)/(m − min) does),
 * so {m : K_n(m) ≥ 1/α} is an interval [min, L_n) and L_n ≤ μ at every n
 * with probability ≥ 1 − α. That is `meanLowerBound`; `meanUpperBound` is the
 * same bet on the reflected variable min + max − x.
 *
 * Why constant bets, not the paper's predictable plug-in bets: K_n then
 * depends only on how often each value was seen, not on their order. The
 * state is a tally (value → count), one addition per observation; and the
 * bound can be recomputed from the same tally when the confidence, an
 * error rate or the quality bar changes (paired-quality.ts relies on it).
 * The price is the grid: the average over 20 bets loses log 20 ≈ 3 nats of
 * capital against the best constant bet in hindsight, about what the
 * beta-binomial mixture of confidence-sequence.ts loses at n ≈ 1,000.
 *
 * The guarantee assumes the observations are independent draws from one
 * distribution (or at least have the same conditional mean given the past):
 * the router's samples must be a random sample of the workload's calls.
 * A variable with many distinct values can be rounded down to a grid before
 * it is tallied: the lower bound then holds for the rounded mean, which is at
 * most the true one (round up for an upper bound).
 */

/** How often one value was observed. */
export interface WeightedValue {
  value: number;
  count: number;
}

/** The values the variable can take. Fixed before the data: a range chosen after looking breaks the guarantee. */
export interface MeanRange {
  min: number;
  max: number;
}

/**
 * θ, the fraction of the largest safe stake: 0.9 · 2^(−k/2), k = 0..19, from
 * 0.9 down to 0.0012. The best constant bet against a mean Δ below the true
 * one with variance σ² is about λ = Δ/σ²; the grid's spacing of √2 wins at
 * least 97% of its log-capital growth, and the smallest stake still suits
 * the gaps left after about 10^6 observations.
 */
const STAKES = Array.from({ length: 20 }, (_, index) => 0.9 * 2 ** (-index / 2));
const LOG_STAKE_COUNT = Math.log(STAKES.length);

/** Counts per distinct value, in order of first appearance; `count` adds that many observations (pure: returns a new tally). */
export function addToTally(tally: readonly WeightedValue[], value: number, count = 1): WeightedValue[] {
  if (!Number.isFinite(value)) throw new RangeError(`value must be finite, got ${value}`);
  const index = tally.findIndex((entry) => entry.value === value);
  if (index === -1) return [...tally, { value, count }];
  return tally.map((entry, position) => (position === index ? { value, count: entry.count + count } : entry));
}

/**
 * Whether the data certify, at `confidence`, that the mean is above
 * `threshold`: the bettors' capital against "the mean is `threshold`" has
 * reached 1/α. One pass over the tally, no search: what a pass/fail decision
 * and the validity simulation use. A threshold at or below `range.min` is
 * certified without data.
 */
export function certifiesMeanAbove(tally: readonly WeightedValue[], range: MeanRange, threshold: number, confidence: number): boolean {
  checkInputs(tally, range, confidence);
  if (threshold <= range.min) return true;
  return logCapital(tally, range.min, threshold) >= Math.log(1 / (1 - confidence));
}

/** Anytime-valid lower bound on the mean at `confidence` (one-sided: α = 1 − confidence). `range.min` before any data. */
export function meanLowerBound(tally: readonly WeightedValue[], range: MeanRange, confidence: number): number {
  checkInputs(tally, range, confidence);
  const limit = Math.log(1 / (1 - confidence));
  let observed = 0;
  let total = 0;
  for (const entry of tally) {
    observed += entry.count;
    total += entry.count * entry.value;
  }
  // Capital is at most 1 at the sample mean (Jensen), so the bound lies in [min, mean].
  let rejected = range.min;
  let kept = observed === 0 ? range.min : Math.min(range.max, total / observed);
  const tolerance = 1e-9 * (range.max - range.min);
  while (kept - rejected > tolerance) {
    const middle = (rejected + kept) / 2;
    if (logCapital(tally, range.min, middle) >= limit) rejected = middle;
    else kept = middle;
  }
  // Always a point the bettors rejected (or min): the bound never errs into the confidence set.
  return rejected;
}

/** Anytime-valid upper bound on the mean at `confidence` (one-sided). `range.max` before any data. */
export function meanUpperBound(tally: readonly WeightedValue[], range: MeanRange, confidence: number): number {
  const reflected = tally.map((entry) => ({ value: range.min + range.max - entry.value, count: entry.count }));
  return range.min + range.max - meanLowerBound(reflected, range, confidence);
}

/** Two-sided bounds: each side at α/2, so both hold at every n at once with probability ≥ `confidence`. */
export function meanBounds(tally: readonly WeightedValue[], range: MeanRange, confidence: number): { lower: number; upper: number } {
  const sided = 1 - (1 - confidence) / 2;
  return { lower: meanLowerBound(tally, range, sided), upper: meanUpperBound(tally, range, sided) };
}

/** log of the bettors' average capital against mean `m` (> min). */
function logCapital(tally: readonly WeightedValue[], min: number, m: number): number {
  const scale = m - min;
  let largest = -Infinity;
  const logs = STAKES.map((stake) => {
    let sum = 0;
    for (const entry of tally) if (entry.count > 0) sum += entry.count * Math.log1p((stake * (entry.value - m)) / scale);
    largest = Math.max(largest, sum);
    return sum;
  });
  let scaled = 0;
  for (const value of logs) scaled += Math.exp(value - largest);
  return largest + Math.log(scaled) - LOG_STAKE_COUNT;
}

function checkInputs(tally: readonly WeightedValue[], range: MeanRange, confidence: number): void {
  if (!(Number.isFinite(range.min) && Number.isFinite(range.max) && range.max > range.min))
    throw new RangeError(`range must have min < max, got [${range.min}, ${range.max}]`);
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
  for (const entry of tally) {
    if (!(entry.value >= range.min && entry.value <= range.max))
      throw new RangeError(`value ${entry.value} is outside [${range.min}, ${range.max}]`);
    if (!(Number.isInteger(entry.count) && entry.count >= 0))
      throw new RangeError(`count must be a non-negative integer, got ${entry.count}`);
  }
}
