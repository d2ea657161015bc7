import { describe, expect, it } from 'vitest';
import {
  addToTally,
  certifiesMeanAbove,
  meanBounds,
  meanLowerBound,
  meanUpperBound,
  type MeanRange,
  type WeightedValue,
} from './bounded-mean-sequence.js';
import { passRateBounds } from './confidence-sequence.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';

/** A variable taking `values` with probabilities `weights`. */
interface Distribution {
  values: number[];
  weights: number[];
}

const mean = (distribution: Distribution): number =>
  distribution.values.reduce((sum, value, index) => sum + value * (distribution.weights[index] ?? 0), 0);

function draw(distribution: Distribution, random: () => number): number {
  let left = random();
  for (const [index, weight] of distribution.weights.entries()) {
    left -= weight;
    if (left < 0) return distribution.values[index] ?? Number.NaN;
  }
  return distribution.values[distribution.values.length - 1] ?? Number.NaN;
}

/**
 * Share of seeded streams, drawn at a true mean exactly at the threshold,
 * whose `crosses` check says the threshold is excluded at some n ≤ horizon.
 */
function everCrosses(
  distribution: Distribution,
  runs: number,
  horizon: number,
  crosses: (tally: WeightedValue[], threshold: number) => boolean,
): number {
  const threshold = mean(distribution);
  let crossed = 0;
  for (let run = 0; run < runs; run += 1) {
    const random = seededRandom(7_000 + run);
    const tally = distribution.values.map((value) => ({ value, count: 0 }));
    for (let step = 0; step < horizon; step += 1) {
      const value = draw(distribution, random);
      const entry = tally.find((candidate) => candidate.value === value);
      if (entry !== undefined) entry.count += 1;
      if (crosses(tally, threshold)) {
        crossed += 1;
        break;
      }
    }
  }
  return crossed / runs;
}

const UNIT: MeanRange = { min: 0, max: 1 };
const SIGNED: MeanRange = { min: -1.5, max: 1 };
const passRate: Distribution = { values: [1, 0], weights: [0.95, 0.05] };
/** A paired difference c − r like RouteLLM's MMLU: wins 4%, losses 17%. */
const pairedDifference: Distribution = { values: [1, 0, -1], weights: [0.04, 0.79, 0.17] };

describe('meanLowerBound and meanUpperBound', () => {
  it('know only the range before the first observation', () => {
    expect(meanBounds([], UNIT, 0.95)).toEqual({ lower: 0, upper: 1 });
    expect(meanLowerBound([], SIGNED, 0.95)).toBe(-1.5);
  });

  it('bracket the sample mean and narrow as evidence grows', () => {
    let previousWidth = Infinity;
    for (const observed of [10, 100, 1_000, 10_000, 100_000]) {
      const tally = [
        { value: 1, count: Math.round(observed * 0.1) },
        { value: 0, count: Math.round(observed * 0.7) },
        { value: -1, count: Math.round(observed * 0.2) },
      ];
      const { lower, upper } = meanBounds(tally, SIGNED, 0.95);
      expect(lower).toBeLessThan(-0.1);
      expect(upper).toBeGreaterThan(-0.1);
      expect(upper - lower).toBeLessThan(previousWidth);
      previousWidth = upper - lower;
    }
    expect(previousWidth).toBeLessThan(0.02);
  });

  it('are about as tight on a pass rate as the beta-binomial mixture of confidence-sequence.ts', () => {
    for (const observed of [100, 1_000, 10_000]) {
      const passed = Math.round(observed * 0.9);
      const betting = meanBounds(
        [
          { value: 1, count: passed },
          { value: 0, count: observed - passed },
        ],
        UNIT,
        0.95,
      );
      const mixture = passRateBounds(observed, passed, 0.95);
      expect(Math.abs(betting.lower - mixture.lower)).toBeLessThan(0.01);
      expect(Math.abs(betting.upper - mixture.upper)).toBeLessThan(0.01);
    }
  });

  it('return a point the bettors rejected, next to one they did not', () => {
    const tally = [
      { value: 1, count: 30 },
      { value: 0, count: 900 },
      { value: -1, count: 70 },
    ];
    const lower = meanLowerBound(tally, SIGNED, 0.95);
    expect(certifiesMeanAbove(tally, SIGNED, lower, 0.95)).toBe(true);
    expect(certifiesMeanAbove(tally, SIGNED, lower + 1e-6, 0.95)).toBe(false);
    expect(meanUpperBound(tally, SIGNED, 0.95)).toBeGreaterThan(-0.04);
  });

  it('holds the true mean at every n ≤ 5,000 at once in at least 1 − α of streams', () => {
    // Ville's inequality bounds the share of streams ever excluding the truth by α = 5%; the tolerance is
    // two standard errors of a 5% share over the runs. Measured: 0.5% (pass rate, lower), 2.5% (paired
    // difference, lower), 2.0% (paired difference, upper).
    const runs = 200;
    const tolerance = 0.05 + 2 * Math.sqrt((0.05 * 0.95) / runs);
    const lowerCrosses = (range: MeanRange) => (tally: WeightedValue[], threshold: number) =>
      certifiesMeanAbove(tally, range, threshold, 0.95);
    const upperCrosses = (tally: WeightedValue[], threshold: number) => {
      const reflected = tally.map((entry) => ({ value: SIGNED.min + SIGNED.max - entry.value, count: entry.count }));
      return certifiesMeanAbove(reflected, SIGNED, SIGNED.min + SIGNED.max - threshold, 0.95);
    };
    const figures = [
      everCrosses(passRate, runs, 5_000, lowerCrosses(UNIT)),
      everCrosses(pairedDifference, runs, 5_000, lowerCrosses(SIGNED)),
      everCrosses(pairedDifference, runs, 5_000, upperCrosses),
    ];
    process.stdout.write(
      `bounded-mean-sequence validity at the threshold, 5,000 obs, ${runs} runs: ${figures.map((share) => share.toFixed(3)).join(', ')}\n`,
    );
    for (const share of figures) expect(share).toBeLessThanOrEqual(tolerance);
  });

  it('is what a fixed-n interval re-checked after every sample is not', () => {
    // The same check for a one-sided 95% normal interval: wrong in about a third of the streams.
    const normalCrosses = (tally: WeightedValue[], threshold: number) => {
      const observed = tally.reduce((sum, entry) => sum + entry.count, 0);
      if (observed < 2) return false;
      const average = tally.reduce((sum, entry) => sum + entry.count * entry.value, 0) / observed;
      const variance = tally.reduce((sum, entry) => sum + entry.count * (entry.value - average) ** 2, 0) / (observed - 1);
      return variance > 0 && average - 1.645 * Math.sqrt(variance / observed) > threshold;
    };
    expect(everCrosses(pairedDifference, 100, 5_000, normalCrosses)).toBeGreaterThan(0.2);
  });

  it('certifies a mean 0.03 above the threshold within 5,000 observations', () => {
    const better: Distribution = { values: [1, 0, -1], weights: [0.07, 0.79, 0.14] };
    const random = seededRandom(99);
    let tally: WeightedValue[] = [];
    for (let step = 0; step < 5_000; step += 1) tally = addToTally(tally, draw(better, random));
    expect(meanLowerBound(tally, SIGNED, 0.95)).toBeGreaterThan(mean(pairedDifference));
  });
});

describe('addToTally', () => {
  it('counts each distinct value once, whatever the order', () => {
    let tally: WeightedValue[] = [];
    for (const value of [0, 1, 0, -1, 0]) tally = addToTally(tally, value);
    expect(tally).toEqual([
      { value: 0, count: 3 },
      { value: 1, count: 1 },
      { value: -1, count: 1 },
    ]);
    expect(addToTally(tally, 1, 4)).toContainEqual({ value: 1, count: 5 });
    expect(tally).toContainEqual({ value: 1, count: 1 });
  });
});

describe('input checks', () => {
  it('rejects ranges, levels and values that mean nothing', () => {
    expect(() => meanLowerBound([{ value: 2, count: 1 }], UNIT, 0.95)).toThrow(RangeError);
    expect(() => meanLowerBound([{ value: 0.5, count: 1.5 }], UNIT, 0.95)).toThrow(RangeError);
    expect(() => meanLowerBound([], { min: 1, max: 1 }, 0.95)).toThrow(RangeError);
    expect(() => meanLowerBound([], UNIT, 1)).toThrow(RangeError);
    expect(() => addToTally([], Number.NaN)).toThrow(RangeError);
  });
});
