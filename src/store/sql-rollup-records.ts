/**
 * The `rollups` table's rows (`rollup-store.ts`) as both SQL back ends read
 * and write them (`sql-records.ts` says how rows map to records). Merging a
 * stored row with a folded one is `addRollupRows` in `rollup-fold.ts`.
 */
import type { RollupRow } from './rollup-store.js';
import { bufferOf, selectList } from './sql-records.js';

/** A `RollupRow` as stored: error classes as JSON, sketches as bytes. */
export type RollupRecord = Omit<RollupRow, 'errorClasses' | 'latency' | 'ttft'> & {
  errorClasses: string;
  latency: Buffer | null;
  ttft: Buffer | null;
};

export const rollupColumns = selectList<RollupRecord>({
  accountId: 'account_id',
  project: 'project',
  workload: 'workload',
  environment: 'environment',
  model: 'model',
  minute: 'minute',
  calls: 'calls',
  errors: 'errors',
  errorClasses: 'error_classes',
  promptTokens: 'prompt_tokens',
  completionTokens: 'completion_tokens',
  costUsd: 'cost_usd',
  measuredCalls: 'measured_calls',
  measuredCostUsd: 'measured_cost_usd',
  measuredTokens: 'measured_tokens',
  cachedCalls: 'cached_calls',
  costSavedUsd: 'cost_saved_usd',
  latency: 'latency',
  ttft: 'ttft',
});

export function fromRollupRecord(record: RollupRecord): RollupRow {
  return {
    ...record,
    errorClasses: JSON.parse(record.errorClasses) as Record<string, number>,
    latency: record.latency === null ? null : new Uint8Array(record.latency),
    ttft: record.ttft === null ? null : new Uint8Array(record.ttft),
  };
}

export function toRollupRecord(row: RollupRow): RollupRecord {
  return { ...row, errorClasses: JSON.stringify(row.errorClasses), latency: bufferOf(row.latency), ttft: bufferOf(row.ttft) };
}
