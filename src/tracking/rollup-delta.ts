/**
 * A batch of traces folded into per-minute rollup rows (pure): the store adds
 * these to what it has, in the transaction that stores the traces.
 */
import type { RollupRow } from '../store/rollup-store.js';
import type { Trace } from '../store/store.js';
import { encodeSketch, newSketch } from './latency-sketch.js';
import type { DDSketch } from '@datadog/sketches-js';

export const MINUTE_MS = 60_000;

interface Accumulator extends Omit<RollupRow, 'latency' | 'ttft'> {
  latency: DDSketch;
  ttft: DDSketch | null;
}

function rollupKey(row: Pick<RollupRow, 'accountId' | 'project' | 'workload' | 'environment' | 'model' | 'minute'>): string {
  return `${row.accountId}\u0000${row.project}\u0000${row.workload}\u0000${row.environment}\u0000${row.model}\u0000${row.minute}`;
}

export function foldTraces(traces: readonly Trace[]): RollupRow[] {
  const rows = new Map<string, Accumulator>();
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
      row = { ...identity, calls: 0, errors: 0, errorClasses: {}, promptTokens: 0, completionTokens: 0, costUsd: 0, latency: newSketch(), ttft: null };
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
    row.latency.accept(Math.max(0, trace.latencyMs));
    if (trace.ttftMs !== null) (row.ttft ??= newSketch()).accept(Math.max(0, trace.ttftMs));
  }
  return [...rows.values()].map((row) => ({ ...row, latency: encodeSketch(row.latency), ttft: row.ttft === null ? null : encodeSketch(row.ttft) }));
}
