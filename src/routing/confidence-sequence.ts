/**
 * Anytime-valid bounds on a pass rate (a confidence sequence).
 *
 * The router looks at a candidate's counts after every replayed sample. A
 * fixed-n interval (Wilson, Clopper-Pearson) re-checked that way is wrong far
 * more often than its level says: with a one-sided 95% Wilson bound, a model
 * whose true rate is exactly the threshold gets certified 27% of the time
 * within 3,000 evals (bench/router). These bounds stay valid at every n at
 * once, whenever the worker looks and whenever it stops.
 *
 * Construction: the beta-binomial mixture martingale (Robbins 1970; Howard et
 * al. 2021, "Time-uniform, nonparametric, nonasymptotic confidence
 * sequences"). After k passes in n samples, for every candidate rate p,
 *
 *   M_n(p) = ∫ q^k (1-q)^(n-k) dBeta(q; a, b) / (p^k (1-p)^(n-k))
 *          = B(a + k, b + n - k) / (B(a, b) · p^k (1-p)^(n-k))
 *
 * has mean 1 and is a martingale when p is the true rate, so by Ville's
 * inequality P(M_n(p) ever reaches 1/α) ≤ α. The set {p : M_n(p) < 1/α}
 * therefore holds the true rate at every n simultaneously with probability at
 * least 1 - α. log M_n(p) is convex in p with its minimum (≤ 0) at k/n, so
 * the set is an interval: its ends are `lower` and `upper`.
 *
 * The prior Beta(a, b) does not affect validity (any prior fixed before the
 * data works); it decides where the sequence is tight. `thresholdPrior` puts
 * most of its mass between the contract's pass rate and 1, where the models
 * worth certifying are, which roughly halves the evals needed to certify a
 * 0.98-0.99 model against 0.95 compared with a uniform prior, at the price of
 * slower bounds for rates far below the threshold (which are eliminated fast
 * anyway). See docs/routing.md for the measured effect.
 */

/** A Beta(alpha, beta) mixing distribution: `alpha` pseudo-passes, `beta` pseudo-failures. */
export interface BetaPrior {
  alpha: number;
  beta: number;
}

export const UNIFORM_PRIOR: BetaPrior = { alpha: 1, beta: 1 };

export interface PassRateBoundsOptions {
  /** The mixing prior; `UNIFORM_PRIOR` when omitted. The router passes `thresholdPrior(passRate)`. */
  prior?: BetaPrior;
}

/**
 * The prior the router uses for a contract with this pass rate: Beta(a, 1)
 * with a = 2 / (1 - passRate), i.e. Beta(40, 1) for 0.95, Beta(20, 1) for
 * 0.90, Beta(100, 1) for 0.98. Its mean is a model that fails about half as
 * often as the contract allows, and about 87% of its mass lies above the
 * pass rate, where the candidates worth certifying are. Against a uniform
 * prior it halves the evals needed to certify a 0.98-0.99 model at 0.95
 * (median 129 instead of 254 for 0.99) and costs a few dozen more evals to
 * eliminate a clearly bad one (0.80: median 58 instead of 27).
 */
export function thresholdPrior(passRate: number): BetaPrior {
  if (!(passRate > 0 && passRate < 1)) throw new RangeError(`passRate must be in (0, 1), got ${passRate}`);
  return { alpha: 2 / (1 - passRate), beta: 1 };
}

/** Anytime-valid bounds on a Bernoulli rate after `passed` of `evaluated`, at level `confidence` (e.g. 0.95): valid at every n simultaneously. */
export function passRateBounds(
  evaluated: number,
  passed: number,
  confidence: number,
  options: PassRateBoundsOptions = {},
): { lower: number; upper: number } {
  if (!Number.isInteger(evaluated) || evaluated < 0) throw new RangeError(`evaluated must be a non-negative integer, got ${evaluated}`);
  if (!Number.isInteger(passed) || passed < 0 || passed > evaluated)
    throw new RangeError(`passed must be an integer in [0, evaluated], got ${passed}`);
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
  const prior = options.prior ?? UNIFORM_PRIOR;
  if (!(prior.alpha > 0 && prior.beta > 0)) throw new RangeError('prior alpha and beta must be positive');
  if (evaluated === 0) return { lower: 0, upper: 1 };

  const failed = evaluated - passed;
  const logMixture = logBeta(prior.alpha + passed, prior.beta + failed) - logBeta(prior.alpha, prior.beta);
  const limit = Math.log(1 / (1 - confidence));
  // log M_n(p) - log(1/α): convex in p, negative at the point estimate.
  const excess = (p: number): number => logMixture - passed * Math.log(p) - failed * Math.log1p(-p) - limit;
  const slope = (p: number): number => failed / (1 - p) - passed / p;
  const estimate = passed / evaluated;
  const lower = passed === 0 ? 0 : boundary(excess, slope, 0, estimate);
  const upper = failed === 0 ? 1 : boundary(excess, slope, 1, estimate);
  return { lower, upper };
}

/**
 * Where the convex `excess` crosses 0 between `outside` (where it is +∞) and
 * `inside` (where it is ≤ 0): bisection to 1e-4, then Newton from the outside
 * point. The tangent of a convex function lies below it, so each Newton step
 * lands between the current point and the crossing: the result never errs
 * inside the confidence set.
 */
function boundary(excess: (p: number) => number, slope: (p: number) => number, outside: number, inside: number): number {
  let out = outside;
  let within = inside;
  for (let step = 0; step < 100 && (Math.abs(out - within) > 1e-4 || out === outside); step += 1) {
    const middle = (out + within) / 2;
    if (excess(middle) < 0) within = middle;
    else out = middle;
  }
  for (let step = 0; step < 30; step += 1) {
    const value = excess(out);
    if (!(value > 0)) break;
    const next = out - value / slope(out);
    if (!(Math.abs(next - out) > 1e-14)) break;
    out = next;
  }
  return out;
}

function logBeta(a: number, b: number): number {
  return logGamma(a) + logGamma(b) - logGamma(a + b);
}

// Lanczos approximation (g = 7, 9 terms): relative error below 1e-14 for x > 0.
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const shifted = x - 1;
  let sum = LANCZOS[0] ?? 0;
  for (let index = 1; index < LANCZOS.length; index += 1) sum += (LANCZOS[index] ?? 0) / (shifted + index);
  const t = shifted + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (shifted + 0.5) * Math.log(t) - t + Math.log(sum);
}
