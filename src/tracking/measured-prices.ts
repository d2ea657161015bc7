/**
 * What each model's tokens cost on taskgate's own engines, measured: the
 * measured cost (`Trace.measuredCostUsd`) of its calls over their tokens. The
 * router reads it when the operator ranks candidates by measured cost
 * (`routing.cost: measured`).
 *
 * One figure per model, prompt and completion tokens alike (an engine's time
 * is not split between them), from two sources:
 * - the fleet's: the store's rollups of the last hour, over every process and
 *   account, kept in a `RefreshingCache` read again in the background once
 *   30 s old. Every process of a fleet, the router's leader among them, ranks
 *   by the same figures, and a restart starts from them. A store that does not
 *   answer leaves the last figures in use;
 * - this process's own recent calls (`observe`), for a model the store has no
 *   measured call of yet in that hour (a fresh start, a quiet model). Recent
 *   calls weigh most: once a model's sums pass `HALVE_AT_TOKENS`, both are
 *   halved, so the figure follows a change of load within a few million tokens.
 */
import type { Logger } from '../log/logger.js';
import { errorFields } from '../log/logger.js';
import { createRefreshingCache, type RefreshingCache } from '../store/refreshing-cache.js';
import type { RollupStore } from '../store/rollup-store.js';
import type { Trace } from '../store/store.js';

const HALVE_AT_TOKENS = 2_000_000;
/** The fleet's figures cover the rollups of this last stretch of time. */
export const MEASURED_WINDOW_MS = 60 * 60_000;
/** How often the fleet's figures are re-read from the store. */
export const MEASURED_REFRESH_MS = 30_000;

interface Sums {
  costUsd: number;
  tokens: number;
}

export class MeasuredPrices {
  private readonly byModel = new Map<string, Sums>();
  private readonly fleet: RefreshingCache<'fleet', ReadonlyMap<string, Sums>>;

  constructor(rollups: RollupStore, logger: Logger, now: () => number = Date.now) {
    this.fleet = createRefreshingCache({
      keyOf: () => 'fleet',
      read: async () => {
        const rows = await rollups.measuredByModel(now() - MEASURED_WINDOW_MS);
        return new Map(rows.filter((row) => row.tokens > 0).map((row) => [row.model, { costUsd: row.costUsd, tokens: row.tokens }]));
      },
      fallback: new Map(),
      ttlMs: MEASURED_REFRESH_MS,
      onError: (error) => logger.warn('measured prices: the store did not answer; ranking by the last figures read', errorFields(error)),
      now,
    });
  }

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

  /** USD per million tokens on `modelId`'s engines: the fleet's figure, else this process's; null before any call of it had a measured cost. */
  perMillionTokens(modelId: string): number | null {
    const sums = this.fleet.get('fleet').get(modelId) ?? this.byModel.get(modelId);
    return sums === undefined || sums.tokens === 0 ? null : (sums.costUsd / sums.tokens) * 1_000_000;
  }
}
