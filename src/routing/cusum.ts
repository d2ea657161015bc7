/**
 * Rollback detector: a Bernoulli CUSUM (Page 1954) on the pass/fail outcomes
 * of the shadow-scored calls of the model serving a route.
 *
 * Each outcome adds its log-likelihood ratio of "failing" against "healthy":
 *
 *   pass: log(failingRate / healthyRate)               (negative)
 *   fail: log((1 - failingRate) / (1 - healthyRate))   (positive)
 *
 * and the statistic is floored at 0, so it measures the evidence for a drop
 * since the last time the model looked healthy. It raises the alarm at
 * `threshold`. For a pass rate of 0.95 against 0.85, a failure adds 1.10 and
 * a pass takes 0.11 away; at 0.85 the statistic climbs by 0.070 per outcome.
 *
 * Choosing the threshold h: the mean run length to a false alarm at the
 * healthy rate is at least e^h outcomes (Lorden 1971), and grows fast as the
 * true rate rises above it; a model that serves was certified with its lower
 * bound at or above the pass rate, so its true rate is usually higher. After
 * a drop to the failing rate the statistic climbs by KL(failing ‖ healthy)
 * per outcome on average, so the alarm comes after at most about h / KL
 * outcomes (fewer in the median). The router's h = 5 was chosen with the
 * simulation (bench/router): against 0.95 it gives about 4,500 outcomes
 * between false alarms at a true rate of exactly 0.95 and about 80,000 at
 * 0.97 (90,000 and 1.6 million served calls at a 5% shadow share), and
 * catches a drop from 0.95 to 0.85 after a median of about 50 outcomes, i.e.
 * about 1,000 served calls. h = 4 would catch it about 20% sooner for three
 * times as many false alarms. docs/routing.md has the measured figures.
 */

export interface CusumOptions {
  /** In-control pass rate, e.g. the certified rate or pass_rate. */
  healthyRate: number;
  /** The drop to detect, e.g. pass_rate - 0.1. */
  failingRate: number;
  /** Alarm threshold h (log-likelihood units), chosen for a false alarm rate: see the file comment. */
  threshold: number;
}

export interface CusumState {
  /** Log-likelihood evidence for a drop, ≥ 0. */
  statistic: number;
  /** Outcomes seen since `initialCusum`. */
  observed: number;
}

/** How far below the pass rate the default detector looks for a drop. */
export const CUSUM_DROP = 0.1;
export const CUSUM_THRESHOLD = 5;

export function initialCusum(): CusumState {
  return { statistic: 0, observed: 0 };
}

/**
 * One scored outcome. On an alarm the caller demotes the model and starts a
 * fresh state (`initialCusum`) for the model that serves next; the returned
 * state keeps the statistic that crossed the threshold, for the record.
 */
export function updateCusum(state: CusumState, passed: boolean, options: CusumOptions): { state: CusumState; alarm: boolean } {
  checkOptions(options);
  const increment = passed
    ? Math.log(options.failingRate / options.healthyRate)
    : Math.log((1 - options.failingRate) / (1 - options.healthyRate));
  const statistic = Math.max(0, state.statistic + increment);
  return { state: { statistic, observed: state.observed + 1 }, alarm: statistic >= options.threshold };
}

/** The defaults the router uses: healthy at the contract's pass rate, alarmed by a drop of `CUSUM_DROP`. */
export function cusumOptionsFor(passRate: number): CusumOptions {
  if (!(passRate > 0 && passRate < 1)) throw new RangeError(`passRate must be in (0, 1), got ${passRate}`);
  return { healthyRate: passRate, failingRate: Math.max(passRate - CUSUM_DROP, passRate / 2), threshold: CUSUM_THRESHOLD };
}

function checkOptions(options: CusumOptions): void {
  if (!(options.failingRate > 0 && options.failingRate < options.healthyRate && options.healthyRate < 1)) {
    throw new RangeError(`need 0 < failingRate < healthyRate < 1, got ${options.failingRate} and ${options.healthyRate}`);
  }
  if (!(options.threshold > 0)) throw new RangeError(`threshold must be positive, got ${options.threshold}`);
}
