import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../catalog/catalog.js';
import { traceFixture } from '../../test/contracts/store/trace-fixture.js';
import { MeasuredPrices } from '../tracking/measured-prices.js';
import { silentLogger } from '../log/logger.js';
import type { RollupStore } from '../store/rollup-store.js';

/** A store with no measured call in it: the prices are this process's. */
const noFleetFigures: RollupStore = { query: () => Promise.resolve([]), measuredByModel: () => Promise.resolve([]) };
import { callShapeOf, eligibleCandidates } from './candidates.js';
import { catalogPrices, measuredPrices } from './model-prices.js';

function model(id: string, price: number): CatalogModel {
  return {
    id,
    provider: null,
    family: id,
    aliases: [],
    price: { input: price, output: price },
    contextWindow: 8192,
    supports: new Set(),
    servedBy: [],
  };
}

const big = model('big', 10);
const cheap = model('cheap', 1);
const pricey = model('pricey', 3);
const shape = callShapeOf({ messages: [{ role: 'user', content: 'hi' }] }, { prompt_tokens: 90, completion_tokens: 10 });
const contract = { allow_upgrade: false };

/** A call of 100 tokens on `servedModel` that cost `measuredCostUsd` of engine time. */
const call = (servedModel: string, measuredCostUsd: number | null) =>
  traceFixture({ servedModel, promptTokens: 90, completionTokens: 10, measuredCostUsd });

describe('measured prices', () => {
  it("are each model's measured cost per million tokens, the catalog price until it has one", () => {
    const measured = new MeasuredPrices(noFleetFigures, silentLogger);
    const priceOf = measuredPrices(measured);
    expect(priceOf(cheap)).toEqual(cheap.price);
    measured.observe(call('cheap', 0.000_5));
    measured.observe(call('cheap', 0.001_5));
    measured.observe(call('cheap', null)); // on an engine without cost_per_hour: left out
    expect(measured.perMillionTokens('cheap')).toBeCloseTo(10, 9); // $0.002 over 200 tokens
    expect(priceOf(cheap)).toEqual({ input: 10, output: 10 });
  });

  it('decide the order of candidates when the router ranks by them', () => {
    const measured = new MeasuredPrices(noFleetFigures, silentLogger);
    measured.observe(call('cheap', 0.000_5)); // $5 per million tokens
    measured.observe(call('pricey', 0.000_1)); // $1 per million tokens
    measured.observe(call('big', 0.01)); // $100 per million tokens
    expect(eligibleCandidates([big, cheap, pricey], big, shape, contract, catalogPrices).map((candidate) => candidate.id)).toEqual([
      'cheap',
      'pricey',
    ]);
    expect(
      eligibleCandidates([big, cheap, pricey], big, shape, contract, measuredPrices(measured)).map((candidate) => candidate.id),
    ).toEqual(['pricey', 'cheap']);
  });
});
