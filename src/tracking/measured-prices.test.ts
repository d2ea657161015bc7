/**
 * Measured prices from two sources: the fleet's (the store's rollups, read
 * again once 30 s old) over this process's own calls, and the last figures
 * kept while the store does not answer.
 */
import { describe, expect, it } from 'vitest';
import { capturingLogger } from '../../test/helpers/capturing-logger.js';
import type { MeasuredModelCost, RollupStore } from '../store/rollup-store.js';
import { traceFixture } from '../../test/contracts/store/trace-fixture.js';
import { MEASURED_REFRESH_MS, MEASURED_WINDOW_MS, MeasuredPrices } from './measured-prices.js';

/** A call of 100 tokens on `servedModel` that cost `measuredCostUsd` of engine time. */
const call = (servedModel: string, measuredCostUsd: number) =>
  traceFixture({ servedModel, promptTokens: 90, completionTokens: 10, measuredCostUsd });

/** A rollup store whose measured sums the test sets, or makes fail. */
function storedSums(rows: MeasuredModelCost[] = []) {
  const state = { rows, failing: false, asked: [] as number[] };
  const rollups: RollupStore = {
    query: () => Promise.resolve([]),
    measuredByModel(since) {
      state.asked.push(since);
      return state.failing ? Promise.reject(new Error('store away')) : Promise.resolve(state.rows);
    },
  };
  return { state, rollups };
}

/** Lets the background read started by the last `perMillionTokens` settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('MeasuredPrices', () => {
  it("ranks by the fleet's figures where the store has them, and by this process's calls elsewhere", async () => {
    const { rollups } = storedSums([{ model: 'small', costUsd: 0.3, tokens: 100_000 }]); // $3 per million tokens, over the fleet
    const prices = new MeasuredPrices(rollups, capturingLogger().logger);
    prices.observe(call('small', 0.001)); // $10 per million tokens, here
    prices.observe(call('big', 0.01)); // $100 per million tokens, here
    expect(prices.perMillionTokens('small')).toBeCloseTo(10, 9); // the store is being read
    await settle();
    expect(prices.perMillionTokens('small')).toBeCloseTo(3, 9);
    expect(prices.perMillionTokens('big')).toBeCloseTo(100, 9);
    expect(prices.perMillionTokens('unknown')).toBeNull();
  });

  it("reads the fleet's last hour again once 30 s old, and keeps the last figures while the store does not answer", async () => {
    const { state, rollups } = storedSums([{ model: 'small', costUsd: 0.2, tokens: 100_000 }]);
    const { logger, lines } = capturingLogger();
    let now = 10 * MEASURED_WINDOW_MS;
    const prices = new MeasuredPrices(rollups, logger, () => now);
    prices.perMillionTokens('small');
    await settle();
    expect(state.asked).toEqual([9 * MEASURED_WINDOW_MS]);
    expect(prices.perMillionTokens('small')).toBeCloseTo(2, 9);
    expect(state.asked).toHaveLength(1);

    state.failing = true;
    now += MEASURED_REFRESH_MS + 1;
    prices.perMillionTokens('small');
    await settle();
    expect(state.asked).toHaveLength(2);
    expect(prices.perMillionTokens('small')).toBeCloseTo(2, 9);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);

    state.failing = false;
    state.rows = [{ model: 'small', costUsd: 0.5, tokens: 100_000 }];
    now += MEASURED_REFRESH_MS + 1;
    await settle(); // a read begun while the store was away ends
    prices.perMillionTokens('small');
    await settle();
    expect(state.asked.at(-1)).toBe(now - MEASURED_WINDOW_MS);
    expect(prices.perMillionTokens('small')).toBeCloseTo(5, 9);
  });
});
