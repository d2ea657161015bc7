/**
 * Which catalog models may stand in for a requested model on one call, and
 * what a call costs on each: pure functions of the catalog, the call and the
 * contract.
 *
 * A candidate must be cheaper than the requested model for this call's tokens
 * (unless the contract allows upgrades), support what the call needs (tools,
 * JSON output, images, the prompt's length), and be on the contract's
 * candidate list when it has one.
 */
import type { GenerationParameters, Usage } from '../api/chat-types.js';
import { firstImagePart } from '../api/content-capabilities.js';
import type { CatalogModel } from '../catalog/catalog.js';
import { catalogPrices, costAt, type PriceOf } from './model-prices.js';

export interface CallShape {
  needsTools: boolean;
  needsJson: boolean;
  needsVision: boolean;
  promptTokens: number;
  completionTokens: number;
}

/** A route's shape before it has seen a call: needs nothing, one token each way. */
export const NO_CALL_SHAPE: CallShape = { needsTools: false, needsJson: false, needsVision: false, promptTokens: 1, completionTokens: 1 };

export function callShapeOf(parameters: GenerationParameters, usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens'>): CallShape {
  const format = parameters.response_format?.type;
  return {
    needsTools: (parameters.tools?.length ?? 0) > 0 && parameters.tool_choice !== 'none',
    needsJson: format === 'json_object' || format === 'json_schema',
    needsVision: firstImagePart(parameters.messages) !== undefined,
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
  };
}

/** USD for a call of this shape on `model`, at the price the router ranks by (`routing.cost`; the catalog's by default). */
export function costPerCall(model: CatalogModel, shape: CallShape, priceOf: PriceOf = catalogPrices): number {
  return costAt(priceOf, model, { prompt_tokens: shape.promptTokens, completion_tokens: shape.completionTokens });
}

/** Candidates for `requested` on a call of this shape, cheapest first at `priceOf`. */
export function eligibleCandidates(
  models: readonly CatalogModel[],
  requested: CatalogModel,
  shape: CallShape,
  contract: { candidates?: readonly string[]; allow_upgrade: boolean },
  priceOf: PriceOf = catalogPrices,
): CatalogModel[] {
  const callCost = (model: CatalogModel) => costPerCall(model, shape, priceOf);
  const ceiling = callCost(requested);
  const allowed = contract.candidates === undefined ? null : new Set(contract.candidates);
  return models
    .filter(
      (model) =>
        model.id !== requested.id &&
        (allowed === null || allowed.has(model.id)) &&
        (contract.allow_upgrade || callCost(model) < ceiling) &&
        (!shape.needsTools || model.supports.has('tools')) &&
        (!shape.needsJson || model.supports.has('json')) &&
        (!shape.needsVision || model.supports.has('vision')) &&
        model.contextWindow >= shape.promptTokens + shape.completionTokens,
    )
    .sort((left, right) => callCost(left) - callCost(right) || left.id.localeCompare(right.id));
}
