import { describe, expect, it } from 'vitest';
import { logGamma, passRateBounds, thresholdPrior, UNIFORM_PRIOR, type BetaPrior } from './confidence-sequence.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';

type Bounds = (evaluated: number, passed: number) => { lower: number; upper: number };

/** Share of seeded streams at `rate` whose bounds exclude `rate` at some n ≤ horizon. */
function everExcluded(bounds: Bounds, rate: number, runs: number, horizon: number): number {
  let excluded = 0;
  for (let run = 0; run < runs; run += 1) {
    const random = seededRandom(1_000 + run);
    let passed = 0;
    for (let evaluated = 1; evaluated <= horizon; evaluated += 1) {
      if (random() < rate) passed += 1;
      const { lower, upper } = bounds(evaluated, passed);
      if (lower > rate || upper < rate) {
        excluded += 1;
        break;
      }
    }
  }
  return excluded / runs;
}

/** A fixed-n 95% Wilson interval: right at one n chosen in advance, wrong when re-checked at every n. */
const wilson: Bounds = (evaluated, passed) => {
  const z = 1.959964;
  const estimate = passed / evaluated;
  const centre = (estimate + (z * z) / (2 * evaluated)) / (1 + (z * z) / evaluated);
  const half = (z / (1 + (z * z) / evaluated)) * Math.sqrt((estimate * (1 - estimate)) / evaluated + (z * z) / (4 * evaluated * evaluated));
  return { lower: centre - half, upper: centre + half };
};

const withPrior =
  (prior: BetaPrior): Bounds =>
  (evaluated, passed) =>
    passRateBounds(evaluated, passed, 0.95, { prior });

describe('passRateBounds', () => {
  it('knows nothing before the first sample', () => {
    expect(passRateBounds(0, 0, 0.95)).toEqual({ lower: 0, upper: 1 });
  });

  it('matches the closed form for a perfect record under the uniform prior', () => {
    // M_n(p) = B(n + 1, 1) / p^n = 1 / ((n + 1) p^n) reaches 1/α = 20 at p = (20 (n + 1))^(-1/n).
    const { lower, upper } = passRateBounds(100, 100, 0.95);
    expect(lower).toBeCloseTo(2020 ** (-1 / 100), 9);
    expect(upper).toBe(1);
  });

  it('brackets the observed rate and narrows as evidence grows', () => {
    let previousWidth = 1;
    for (const evaluated of [10, 100, 1_000, 10_000, 100_000]) {
      const passed = Math.round(evaluated * 0.9);
      const { lower, upper } = passRateBounds(evaluated, passed, 0.95);
      expect(lower).toBeLessThanOrEqual(passed / evaluated);
      expect(upper).toBeGreaterThanOrEqual(passed / evaluated);
      expect(upper - lower).toBeLessThan(previousWidth);
      previousWidth = upper - lower;
    }
    expect(previousWidth).toBeLessThan(0.01);
  });

  it('holds the true rate at every n at once in at least 95% of streams, whatever the prior', () => {
    // Ville's inequality bounds the share of streams ever excluding the truth by 5%; the
    // tolerance is two standard errors of a 5% share over the runs (measured: about 3% to 4.5%).
    const runs = 800;
    const tolerance = 0.05 + 2 * Math.sqrt((0.05 * 0.95) / runs);
    expect(everExcluded(withPrior(thresholdPrior(0.95)), 0.95, runs, 1_000)).toBeLessThanOrEqual(tolerance);
    expect(everExcluded(withPrior(UNIFORM_PRIOR), 0.6, runs, 1_000)).toBeLessThanOrEqual(tolerance);
    expect(everExcluded(withPrior(thresholdPrior(0.9)), 0.8, runs, 1_000)).toBeLessThanOrEqual(tolerance);
  });

  it('is what a fixed-n interval re-checked after every sample is not', () => {
    // The same check fails for Wilson (about half the streams): this is why the router needs a confidence sequence.
    expect(everExcluded(wilson, 0.95, 400, 1_000)).toBeGreaterThan(0.2);
  });

  it('is tighter above the threshold with the threshold prior', () => {
    const uniform = passRateBounds(150, 149, 0.95);
    const focused = passRateBounds(150, 149, 0.95, { prior: thresholdPrior(0.95) });
    expect(uniform.lower).toBeLessThan(0.95);
    expect(focused.lower).toBeGreaterThanOrEqual(0.95);
  });

  it('rejects counts and levels that mean nothing', () => {
    expect(() => passRateBounds(10, 11, 0.95)).toThrow(RangeError);
    expect(() => passRateBounds(-1, 0, 0.95)).toThrow(RangeError);
    expect(() => passRateBounds(10, 2.5, 0.95)).toThrow(RangeError);
    expect(() => passRateBounds(10, 5, 1)).toThrow(RangeError);
    expect(() => passRateBounds(10, 5, 0.95, { prior: { alpha: 0, beta: 1 } })).toThrow(RangeError);
    expect(() => thresholdPrior(1)).toThrow(RangeError);
  });
});

describe('logGamma', () => {
  it('matches known values', () => {
    expect(logGamma(10)).toBeCloseTo(Math.log(362_880), 12);
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 12);
    expect(logGamma(1)).toBeCloseTo(0, 12);
    expect(logGamma(1_000)).toBeCloseTo(5905.220423209181, 8);
  });
});
