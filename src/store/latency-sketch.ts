/**
 * Latency and time-to-first-token distributions as DDSketches (Datadog's
 * maintained implementation): mergeable, so per-minute rollups add up to any
 * window, with a relative error bound on every quantile (1 %: the p95 read
 * from a sketch is within 1 % of a true p95 value).
 *
 * Stored as their protobuf encoding; null stands for "no value yet".
 */
import { DDSketch } from '@datadog/sketches-js';

export const SKETCH_RELATIVE_ACCURACY = 0.01;

export function newSketch(): DDSketch {
  return new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY });
}

export function encodeSketch(sketch: DDSketch): Uint8Array {
  return sketch.toProto();
}

export function decodeSketch(bytes: Uint8Array): DDSketch {
  return DDSketch.fromProto(bytes);
}

/** Merges encoded sketches (nulls skipped); null when there was none. */
export function mergeEncoded(parts: Iterable<Uint8Array | null>): DDSketch | null {
  let merged: DDSketch | null = null;
  for (const part of parts) {
    if (part === null) continue;
    const sketch = decodeSketch(part);
    if (merged === null) merged = sketch;
    else merged.merge(sketch);
  }
  return merged;
}

export function quantiles(sketch: DDSketch | null): { p50: number | null; p95: number | null; p99: number | null } {
  if (sketch === null || sketch.count === 0) return { p50: null, p95: null, p99: null };
  return { p50: sketch.getValueAtQuantile(0.5), p95: sketch.getValueAtQuantile(0.95), p99: sketch.getValueAtQuantile(0.99) };
}
