/**
 * The price the router ranks models by (`routing.cost` in the config): USD per
 * million prompt and completion tokens. `catalog` is the model's catalog
 * price; `measured` is what its tokens cost on taskgate's own engines
 * (`MeasuredPrices`), the catalog price standing in until a model has a
 * measured cost. A pure function of the model and what was measured so far.
 */
import type { Usage } from '../api/chat-types.js';
import type { CatalogModel } from '../catalog/catalog.js';
import type { MeasuredPrices } from '../tracking/measured-prices.js';

export type ModelPrice = CatalogModel['price'];
export type PriceOf = (model: CatalogModel) => ModelPrice;

export const catalogPrices: PriceOf = (model) => model.price;

export function measuredPrices(measured: MeasuredPrices): PriceOf {
  return (model) => {
    const perMillion = measured.perMillionTokens(model.id);
    return perMillion === null ? model.price : { input: perMillion, output: perMillion };
  };
}

/**
 * USD for a call's tokens on `model` at `priceOf`'s price: what the router
 * counts as a replay's eval spend and a routed call's saving, so that both are
 * in the money the router ranks by (at catalog prices, `costOf`'s figure).
 */
export function costAt(priceOf: PriceOf, model: CatalogModel, usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens'>): number {
  const price = priceOf(model);
  return (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1_000_000;
}
