/**
 * A batch of traces folded into per-minute rollup rows (pure): the store adds
 * these to what it has (`addRollupRows`), in the transaction that stores the
 * traces. A folded row keeps its sketches live until then: each is encoded
 * once, after the merge (a DDSketch's protobuf encoding or decoding costs
 * 30-50 µs, and encoding the folded sketch only to decode it for the merge
 * doubled a batch's rollup work).
 */
import type { RollupRow } from './rollup-store.js';
import type { Trace } from './store.js';
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
  let previous: FoldedRollup | undefined;
  for (const trace of traces) {
    const minute = Math.floor(trace.startedAt / MINUTE_MS) * MINUTE_MS;
    // A batch is mostly runs of one workload's calls in one minute: the row of
    // the trace before is compared first, field by field, before a key is made
    // (the key alone cost some 0.4 µs a trace).
    let row = previous !== undefined && isRowOf(previous, trace, minute) ? previous : undefined;
    if (row === undefined) {
      const identity = {
        accountId: trace.accountId,
        project: trace.project ?? '',
        workload: trace.workload ?? '',
        environment: trace.environment,
        model: trace.servedModel ?? '',
        minute,
      };
      const key = rollupKey(identity);
      row = rows.get(key);
      if (row === undefined) {
        row = {
          ...identity,
          calls: 0,
          errors: 0,
          errorClasses: {},
          promptTokens: 0,
          completionTokens: 0,
          costUsd: 0,
          measuredCalls: 0,
          measuredCostUsd: 0,
          measuredTokens: 0,
          cachedCalls: 0,
          costSavedUsd: 0,
          latency: newSketch(),
          ttft: null,
        };
        rows.set(key, row);
      }
    }
    previous = row;
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
    if (trace.cached === true) {
      row.cachedCalls++;
      row.costSavedUsd += trace.costSavedUsd ?? 0;
    }
    row.latency.accept(Math.max(0, trace.latencyMs));
    if (trace.ttftMs !== null) (row.ttft ??= newSketch()).accept(Math.max(0, trace.ttftMs));
  }
  return [...rows.values()];
}

/** Whether the trace belongs in this row (the fields of `rollupKey`). */
function isRowOf(row: FoldedRollup, trace: Trace, minute: number): boolean {
  return (
    row.minute === minute &&
    row.accountId === trace.accountId &&
    row.project === (trace.project ?? '') &&
    row.workload === (trace.workload ?? '') &&
    row.environment === trace.environment &&
    row.model === (trace.servedModel ?? '')
  );
}

type SketchName = 'latency' | 'ttft';

/**
 * The sketches this process last stored, decoded. A batch's rows are mostly
 * the rows the batch before wrote (the same workloads, the same minute), and
 * decoding a stored sketch again cost 80 µs a row (two per row, every batch).
 * A remembered sketch is used only when the stored bytes are the very bytes
 * it was encoded to: a row another process wrote since, or a write that was
 * rolled back, differs, and is decoded from what is stored.
 */
export class DecodedSketches {
  private readonly entries = new Map<string, { bytes: Uint8Array; sketch: DDSketch }>();

  constructor(private readonly maxEntries = 64) {}

  /** The sketch `bytes` encode (`which` of the row `key` names), to merge into: handed over (forgotten here), so a write that fails leaves nothing behind. */
  take(key: string, which: SketchName, bytes: Uint8Array): DDSketch {
    const entryKey = `${key}\u0000${which}`;
    const entry = this.entries.get(entryKey);
    if (entry === undefined) return decodeSketch(bytes);
    this.entries.delete(entryKey);
    return Buffer.from(entry.bytes.buffer, entry.bytes.byteOffset, entry.bytes.byteLength).equals(bytes)
      ? entry.sketch
      : decodeSketch(bytes);
  }

  /** Remembers a sketch just encoded to `bytes`; whoever made it must not change it after. */
  remember(key: string, which: SketchName, bytes: Uint8Array, sketch: DDSketch): void {
    this.entries.set(`${key}\u0000${which}`, { bytes, sketch });
    // The oldest first: rows of minutes gone by are not written again.
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}

/**
 * A folded row added to the stored row of the same key (counts summed, error
 * classes and sketches merged), or alone when none is stored. With
 * `sketches`, stored sketches it remembers are not decoded again, and the
 * merged ones are remembered.
 */
export function addRollupRows(stored: RollupRow | undefined, added: FoldedRollup, sketches?: DecodedSketches): RollupRow {
  const key = sketches === undefined ? '' : rollupKey(added);
  const latency = mergedEncoding(stored?.latency ?? null, added.latency, sketches, key, 'latency');
  const ttft = mergedEncoding(stored?.ttft ?? null, added.ttft, sketches, key, 'ttft');
  if (stored === undefined) return { ...added, latency, ttft };
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
    cachedCalls: stored.cachedCalls + added.cachedCalls,
    costSavedUsd: stored.costSavedUsd + added.costSavedUsd,
    latency,
    ttft,
  };
}

/** A stored sketch with a live one merged in, encoded (and remembered, with `sketches`); null when there is neither. */
function mergedEncoding(
  stored: Uint8Array | null,
  added: DDSketch,
  sketches: DecodedSketches | undefined,
  key: string,
  which: SketchName,
): Uint8Array;
function mergedEncoding(
  stored: Uint8Array | null,
  added: DDSketch | null,
  sketches: DecodedSketches | undefined,
  key: string,
  which: SketchName,
): Uint8Array | null;
function mergedEncoding(
  stored: Uint8Array | null,
  added: DDSketch | null,
  sketches: DecodedSketches | undefined,
  key: string,
  which: SketchName,
): Uint8Array | null {
  let sketch = added;
  if (stored !== null) {
    sketch = sketches === undefined ? decodeSketch(stored) : sketches.take(key, which, stored);
    if (added !== null) sketch.merge(added);
  }
  if (sketch === null) return null;
  const bytes = encodeSketch(sketch);
  sketches?.remember(key, which, bytes, sketch);
  return bytes;
}
