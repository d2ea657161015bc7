import { DDSketch } from '@datadog/sketches-js';
import { describe, expect, it } from 'vitest';
import {
  judgeLatency,
  LATENCY_MIN_OBSERVATIONS,
  LATENCY_SLACK_MS,
  latencyLimitMs,
  latencyPolicyOf,
  percentileOf,
  type LatencyPolicy,
  type LatencySketches,
} from './latency-limit.js';

/** A sketch of these latencies, at the 1% accuracy the router keeps them at. */
function sketchOf(values: readonly number[]): DDSketch {
  const sketch = new DDSketch({ relativeAccuracy: 0.01 });
  for (const value of values) sketch.accept(value);
  return sketch;
}

/** `count` latencies of `ms` each (by default just enough to be trusted). */
const steady = (ms: number, count = LATENCY_MIN_OBSERVATIONS) => sketchOf(new Array<number>(count).fill(ms));

/** The contract's defaults: p95, at most twice the requested model's own latency. */
const policy = (overrides: Partial<LatencyPolicy> = {}): LatencyPolicy => ({
  percentile: 95,
  maxMs: null,
  maxTtftMs: null,
  maxFactor: 2,
  minObservations: LATENCY_MIN_OBSERVATIONS,
  ...overrides,
});
const measured = (latency: DDSketch | null, ttft: DDSketch | null = null): LatencySketches => ({ latency, ttft });
const NOTHING = measured(null);

describe('latencyPolicyOf', () => {
  it('reads the contract’s limits, and trusts a percentile from 20 latencies on', () => {
    expect(latencyPolicyOf({ latency_percentile: 99, max_latency_ms: 800, max_ttft_ms: 200, max_latency_factor: null })).toEqual({
      percentile: 99,
      maxMs: 800,
      maxTtftMs: 200,
      maxFactor: null,
      minObservations: 20,
    });
  });
});

describe('percentileOf', () => {
  it('says nothing below the observations it needs, and reads the asked percentile once there are enough', () => {
    expect(percentileOf(null, 95, 20)).toBeNull();
    expect(percentileOf(steady(500, 19), 95, 20)).toBeNull();
    expect(percentileOf(steady(500, 20), 95, 20)).toBeCloseTo(500, -1);
    const spread = sketchOf(Array.from({ length: 100 }, (_, index) => index + 1));
    expect(percentileOf(spread, 50, 20)).toBeGreaterThan(49);
    expect(percentileOf(spread, 50, 20)).toBeLessThan(51);
    expect(percentileOf(spread, 95, 20)).toBeGreaterThan(94);
    expect(percentileOf(spread, 95, 20)).toBeLessThan(97);
  });
});

describe('latencyLimitMs', () => {
  it('is null when the contract sets no limit, and max_latency_ms alone needs no reference', () => {
    expect(latencyLimitMs(policy({ maxFactor: null }), null)).toBeNull();
    expect(latencyLimitMs(policy({ maxFactor: null, maxMs: 800 }), null)).toBe(800);
  });

  it('waits for the requested model’s own latency before a factor limit can be set', () => {
    expect(latencyLimitMs(policy(), null)).toBeUndefined();
    expect(latencyLimitMs(policy(), steady(1_000, LATENCY_MIN_OBSERVATIONS - 1))).toBeUndefined();
    expect(latencyLimitMs(policy({ maxMs: 800 }), null)).toBeUndefined();
  });

  it('allows the factor times the requested model’s latency, but never less than that latency plus 100 ms', () => {
    expect(latencyLimitMs(policy(), steady(1_000))).toBeCloseTo(2_000, -2);
    // 2 × 12 ms would make 13 ms of noise a verdict: the slack sets the limit.
    const fast = latencyLimitMs(policy(), steady(12));
    expect(fast).toBeGreaterThan(12 + LATENCY_SLACK_MS - 1);
    expect(fast).toBeLessThan(12 + LATENCY_SLACK_MS + 1);
  });

  it('takes the tighter of max_latency_ms and the factor limit', () => {
    expect(latencyLimitMs(policy({ maxMs: 1_500 }), steady(1_000))).toBe(1_500);
    expect(latencyLimitMs(policy({ maxMs: 3_000 }), steady(1_000))).toBeCloseTo(2_000, -2);
  });
});

describe('judgeLatency', () => {
  it('passes a candidate when the contract sets no limit, measured or not', () => {
    expect(judgeLatency(policy({ maxFactor: null }), NOTHING, NOTHING)).toEqual({ state: 'ok' });
  });

  it('cannot say while the requested model’s own latency is unknown, or the candidate’s latencies are too few', () => {
    expect(judgeLatency(policy(), measured(steady(100)), NOTHING)).toEqual({
      state: 'unknown',
      reason: "the requested model's own p95 latency on this workload is not known yet",
    });
    expect(judgeLatency(policy(), measured(steady(100, LATENCY_MIN_OBSERVATIONS - 1)), measured(steady(1_000)))).toEqual({
      state: 'unknown',
      reason: 'fewer than 20 latencies measured',
    });
  });

  it('passes a candidate within the limit and rejects one over it, saying by how much', () => {
    const reference = measured(steady(1_000));
    expect(judgeLatency(policy(), measured(steady(1_900)), reference)).toEqual({ state: 'ok' });
    const slow = judgeLatency(policy(), measured(steady(2_200)), reference);
    expect(slow.state).toBe('too_slow');
    expect(slow.state === 'too_slow' ? slow.reason : '').toMatch(/^p95 latency 2\d{3} ms is over the limit of (19\d\d|20\d\d) ms$/);
    expect(judgeLatency(policy({ maxFactor: null, maxMs: 2_000 }), measured(steady(2_200)), NOTHING).state).toBe('too_slow');
  });

  it('holds the contract’s percentile: a tail of slow replies fails p95 and passes p50', () => {
    const tail = measured(sketchOf([...new Array<number>(90).fill(500), ...new Array<number>(10).fill(5_000)]));
    const reference = measured(steady(1_000));
    expect(judgeLatency(policy({ percentile: 50 }), tail, reference)).toEqual({ state: 'ok' });
    expect(judgeLatency(policy({ percentile: 95 }), tail, reference).state).toBe('too_slow');
  });

  it('holds streamed replies to max_ttft_ms, and a workload that never streams to no time to first token', () => {
    const ttftOnly = policy({ maxFactor: null, maxTtftMs: 300 });
    expect(judgeLatency(ttftOnly, NOTHING, NOTHING)).toEqual({ state: 'ok' });
    // The requested model streamed on this workload: the candidate must have streamed replies measured too.
    expect(judgeLatency(ttftOnly, NOTHING, measured(null, steady(100, 1)))).toEqual({
      state: 'unknown',
      reason: 'fewer than 20 streamed replies measured',
    });
    expect(judgeLatency(ttftOnly, measured(null, steady(250)), NOTHING)).toEqual({ state: 'ok' });
    const slow = judgeLatency(ttftOnly, measured(null, steady(400)), NOTHING);
    expect(slow.state).toBe('too_slow');
    expect(slow.state === 'too_slow' ? slow.reason : '').toMatch(/^p95 time to first token \d+ ms is over the limit of 300 ms$/);
  });

  it('reports the latency limit before the time to first token', () => {
    const both = policy({ maxTtftMs: 300 });
    const verdict = judgeLatency(both, measured(steady(5_000), steady(400)), measured(steady(1_000)));
    expect(verdict.state === 'too_slow' ? verdict.reason : '').toMatch(/^p95 latency /);
  });

  it('judges the pool’s latencies merged, as the project prior does while a workload’s own are too few', () => {
    // Three workloads of a project, ten replies each: none has enough alone, the pool (project-prior.ts) has thirty.
    const workloads = [0, 1, 2].map(() => ({ candidate: steady(1_500, 10), requested: steady(1_000, 10) }));
    expect(judgeLatency(policy(), measured(workloads[0]!.candidate), measured(workloads[0]!.requested)).state).toBe('unknown');
    const pooled = (pick: (workload: (typeof workloads)[number]) => DDSketch) => {
      const merged = sketchOf([]);
      for (const workload of workloads) merged.merge(pick(workload));
      return merged;
    };
    expect(
      judgeLatency(policy(), measured(pooled((workload) => workload.candidate)), measured(pooled((workload) => workload.requested))),
    ).toEqual({ state: 'ok' });
    expect(
      judgeLatency(
        policy({ maxFactor: 1.2 }),
        measured(pooled((workload) => workload.candidate)),
        measured(pooled((workload) => workload.requested)),
      ).state,
    ).toBe('too_slow');
  });
});
