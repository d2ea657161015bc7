/**
 * The Store contract, rollups (`src/store/rollup-store.ts`): the per-minute
 * sums every stored batch of traces adds to. Every back end runs it
 * unchanged, through the Store interface alone.
 */
import { describe, expect, it } from 'vitest';
import { decodeSketch } from '../../../src/store/latency-sketch.js';
import type { RollupRow } from '../../../src/store/rollup-store.js';
import type { Store, Trace } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, compareText, type OpenStore } from './store-contract-support.js';
import { traceFixture } from './trace-fixture.js';

const MINUTE_MS = 60_000;

export function describeRollupsContract(open: OpenStore): void {
  describe('rollups', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    const minute = Date.UTC(2024, 0, 10, 12, 0);
    const base = { promptTokens: 10, completionTokens: 5, costUsd: 0.001, latencyMs: 100 };
    /** Rows of acct-1 in two minutes, split by project, workload, environment and served model; one row of acct-2. Two calls of `main` have a measured cost. */
    const scene = (): Trace[] => [
      traceFixture({ ...base, requestId: 'a', startedAt: minute + 1_000 }),
      traceFixture({
        requestId: 'b',
        startedAt: minute + 59_999,
        status: 'error',
        errorClass: 'upstream_error',
        httpStatus: 502,
        promptTokens: 20,
        completionTokens: 0,
        costUsd: 0.002,
        latencyMs: 200,
        stream: true,
        ttftMs: 50,
        engineSeconds: 0.2,
        measuredCostUsd: 0.0004,
      }),
      traceFixture({
        requestId: 'c',
        startedAt: minute,
        status: 'aborted',
        errorClass: null,
        promptTokens: 5,
        completionTokens: 1,
        costUsd: 0,
        latencyMs: 300,
        stream: true,
        ttftMs: 70,
        engineSeconds: 0.05,
        measuredCostUsd: 0.0001,
      }),
      traceFixture({ ...base, requestId: 'd', startedAt: minute + MINUTE_MS }),
      traceFixture({ ...base, requestId: 'e', startedAt: minute + 2_000, environment: 'staging' }),
      traceFixture({ ...base, requestId: 'f', startedAt: minute + 3_000, servedModel: 'big' }),
      traceFixture({ ...base, requestId: 'g', startedAt: minute + 4_000, workload: 'other' }),
      traceFixture({
        ...base,
        requestId: 'h',
        startedAt: minute + 5_000,
        project: null,
        workload: null,
        servedModel: null,
        status: 'error',
        errorClass: 'invalid_request',
        httpStatus: 400,
      }),
      traceFixture({ ...base, requestId: 'i', startedAt: minute + 6_000, accountId: 'acct-2' }),
    ];
    const row = (key: Partial<Summary>, totals: Partial<Summary>): Summary => ({
      project: 'shop',
      workload: 'main',
      environment: 'production',
      model: 'small',
      minute,
      calls: 1,
      errors: 0,
      errorClasses: {},
      promptTokens: 10,
      completionTokens: 5,
      costUsd: 0.001,
      measuredCalls: 0,
      measuredCostUsd: 0,
      measuredTokens: 0,
      cachedCalls: 0,
      costSavedUsd: 0,
      latency: [1, 100, 100],
      ttft: null,
      ...key,
      ...totals,
    });
    const expected = {
      main: row(
        {},
        {
          calls: 3,
          errors: 1,
          errorClasses: { upstream_error: 1, unknown: 1 },
          promptTokens: 35,
          completionTokens: 6,
          costUsd: 0.003,
          measuredCalls: 2,
          measuredCostUsd: 0.0005,
          measuredTokens: 26,
          latency: [3, 100, 300],
          ttft: [2, 50, 70],
        },
      ),
      nextMinute: row({ minute: minute + MINUTE_MS }, {}),
      staging: row({ environment: 'staging' }, {}),
      big: row({ model: 'big' }, {}),
      other: row({ workload: 'other' }, {}),
      unscoped: row({ project: '', workload: '', model: '' }, { errors: 1, errorClasses: { invalid_request: 1 } }),
    };
    const window = { since: minute, until: minute + 2 * MINUTE_MS };

    it('sums the traces of a batch per account, project, workload, environment, served model and minute', async () => {
      expect(await store.traces.insertBatch(scene())).toBe(9);
      const { main, nextMinute, staging, big, other, unscoped } = expected;
      expect(await summarise(store, 'acct-1', window)).toEqual(sortSummaries([main, staging, big, other, unscoped, nextMinute]));
      expect(await summarise(store, 'acct-2', window)).toEqual([row({}, {})]);
      expect(await summarise(store, 'acct-3', window)).toEqual([]);
    });

    it('filters by project, workload, environment and a window of minutes', async () => {
      await store.traces.insertBatch(scene());
      const { main, nextMinute, staging, big, other, unscoped } = expected;
      const cases: Array<
        [Partial<typeof window> & { project?: string; workload?: string; environment?: 'production' | 'staging' }, Summary[]]
      > = [
        [{ project: 'shop' }, [main, staging, big, other, nextMinute]],
        [{ project: '' }, [unscoped]],
        [{ project: 'shop', workload: 'other' }, [other]],
        [{ workload: 'main', environment: 'production' }, [main, big, nextMinute]],
        [{ environment: 'staging' }, [staging]],
        [{ since: minute + MINUTE_MS }, [nextMinute]],
        [{ until: minute + MINUTE_MS }, [main, staging, big, other, unscoped]],
        [{ since: minute + 1, until: minute + MINUTE_MS }, []],
        [{ project: 'nowhere' }, []],
      ];
      for (const [filter, rows] of cases) {
        expect(await summarise(store, 'acct-1', { ...window, ...filter }), JSON.stringify(filter)).toEqual(sortSummaries(rows));
      }
    });

    it('counts a trace stored twice once, within a batch or across batches', async () => {
      const [first, second, third] = scene();
      if (first === undefined || second === undefined || third === undefined) throw new Error('scene too short');
      expect(await store.traces.insertBatch([first, second])).toBe(2);
      expect(await store.traces.insertBatch([second, first])).toBe(0);
      expect(await store.traces.insertBatch([third, second, third])).toBe(1);
      expect(await summarise(store, 'acct-1', window)).toEqual([expected.main]);
      expect(await store.traces.count('acct-1', {})).toBe(3);
    });

    it('sums the measured cost and tokens per served model over every account, from a minute on', async () => {
      const measured = (requestId: string, overrides: Partial<Parameters<typeof traceFixture>[0]>) =>
        traceFixture({
          requestId,
          startedAt: minute + 5,
          promptTokens: 10,
          completionTokens: 5,
          engineSeconds: 0.5,
          measuredCostUsd: 0.01,
          ...overrides,
        });
      await store.traces.insertBatch([
        measured('m-1', {}),
        measured('m-2', { accountId: 'acct-2', workload: 'elsewhere', measuredCostUsd: 0.03, promptTokens: 20, completionTokens: 10 }),
        measured('m-3', { servedModel: 'big', measuredCostUsd: 0.5 }),
        measured('m-4', { startedAt: minute + MINUTE_MS + 5, measuredCostUsd: 0.02 }),
        // A call without a measured cost (its engine has no cost_per_hour) adds nothing, nor does one without a served model.
        measured('m-5', { engineSeconds: null, measuredCostUsd: null, promptTokens: 1_000 }),
        measured('m-6', { servedModel: null, measuredCostUsd: 9 }),
      ]);
      const model = traceFixture().servedModel as string;
      const byModel = await store.rollups.measuredByModel(minute);
      expect(byModel.map((entry) => entry.model)).toEqual(['big', model].sort());
      const small = byModel.find((entry) => entry.model === model);
      expect(small?.costUsd).toBeCloseTo(0.06, 12);
      expect(small?.tokens).toBe(60);
      expect(byModel.find((entry) => entry.model === 'big')).toEqual({ model: 'big', costUsd: 0.5, tokens: 15 });
      const later = await store.rollups.measuredByModel(minute + MINUTE_MS);
      expect(later).toHaveLength(1);
      expect(later[0]?.costUsd).toBeCloseTo(0.02, 12);
      expect(await store.rollups.measuredByModel(minute + 2 * MINUTE_MS)).toEqual([]);
    });

    it('counts the calls answered from the cache, and the cost they saved, per workload, model and minute', async () => {
      const hit = (requestId: string, startedAt: number, costSavedUsd: number, overrides: Partial<Trace> = {}) =>
        traceFixture({ ...base, requestId, startedAt, cached: true, costUsd: 0, costSavedUsd, ...overrides });
      await store.traces.insertBatch([
        traceFixture({ ...base, requestId: 'miss', startedAt: minute + 1_000 }),
        hit('hit-1', minute + 2_000, 0.001),
        hit('hit-2', minute + 3_000, 0.0005),
        hit('hit-other', minute + 4_000, 0.002, { workload: 'other' }),
      ]);
      // Across batches too.
      await store.traces.insertBatch([hit('hit-3', minute + 5_000, 0.000_25), hit('hit-next', minute + MINUTE_MS, 0.003)]);
      const rows = await summarise(store, 'acct-1', window);
      expect(
        rows.map(({ workload, minute: start, calls, cachedCalls, costUsd, costSavedUsd }) => ({
          workload,
          minute: start,
          calls,
          cachedCalls,
          costUsd,
          costSavedUsd,
        })),
      ).toEqual([
        { workload: 'main', minute, calls: 4, cachedCalls: 3, costUsd: 0.001, costSavedUsd: 0.001_75 },
        { workload: 'other', minute, calls: 1, cachedCalls: 1, costUsd: 0, costSavedUsd: 0.002 },
        { workload: 'main', minute: minute + MINUTE_MS, calls: 1, cachedCalls: 1, costUsd: 0, costSavedUsd: 0.003 },
      ]);
    });

    it('adds up many batches and many rows into the same minutes', async () => {
      // 240 calls over 40 minutes and 3 workloads, in batches of 64, some rows spread over two batches.
      const traces = Array.from({ length: 240 }, (_, index) =>
        traceFixture({
          requestId: `bulk-${index}`,
          startedAt: minute + (index % 40) * MINUTE_MS + index,
          workload: `w${index % 3}`,
          promptTokens: index,
          latencyMs: 10 + index,
        }),
      );
      for (let start = 0; start < traces.length; start += 64) await store.traces.insertBatch(traces.slice(start, start + 64));
      const rows = await store.rollups.query('acct-1', { since: minute, until: minute + 40 * MINUTE_MS });
      expect(rows).toHaveLength(120);
      expectOldestMinuteFirst(rows);
      for (const stored of rows) {
        const own = traces.filter(
          (trace) => trace.workload === stored.workload && Math.floor(trace.startedAt / MINUTE_MS) * MINUTE_MS === stored.minute,
        );
        expect(stored.calls).toBe(own.length);
        expect(stored.promptTokens).toBe(own.reduce((sum, trace) => sum + trace.promptTokens, 0));
        expect(decodeSketch(stored.latency as Uint8Array).count).toBe(own.length);
      }
    });
  });
}

/** A rollup row as compared here: sums exact, cost rounded, sketches as [count, min, max] (1 % accuracy). */
interface Summary extends Omit<RollupRow, 'accountId' | 'latency' | 'ttft'> {
  latency: [number, number, number] | null;
  ttft: [number, number, number] | null;
}

async function summarise(store: Store, accountId: string, query: Parameters<Store['rollups']['query']>[1]): Promise<Summary[]> {
  const rows = await store.rollups.query(accountId, query);
  expectOldestMinuteFirst(rows);
  const sketch = (bytes: Uint8Array | null): Summary['latency'] => {
    if (bytes === null) return null;
    const decoded = decodeSketch(bytes);
    // Values within the sketch's 1 % are reported as the value itself.
    const near = (value: number) => Math.round(value / 10) * 10;
    return [decoded.count, near(decoded.getValueAtQuantile(0)), near(decoded.getValueAtQuantile(1))];
  };
  // Order inside a minute is not part of the contract.
  return sortSummaries(
    rows.map(({ accountId: owner, latency, ttft, costUsd, measuredCostUsd, costSavedUsd, ...rest }) => {
      expect(owner).toBe(accountId);
      const round = (usd: number) => Math.round(usd * 1e9) / 1e9;
      return {
        ...rest,
        costUsd: round(costUsd),
        measuredCostUsd: round(measuredCostUsd),
        costSavedUsd: round(costSavedUsd),
        latency: sketch(latency),
        ttft: sketch(ttft),
      };
    }),
  );
}

function sortSummaries(rows: Summary[]): Summary[] {
  const key = (row: Summary) => `${String(row.minute).padStart(16, '0')}/${row.project}/${row.workload}/${row.environment}/${row.model}`;
  return [...rows].sort((left, right) => compareText(key(left), key(right)));
}

function expectOldestMinuteFirst(rows: readonly RollupRow[]): void {
  expect(rows.map((row) => row.minute)).toEqual(rows.map((row) => row.minute).sort((left, right) => left - right));
}
