import { describe, expect, it } from 'vitest';
import type { Trace } from './store.js';
import { addRollupRows, DecodedSketches, foldTraces, MINUTE_MS, rollupKey } from './rollup-fold.js';
import { decodeSketch } from './latency-sketch.js';

const base: Trace = {
  requestId: 'req_0',
  accountId: 'acct_a',
  keyId: 'key_a',
  environment: 'production',
  project: 'shop',
  workload: 'support',
  user: null,
  requestedModel: 'big',
  servedModel: 'big',
  routeReason: null,
  routeShare: null,
  replica: 'mock',
  attempts: null,
  status: 'ok',
  errorClass: null,
  errorMessage: null,
  httpStatus: 200,
  finishReason: 'stop',
  promptTokens: 10,
  completionTokens: 5,
  costUsd: 0.001,
  cached: false,
  costSavedUsd: null,
  engineSeconds: null,
  measuredCostUsd: null,
  latencyMs: 100,
  ttftMs: null,
  stream: false,
  metadata: null,
  startedAt: 10 * MINUTE_MS,
  requestBody: null,
  replyBody: null,
};

describe('foldTraces', () => {
  it('gives each trace to the row of its own scope, environment, model and minute, however the batch interleaves them', () => {
    const variations: Array<Partial<Trace>> = [
      {},
      {},
      { workload: 'billing' },
      {},
      { project: null },
      { workload: null },
      { environment: 'staging' },
      { servedModel: 'small' },
      { servedModel: null },
      { accountId: 'acct_b' },
      { startedAt: 11 * MINUTE_MS },
      {},
      { workload: 'billing' },
      { workload: 'billing' },
      {},
    ];
    const traces = variations.map((change, index) => ({ ...base, ...change, requestId: `req_${index}`, promptTokens: index + 1 }));
    const rows = foldTraces(traces);

    const expected = new Map<string, { calls: number; promptTokens: number }>();
    for (const trace of traces) {
      const key = rollupKey({
        accountId: trace.accountId,
        project: trace.project ?? '',
        workload: trace.workload ?? '',
        environment: trace.environment,
        model: trace.servedModel ?? '',
        minute: Math.floor(trace.startedAt / MINUTE_MS) * MINUTE_MS,
      });
      const row = expected.get(key) ?? { calls: 0, promptTokens: 0 };
      row.calls += 1;
      row.promptTokens += trace.promptTokens;
      expected.set(key, row);
    }
    expect(rows).toHaveLength(expected.size);
    for (const row of rows) {
      expect({ calls: row.calls, promptTokens: row.promptTokens, latencyCount: row.latency.count }).toEqual({
        ...expected.get(rollupKey(row)),
        latencyCount: row.calls,
      });
    }
  });
});

describe('foldTraces, calls answered from the cache', () => {
  it('counts them among the calls, and apart with the cost they saved', () => {
    const hit = { ...base, cached: true, costUsd: 0, costSavedUsd: 0.002 };
    const [row] = foldTraces([
      { ...base, requestId: 'req_miss' },
      { ...hit, requestId: 'req_hit_1' },
      { ...hit, requestId: 'req_hit_2', costSavedUsd: 0.0005 },
    ]);
    expect(row).toMatchObject({ calls: 3, cachedCalls: 2, costUsd: 0.001 });
    expect(row?.costSavedUsd).toBeCloseTo(0.0025, 12);
    const [later] = foldTraces([{ ...hit, requestId: 'req_hit_3' }]);
    const added = addRollupRows(addRollupRows(undefined, row!), later!);
    expect(added).toMatchObject({ calls: 4, cachedCalls: 3 });
    expect(added.costSavedUsd).toBeCloseTo(0.0045, 12);
  });
});

describe('addRollupRows with the sketches it wrote remembered', () => {
  const batch = (latencies: number[], first: number) =>
    foldTraces(
      latencies.map((latencyMs, index) => ({ ...base, requestId: `req_${first + index}`, latencyMs, ttftMs: latencyMs / 2, stream: true })),
    )[0]!;
  /** What a stored sketch says: its count and quantiles (its bytes also depend on how its bins were laid out in memory). */
  const summary = (bytes: Uint8Array | null) => {
    const sketch = decodeSketch(bytes!);
    return {
      count: sketch.count,
      quantiles: [0, 0.25, 0.5, 0.75, 0.95, 1].map((quantile) => Math.round(sketch.getValueAtQuantile(quantile))),
    };
  };

  it('writes what decoding the stored sketches writes, batch after batch', () => {
    const sketches = new DecodedSketches();
    let remembered = addRollupRows(undefined, batch([100, 200], 0), sketches);
    let decoded = addRollupRows(undefined, batch([100, 200], 0));
    for (let round = 1; round <= 3; round++) {
      const latencies = [round * 10, round * 300, 7];
      remembered = addRollupRows(remembered, batch(latencies, round * 10), sketches);
      decoded = addRollupRows(decoded, batch(latencies, round * 10));
      expect(summary(remembered.latency)).toStrictEqual(summary(decoded.latency));
      expect(summary(remembered.ttft)).toStrictEqual(summary(decoded.ttft));
    }
    const all = decodeSketch(remembered.latency!);
    expect(all.count).toBe(11);
    expect(all.getValueAtQuantile(0)).toBeCloseTo(7, -0.5);
    expect(all.getValueAtQuantile(1)).toBeGreaterThan(900 * 0.99);
  });

  it('reads a row another process wrote since from what is stored, not from what it remembers', () => {
    const sketches = new DecodedSketches();
    const mine = addRollupRows(undefined, batch([100], 0), sketches);
    // Another process added its calls to the row after this one wrote it.
    const theirs = addRollupRows(mine, batch([5_000, 6_000], 10));
    const next = addRollupRows(theirs, batch([1], 20), sketches);
    const merged = decodeSketch(next.latency!);
    expect(merged.count).toBe(4);
    expect(merged.getValueAtQuantile(1)).toBeGreaterThan(6_000 * 0.99);
    expect(merged.getValueAtQuantile(0)).toBeLessThan(1.01);
    expect(next.calls).toBe(4);
  });
});
