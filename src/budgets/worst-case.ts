/**
 * The most a call can cost, before it runs: what a budget reserves. It must
 * not fall below the actual cost (a reservation that can be passed is no cap),
 * and it should not be absurdly above it (a cap would refuse calls that fit).
 *
 *   prompt     = request bytes / 3, rounded up: a BPE tokenizer makes a token
 *                of at least one byte and usually three to four, so a third of
 *                the bytes (JSON punctuation included) is a safe upper estimate
 *                of the prompt's tokens for text.
 *   completion = max_completion_tokens ?? max_tokens, else the room the model's
 *                context leaves after the prompt's estimate (at least 1), per
 *                choice (`n`).
 *   cost       = prompt × input price + completion × output price, in the
 *                served model's prices (catalog, or measured when `routing.cost`
 *                is measured: the caller passes whichever the cost is counted
 *                in), as micro-dollars rounded up.
 *
 * Prices are USD per million tokens, so tokens × price is already micros.
 */
import type { CatalogModel } from '../catalog/catalog.js';
import { ceilMicros } from './budget-caps.js';

export interface WorstCaseInput {
  /** The request body's length in bytes. */
  requestBytes: number;
  /** `max_completion_tokens ?? max_tokens` as the request gave it; null when it gave neither. */
  maxCompletionTokens: number | null;
  /** `n`: how many choices the call asks for (default 1). */
  choices?: number;
  /** The served model's context window, in tokens. */
  contextWindow: number;
  /** The served model's price in USD per million tokens. */
  price: CatalogModel['price'];
}

/** A safe upper estimate of a request's prompt tokens from its size. */
export function promptTokenEstimate(requestBytes: number): number {
  return Math.ceil(Math.max(0, requestBytes) / 3);
}

/** The completion tokens a call may generate, over all its choices. */
export function completionTokenBound(input: Omit<WorstCaseInput, 'price'>): number {
  const perChoice = input.maxCompletionTokens ?? Math.max(1, input.contextWindow - promptTokenEstimate(input.requestBytes));
  return Math.max(0, perChoice) * Math.max(1, input.choices ?? 1);
}

/** The call's worst-case cost in micro-dollars, rounded up. */
export function worstCaseMicros(input: WorstCaseInput): number {
  const micros = promptTokenEstimate(input.requestBytes) * input.price.input + completionTokenBound(input) * input.price.output;
  return ceilMicros(micros);
}
