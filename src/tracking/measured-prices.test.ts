/**
 * Measured prices from two sources: the fleet's (the store's rollups, re-read
 * on a timer) over this process's own calls, and the last figures kept while
 * the store does not answer.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { capturingLogger } from '../../test/helpers/capturing-logger.js';
import type { MeasuredModelCost, RollupStore } from '../store/rollup-store.js';
import { traceFixture } from '../store/trace-fixture.js';
import { MEASURED_REFRESH_MS, MEASURED_WINDOW_MS, MeasuredPrices } from './measured-prices.js';

/** A call of 100 tokens on `servedModel` that cost `measuredCostUsd` of engine time. */
const call = (servedModel: string, measuredCostUsd: number) => traceFixture({ servedModel, promptTokens: 90, completionTokens: 10, measuredCostUsd });

/** A rollup store whose measured sums the test sets, or makes fail. */
function storedSums() {
  const state = { rows: [] as MeasuredModelCost[], failing: false, asked: [] as number[] };
  const rollups: RollupStore = {
    query: () => Promise.resolve([]),
    measuredByModel(since) {
      state.asked.push(since);
      return state.failing ? Promise.reject(new Error('store away')) : Promise.resolve(state.rows);
    },
  };
  return { state, rollups };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('MeasuredPrices', () => {
  it('ranks by the fleet\'s figures where the store has them, and by this process\'s calls elsewhere', () => {
    const prices = new MeasuredPrices();
    prices.observe(call('small', 0.001)); // $10 per million tokens, here
    prices.observe(call('big', 0.01)); // $100 per million tokens, here
    prices.useStored([{ model: 'small', costUsd: 0.3, tokens: 100_000 }]); // $3 per million tokens, over the fleet
    expect(prices.perMillionTokens('small')).toBeCloseTo(3, 9);
    expect(prices.perMillionTokens('big')).toBeCloseTo(100, 9);
    expect(prices.perMillionTokens('unknown')).toBeNull();
  });

  it('reads the fleet\'s last hour at once and every 30 s, and keeps the last figures while the store does not answer', async () => {
    vi.useFakeTimers();
    const { state, rollups } = storedSums();
    const { logger, lines } = capturingLogger();
    const prices = new MeasuredPrices();
    let now = 10 * MEASURED_WINDOW_MS;
    state.rows = [{ model: 'small', costUsd: 0.2, tokens: 100_000 }];
    const stop = prices.refreshFrom(rollups, logger, () => now);
    await vi.advanceTimersByTimeAsync(0);
    expect(state.asked).toEqual([9 * MEASURED_WINDOW_MS]);
    expect(prices.perMillionTokens('small')).toBeCloseTo(2, 9);

    state.failing = true;
    now += MEASURED_REFRESH_MS;
    await vi.advanceTimersByTimeAsync(2 * MEASURED_REFRESH_MS);
    expect(state.asked).toHaveLength(3);
    expect(prices.perMillionTokens('small')).toBeCloseTo(2, 9);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);

    state.failing = false;
    state.rows = [{ model: 'small', costUsd: 0.5, tokens: 100_000 }];
    await vi.advanceTimersByTimeAsync(MEASURED_REFRESH_MS);
    expect(prices.perMillionTokens('small')).toBeCloseTo(5, 9);
    expect(lines.some((line) => line.level === 'info' && line.msg.includes('again'))).toBe(true);

    stop();
    await vi.advanceTimersByTimeAsync(5 * MEASURED_REFRESH_MS);
    expect(state.asked).toHaveLength(4);
  });
});
