import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { traceFixture } from '../../test/contracts/store/trace-fixture.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store, Trace } from '../store/store.js';
import { SKETCH_RELATIVE_ACCURACY } from '../store/latency-sketch.js';
import { createRollupStatsService } from './rollup-stats-service.js';
import type { StatsService } from './stats-service.js';

const start = Date.UTC(2026, 10, 21, 8, 0, 0);
const scope = { accountId: 'acct-1', project: 'shop', workload: 'summarise' };
const everything = { since: start - 3_600_000, until: start + 6 * 3_600_000, environment: 'production' as const };

let store: Store;
let stats: StatsService;

beforeEach(async () => {
  store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  stats = createRollupStatsService(store.rollups);
});
afterEach(async () => {
  await store.close();
});

/** Calls over three hours: two models, some errors and aborts, streams with TTFT, staging calls and another account's. */
function traces(count: number, seed: number): Trace[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, index) => {
    const stream = random() < 0.5;
    const failed = random() < 0.08;
    const aborted = !failed && random() < 0.03;
    return traceFixture({
      requestId: `req-${seed}-${index}`,
      accountId: index % 50 === 0 ? 'acct-2' : 'acct-1',
      environment: index % 17 === 0 ? 'staging' : 'production',
      workload: index % 5 === 0 ? 'classify' : 'summarise',
      requestedModel: 'big',
      servedModel: index % 3 === 0 ? 'small' : 'big',
      replica: 'gpu-a',
      status: failed ? 'error' : aborted ? 'aborted' : 'ok',
      errorClass: failed ? (random() < 0.5 ? 'engine_timeout' : 'engine_error') : aborted ? 'client_closed' : null,
      httpStatus: failed ? 502 : 200,
      promptTokens: Math.floor(random() * 2_000),
      completionTokens: Math.floor(random() * 500),
      costUsd: random() / 1_000,
      latencyMs: Math.exp(4 + random() * 5),
      ttftMs: stream ? Math.exp(3 + random() * 4) : null,
      stream,
      startedAt: start + Math.floor(random() * 3 * 3_600_000),
      requestBody: null,
      replyBody: null,
    });
  });
}

function exactQuantile(values: number[], quantile: number): [number, number] {
  const sorted = [...values].sort((left, right) => left - right);
  const rank = quantile * (sorted.length - 1);
  return [sorted[Math.floor(rank)]!, sorted[Math.ceil(rank)]!];
}

describe('rollups and the stats read from them', () => {
  it('equal the sums over the traces, and stay equal when a batch is stored twice', async () => {
    const batch = traces(3_000, 1);
    await store.traces.insertBatch(batch.slice(0, 1_000));
    await store.traces.insertBatch(batch.slice(500)); // half of the first batch again: must not count twice
    const mine = batch.filter(
      (trace) => trace.accountId === 'acct-1' && trace.workload === 'summarise' && trace.environment === 'production',
    );
    const result = await stats.workloadStats(scope, everything);

    expect(result.calls).toBe(mine.length);
    expect(result.errors).toBe(mine.filter((trace) => trace.status === 'error').length);
    expect(result.promptTokens).toBe(mine.reduce((sum, trace) => sum + trace.promptTokens, 0));
    expect(result.completionTokens).toBe(mine.reduce((sum, trace) => sum + trace.completionTokens, 0));
    expect(result.costUsd).toBeCloseTo(
      mine.reduce((sum, trace) => sum + trace.costUsd, 0),
      10,
    );
    expect(result.errorRate).toBeCloseTo(result.errors / result.calls, 12);
    const classes = Object.fromEntries(result.failures.map((failure) => [failure.errorClass, failure.count]));
    for (const name of ['engine_timeout', 'engine_error', 'client_closed']) {
      expect(classes[name]).toBe(mine.filter((trace) => trace.errorClass === name).length);
    }
    expect(result.models.map((model) => model.model).sort()).toEqual(['big', 'small']);
    expect(result.models.reduce((sum, model) => sum + model.calls, 0)).toBe(result.calls);
    expect(result.models.find((model) => model.model === 'small')?.calls).toBe(
      mine.filter((trace) => trace.servedModel === 'small').length,
    );
  });

  it('reads percentiles within the sketch’s relative error bound', async () => {
    const batch = traces(4_000, 2);
    await store.traces.insertBatch(batch);
    const mine = batch.filter(
      (trace) => trace.accountId === 'acct-1' && trace.workload === 'summarise' && trace.environment === 'production',
    );
    const result = await stats.workloadStats(scope, everything);
    const tolerance = SKETCH_RELATIVE_ACCURACY * 1.0001;
    for (const [name, values] of [
      ['latencyMs', mine.map((trace) => trace.latencyMs)],
      ['ttftMs', mine.flatMap((trace) => (trace.ttftMs === null ? [] : [trace.ttftMs]))],
    ] as const) {
      for (const quantile of [0.5, 0.95, 0.99] as const) {
        const read = result[name][`p${Math.round(quantile * 100)}` as 'p50' | 'p95' | 'p99']!;
        const [low, high] = exactQuantile(values, quantile);
        expect(read).toBeGreaterThanOrEqual(low * (1 - tolerance));
        expect(read).toBeLessThanOrEqual(high * (1 + tolerance));
      }
    }
  });

  it('splits a window into buckets that add up to it, and keeps staging and other accounts apart', async () => {
    const batch = traces(2_000, 3);
    await store.traces.insertBatch(batch);
    const window = { ...everything, since: start, until: start + 3 * 3_600_000 };
    const series = await stats.workloadSeries(scope, window, 15 * 60_000);
    expect(series).toHaveLength(12);
    expect(series[1]!.start - series[0]!.start).toBe(15 * 60_000);
    const total = await stats.workloadStats(scope, window);
    expect(series.reduce((sum, bucket) => sum + bucket.calls, 0)).toBe(total.calls);
    expect(series.reduce((sum, bucket) => sum + bucket.costUsd, 0)).toBeCloseTo(total.costUsd, 10);

    const staging = await stats.workloadStats(scope, { ...window, environment: 'staging' });
    expect(staging.calls).toBe(
      batch.filter((trace) => trace.accountId === 'acct-1' && trace.workload === 'summarise' && trace.environment === 'staging').length,
    );
    expect((await stats.workloadStats(scope, { ...window, environment: 'all' })).calls).toBe(total.calls + staging.calls);

    const summaries = await stats.workloadSummaries('acct-1', window);
    expect(summaries.map((summary) => summary.workload).sort()).toEqual(['classify', 'summarise']);
    expect(summaries[0]!.costUsd).toBeGreaterThanOrEqual(summaries[1]!.costUsd);
    const other = await stats.workloadSummaries('acct-2', window);
    expect(other.reduce((sum, summary) => sum + summary.calls, 0)).toBe(
      batch.filter((trace) => trace.accountId === 'acct-2' && trace.environment === 'production').length,
    );
  });
});
