/**
 * What the request thread and the span worker (`span-export-worker.ts`)
 * share: the data the worker starts with, the shared counters, and the
 * messages between them.
 */
import type { RecordRing } from './record-ring.js';
import type { TelemetrySettings } from './telemetry.js';

export interface SpanWorkerData {
  settings: TelemetrySettings;
  /** The ring of span records (`span-record.ts`). */
  ring: RecordRing;
  /** `Counter`s, 32-bit each. */
  counters: SharedArrayBuffer;
  /** The engines' types by engine id (`gen_ai.provider.name` of engine spans). */
  engineTypes: Array<[string, string]>;
}

/** The shared counters, by slot. */
export const Counter = {
  /** Spans the collector accepted (worker). */
  Exported: 0,
  /** Spans the worker dropped: its queue full, a failed export. */
  Dropped: 1,
  /** Spans the worker holds: batched or being exported. */
  Queued: 2,
  /** Spans in the records the worker has read from the ring (the request thread counts those it wrote). */
  Read: 3,
} as const;

export const COUNTER_SLOTS = 4;

export type ToSpanWorker = { type: 'flush'; id: number } | { type: 'shutdown'; id: number };

export type FromSpanWorker = { type: 'flushed'; id: number } | { type: 'stopped'; id: number };
