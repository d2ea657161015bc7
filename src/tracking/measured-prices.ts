/**
 * What each model's tokens cost on taskgate's own engines, as measured in this
 * process: the measured cost (`Trace.measuredCostUsd`) of its recent calls
 * over their tokens. The router reads it when the operator ranks candidates by
 * measured cost (`routing.cost: measured`).
 *
 * One figure per model, prompt and completion tokens alike (an engine's time
 * is not split between them). Recent calls weigh most: once a model's sums
 * pass `HALVE_AT_TOKENS`, both are halved, so the figure follows a change of
 * load (an engine busier or idler than before) within a few million tokens.
 * Each process measures its own calls; the fleet's router leader ranks by its
 * own process's figures.
 */
import type { Trace } from '../store/store.js';

const HALVE_AT_TOKENS = 2_000_000;

interface Sums {
  costUsd: number;
  tokens: number;
}

export class MeasuredPrices {
  private readonly byModel = new Map<string, Sums>();

  /** Hot path: one map lookup per call with a measured cost, nothing for the others. */
  observe(trace: Trace): void {
    const tokens = trace.promptTokens + trace.completionTokens;
    if (trace.measuredCostUsd === null || trace.servedModel === null || tokens <= 0) return;
    let sums = this.byModel.get(trace.servedModel);
    if (sums === undefined) {
      sums = { costUsd: 0, tokens: 0 };
      this.byModel.set(trace.servedModel, sums);
    }
    sums.costUsd += trace.measuredCostUsd;
    sums.tokens += tokens;
    if (sums.tokens > HALVE_AT_TOKENS) {
      sums.costUsd /= 2;
      sums.tokens /= 2;
    }
  }

  /** USD per million tokens on `modelId`'s engines; null before any call of it had a measured cost. */
  perMillionTokens(modelId: string): number | null {
    const sums = this.byModel.get(modelId);
    return sums === undefined || sums.tokens === 0 ? null : (sums.costUsd / sums.tokens) * 1_000_000;
  }
}
