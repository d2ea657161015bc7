import { describe, expect, it } from 'vitest';
import { CUSUM_THRESHOLD, cusumOptionsFor, initialCusum, updateCusum, type CusumOptions } from './cusum.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';

const options = cusumOptionsFor(0.95);

/** Outcomes at `rate` until the first alarm (or `limit`), from a fresh state. */
function runLength(rate: number, seed: number, limit: number, chosen: CusumOptions = options): number {
  const random = seededRandom(seed);
  let state = initialCusum();
  for (let outcome = 1; outcome <= limit; outcome += 1) {
    const step = updateCusum(state, random() < rate, chosen);
    if (step.alarm) return outcome;
    state = step.state;
  }
  return limit;
}

const median = (values: number[]): number => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)] ?? Number.NaN;

describe('updateCusum', () => {
  it('adds the log-likelihood ratio of each outcome and never goes below zero', () => {
    const failed = updateCusum(initialCusum(), false, options);
    expect(failed.state.statistic).toBeCloseTo(Math.log(0.15 / 0.05), 12);
    expect(failed.state.observed).toBe(1);
    const passed = updateCusum(failed.state, true, options);
    expect(passed.state.statistic).toBeCloseTo(Math.log(0.15 / 0.05) + Math.log(0.85 / 0.95), 12);
    let state = passed.state;
    for (let index = 0; index < 20; index += 1) state = updateCusum(state, true, options).state;
    expect(state).toEqual({ statistic: 0, observed: 22 });
  });

  it('raises the alarm at the threshold: five failures in a row from a clean state', () => {
    let state = initialCusum();
    const alarms: boolean[] = [];
    for (let index = 0; index < 5; index += 1) {
      const step = updateCusum(state, false, options);
      alarms.push(step.alarm);
      state = step.state;
    }
    // Each failure adds log 3 = 1.10; the fifth crosses h = 5.
    expect(alarms).toEqual([false, false, false, false, true]);
    expect(state.statistic).toBeGreaterThanOrEqual(CUSUM_THRESHOLD);
  });

  it('alarms quickly after a drop from 0.95 to 0.85', () => {
    const lengths = Array.from({ length: 500 }, (_, run) => runLength(0.85, run, 10_000));
    // About 50 scored outcomes: about 1,000 served calls at a 5% shadow share.
    expect(median(lengths)).toBeLessThan(70);
    expect(Math.max(...lengths)).toBeLessThan(400);
  });

  it('rarely alarms on a healthy stream', () => {
    const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
    // A served model was certified at or above the pass rate, usually well above: at 0.97
    // the mean run length is about 80,000 outcomes (1.6 million served calls at 5%).
    expect(mean(Array.from({ length: 50 }, (_, run) => runLength(0.97, 1_000 + run, 1_000_000)))).toBeGreaterThan(30_000);
    // At exactly the pass rate it is at least e^h (Lorden); measured about 4,500.
    expect(mean(Array.from({ length: 200 }, (_, run) => runLength(0.95, 2_000 + run, 1_000_000)))).toBeGreaterThan(
      Math.max(Math.exp(CUSUM_THRESHOLD), 3_000),
    );
  });
});

describe('cusumOptionsFor', () => {
  it('watches for a drop of 0.1 below the pass rate', () => {
    expect(cusumOptionsFor(0.95)).toEqual({ healthyRate: 0.95, failingRate: 0.85, threshold: CUSUM_THRESHOLD });
    expect(cusumOptionsFor(0.9).failingRate).toBeCloseTo(0.8, 12);
    expect(cusumOptionsFor(0.1).failingRate).toBeCloseTo(0.05, 12);
  });

  it('rejects options that cannot describe a drop', () => {
    expect(() => cusumOptionsFor(1)).toThrow(RangeError);
    expect(() => updateCusum(initialCusum(), true, { healthyRate: 0.8, failingRate: 0.9, threshold: 5 })).toThrow(RangeError);
    expect(() => updateCusum(initialCusum(), true, { healthyRate: 0.95, failingRate: 0.85, threshold: 0 })).toThrow(RangeError);
  });
});
