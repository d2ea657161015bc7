/**
 * A batch of traces folded into per-minute rollup rows (pure): the store adds
 * these to what it has (`addRollupRows`), in the transaction that stores the
 * traces. A folded row keeps its sketches live until then: each is encoded
 * once, after the merge (a DDSketch's protobuf encoding or decoding costs
 * 30-50 µs, and encoding the folded sketch only to decode it for the merge
 * doubled a batch's rollup work).
 */
import type { RollupRow } from '../store/rollup-store.js';
import type { Trace } from '../store/store.js';
import { decodeSketch, encodeSketch, newSketch } from './latency-sketch.js';
import type { DDSketch } from '@datadog/sketches-js';

export const MINUTE_MS = 60_000;

/** A batch's row, its sketches not yet encoded. */
export interface FoldedRollup extends Omit<RollupRow, 'latency' | 'ttft'> {
  latency: DDSketch;
  ttft: DDSketch | null;
}

/** What names a row: equal keys, same row. */
export function rollupKey(row: Pick<RollupRow, 'accountId' | 'project' | 'workload' | 'environment' | 'model' | 'minute'>): string {
  return `${row.accountId}\u0000${row.project}\u0000${row.workload}\u0000${row.environment}\u0000${row.model}\u0000${row.minute}`;
}

export function foldTraces(traces: readonly Trace[]): FoldedRollup[] {
  const rows = new Map<string, FoldedRollup>();
  for (const trace of traces) {
    const identity = {
      accountId: trace.accountId,
      project: trace.project ?? '',
      workload: trace.workload ?? '',
      environment: trace.environment,
      model: trace.servedModel ?? '',
      minute: Math.floor(trace.startedAt / MINUTE_MS) * MINUTE_MS,
    };
    const key = rollupKey(identity);
    let row = rows.get(key);
    if (row === undefined) {
      row = {
        ...identity, calls: 0, errors: 0, errorClasses: {}, promptTokens: 0, completionTokens: 0, costUsd: 0,
        measuredCalls: 0, measuredCostUsd: 0, measuredTokens: 0, latency: newSketch(), ttft: null,
      };
      rows.set(key, row);
    }
    row.calls++;
    if (trace.status === 'error') row.errors++;
    if (trace.status !== 'ok') {
      const errorClass = trace.errorClass ?? 'unknown';
      row.errorClasses[errorClass] = (row.errorClasses[errorClass] ?? 0) + 1;
    }
    row.promptTokens += trace.promptTokens;
    row.completionTokens += trace.completionTokens;
    row.costUsd += trace.costUsd;
    if (trace.measuredCostUsd !== null) {
      row.measuredCalls++;
      row.measuredCostUsd += trace.measuredCostUsd;
      row.measuredTokens += trace.promptTokens + trace.completionTokens;
    }
    row.latency.accept(Math.max(0, trace.latencyMs));
    if (trace.ttftMs !== null) (row.ttft ??= newSketch()).accept(Math.max(0, trace.ttftMs));
  }
  return [...rows.values()];
}

/** A folded row added to the stored row of the same key (counts summed, error classes and sketches merged), or alone when none is stored. */
export function addRollupRows(stored: RollupRow | undefined, added: FoldedRollup): RollupRow {
  if (stored === undefined) return { ...added, latency: encodeSketch(added.latency), ttft: added.ttft === null ? null : encodeSketch(added.ttft) };
  const errorClasses = { ...stored.errorClasses };
  for (const [name, count] of Object.entries(added.errorClasses)) errorClasses[name] = (errorClasses[name] ?? 0) + count;
  return {
    ...stored,
    calls: stored.calls + added.calls,
    errors: stored.errors + added.errors,
    errorClasses,
    promptTokens: stored.promptTokens + added.promptTokens,
    completionTokens: stored.completionTokens + added.completionTokens,
    costUsd: stored.costUsd + added.costUsd,
    measuredCalls: stored.measuredCalls + added.measuredCalls,
    measuredCostUsd: stored.measuredCostUsd + added.measuredCostUsd,
    measuredTokens: stored.measuredTokens + added.measuredTokens,
    latency: mergedEncoding(stored.latency, added.latency),
    ttft: mergedEncoding(stored.ttft, added.ttft),
  };
}

/** A stored sketch with a live one merged in, encoded; null when there is neither. */
function mergedEncoding(stored: Uint8Array | null, added: DDSketch | null): Uint8Array | null {
  if (stored === null) return added === null ? null : encodeSketch(added);
  const sketch = decodeSketch(stored);
  if (added !== null) sketch.merge(added);
  return encodeSketch(sketch);
}
