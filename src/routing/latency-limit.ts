/**
 * Latency is part of passing. A candidate may serve a workload only if its
 * latency at the contract's percentile stays within the contract's limits:
 * `max_latency_ms`, and by default `max_latency_factor` (2) times the
 * requested model's own latency on this workload, so a cheap model 200 times
 * slower never takes a route unasked. `max_ttft_ms` bounds the time to the
 * first token of streamed calls. Pure functions of DDSketches: the router
 * keeps one per model and workload (replays, and the requested model's own
 * production calls), and one of the serving model's recent production calls
 * to catch a drift. The factor limit allows at least `LATENCY_SLACK_MS` over
 * the requested model's own latency, so milliseconds of noise never count.
 */
import type { DDSketch } from '@datadog/sketches-js';

export interface LatencyPolicy {
  /** 50 to 99.9: the percentile the limits apply to. */
  percentile: number;
  maxMs: number | null;
  maxTtftMs: number | null;
  /** Times the requested model's own latency at the percentile; null for no such limit. */
  maxFactor: number | null;
  /** Observations a sketch needs before its percentile is trusted. */
  minObservations: number;
}

export type LatencyVerdict =
  | { state: 'ok' }
  /** Not enough observations yet to say: the candidate cannot be certified until there are. */
  | { state: 'unknown'; reason: string }
  | { state: 'too_slow'; reason: string };

export const LATENCY_MIN_OBSERVATIONS = 20;
/**
 * A factor limit is never tighter than the requested model's own latency
 * plus this: 5 ms against 12 ms is noise to a caller (and to a loaded
 * machine), 5 ms against 1 s is not.
 */
export const LATENCY_SLACK_MS = 100;

export interface LatencySketches {
  latency: DDSketch | null;
  ttft: DDSketch | null;
}

export function latencyPolicyOf(contract: {
  latency_percentile: number;
  max_latency_ms: number | null;
  max_ttft_ms: number | null;
  max_latency_factor: number | null;
}): LatencyPolicy {
  return {
    percentile: contract.latency_percentile,
    maxMs: contract.max_latency_ms,
    maxTtftMs: contract.max_ttft_ms,
    maxFactor: contract.max_latency_factor,
    minObservations: LATENCY_MIN_OBSERVATIONS,
  };
}

/** The value at the percentile, or null below `minObservations`. */
export function percentileOf(sketch: DDSketch | null, percentile: number, minObservations: number): number | null {
  if (sketch === null || sketch.count < minObservations) return null;
  return sketch.getValueAtQuantile(percentile / 100);
}

/**
 * The latency limit in ms at the percentile: the tighter of `maxMs` and the
 * factor times the reference's own; null when neither applies; `undefined`
 * while the reference's own latency is not known well enough to set it.
 */
export function latencyLimitMs(policy: LatencyPolicy, reference: DDSketch | null): number | null | undefined {
  let limit = policy.maxMs ?? Infinity;
  if (policy.maxFactor !== null) {
    const own = percentileOf(reference, policy.percentile, policy.minObservations);
    if (own === null) return undefined;
    limit = Math.min(limit, Math.max(policy.maxFactor * own, own + LATENCY_SLACK_MS));
  }
  return Number.isFinite(limit) ? limit : null;
}

export function judgeLatency(policy: LatencyPolicy, candidate: LatencySketches, reference: LatencySketches): LatencyVerdict {
  const p = `p${policy.percentile}`;
  const limit = latencyLimitMs(policy, reference.latency);
  if (limit === undefined) return { state: 'unknown', reason: `the requested model's own ${p} latency on this workload is not known yet` };
  if (limit !== null) {
    const observed = percentileOf(candidate.latency, policy.percentile, policy.minObservations);
    if (observed === null) return { state: 'unknown', reason: `fewer than ${policy.minObservations} latencies measured` };
    if (observed > limit)
      return { state: 'too_slow', reason: `${p} latency ${Math.round(observed)} ms is over the limit of ${Math.round(limit)} ms` };
  }
  if (policy.maxTtftMs !== null) {
    const observed = percentileOf(candidate.ttft, policy.percentile, policy.minObservations);
    // A workload that never streams has no time to first token to keep within a limit.
    if (observed === null)
      return (reference.ttft?.count ?? 0) > 0
        ? { state: 'unknown', reason: `fewer than ${policy.minObservations} streamed replies measured` }
        : { state: 'ok' };
    if (observed > policy.maxTtftMs)
      return {
        state: 'too_slow',
        reason: `${p} time to first token ${Math.round(observed)} ms is over the limit of ${policy.maxTtftMs} ms`,
      };
  }
  return { state: 'ok' };
}
