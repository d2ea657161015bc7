/**
 * The Store contract's retention and rollup parts as a test suite
 * (`retention-store.ts`, `rollup-store.ts`), run by `describeStoreContract`
 * for every back end. It uses only the Store interface.
 *
 * One allowance is written into the checks of `pruneTraces`: a back end that
 * keeps traces in one partition per UTC day may drop a whole expired day in
 * one statement, so a call may remove more than `batchSize` calls when the
 * extra ones make up whole days that ended before the cutoff and that hold
 * nothing else (`postgres/postgres-retention.ts`). Everything else it removes
 * counts against `batchSize`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeSketch } from '../tracking/latency-sketch.js';
import type { ProjectRetention } from './retention-store.js';
import type { RollupRow } from './rollup-store.js';
import type { Store, Trace } from './store.js';
import { traceFixture } from './trace-fixture.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** A cutoff away from every day boundary (2024-01-10 12:00 UTC). */
const before = Date.UTC(2024, 0, 10, 12);
const accounts = ['acct-1', 'acct-2'];
type Target = { accountId: string; project: string } | null;

export function describeRetentionRollupContract(openStore: () => Promise<Store>): void {
  let store: Store;
  /** A fresh store per test of `part`; the hooks stay inside it, not on the caller's describe. */
  const describePart = (part: string, tests: () => void) =>
    describe(part, () => {
      beforeEach(async () => {
        store = await openStore();
        await store.migrate();
      });
      afterEach(async () => {
        await store.close();
      });
      tests();
    });

  describePart('retention', () => {
    const policy = (accountId: string, project: string, overrides: Partial<ProjectRetention>): ProjectRetention => ({
      accountId, project, bodies: 'all', sampleRate: 1, bodiesTtlDays: 7, tracesTtlDays: 30, updatedAt: 1_000, ...overrides,
    });

    it('keeps one policy per project, replaced by put, and lists them all', async () => {
      expect(await store.retention.get('acct-1', 'shop')).toBeNull();
      expect(await store.retention.list()).toEqual([]);
      const blog = policy('acct-1', 'blog', { bodies: 'none', sampleRate: 0, bodiesTtlDays: null, tracesTtlDays: null, updatedAt: 2_000 });
      const otherShop = policy('acct-2', 'shop', { bodies: 'sample', sampleRate: 0.125, bodiesTtlDays: 1.5, tracesTtlDays: 90 });
      const nul = policy('acct-1', 'sh\u0000op', { tracesTtlDays: 3 });
      for (const stored of [policy('acct-1', 'shop', { bodies: 'sample', sampleRate: 0.25 }), blog, otherShop, nul]) await store.retention.put(stored);
      const replaced = policy('acct-1', 'shop', { bodies: 'all', sampleRate: 1, bodiesTtlDays: null, tracesTtlDays: 14, updatedAt: 3_000 });
      await store.retention.put(replaced);

      expect(await store.retention.get('acct-1', 'shop')).toEqual(replaced);
      expect(await store.retention.get('acct-2', 'shop')).toEqual(otherShop);
      expect(await store.retention.get('acct-1', 'sh\u0000op')).toEqual(nul);
      expect(await store.retention.get('acct-1', 'sh')).toBeNull();
      expect(await store.retention.get('acct-3', 'shop')).toBeNull();
      const byKey = (left: ProjectRetention, right: ProjectRetention) => compareText(`${left.accountId}/${left.project}`, `${right.accountId}/${right.project}`);
      expect([...(await store.retention.list())].sort(byKey)).toEqual([replaced, blog, nul, otherShop].sort(byKey));
    });

    /**
     * acct-1/shop: four calls before the cutoff with bodies, one with only a
     * reply body, one with none, one exactly at the cutoff, one after it;
     * then old calls of another project, of the same project name in another
     * account, and without a project.
     */
    const scene = (): Trace[] => [
      ...[4, 3, 2, 1].map((hours) => traceFixture({ requestId: `shop-old-${hours}`, startedAt: before - hours * 3_600_000 })),
      traceFixture({ requestId: 'shop-reply-only', startedAt: before - 1, requestBody: null }),
      traceFixture({ requestId: 'shop-no-bodies', startedAt: before - 5_000, requestBody: null, replyBody: null }),
      traceFixture({ requestId: 'shop-at-cutoff', startedAt: before }),
      traceFixture({ requestId: 'shop-new', startedAt: before + 3_600_000 }),
      traceFixture({ requestId: 'blog-old', project: 'blog', startedAt: before - 3_600_000 }),
      traceFixture({ requestId: 'blog-new', project: 'blog', startedAt: before + 1 }),
      traceFixture({ requestId: 'other-account-old', accountId: 'acct-2', startedAt: before - 3_600_000 }),
      traceFixture({ requestId: 'unscoped-old', project: null, workload: null, startedAt: before - 2 * 3_600_000 }),
      traceFixture({ requestId: 'nul-old', project: 'sh\u0000op', startedAt: before - 3_600_000 }),
    ];
    const shop = { accountId: 'acct-1', project: 'shop' };

    it('pruneBodies removes the bodies of one project\'s older calls, at most a batch at a time', async () => {
      const traces = scene();
      await store.traces.insertBatch(traces);
      // Five old calls of the project have a body; the one without is not counted.
      expect(await pruneBodiesInBatches(store, shop, 2)).toEqual([2, 2, 1, 0]);
      const pruned = ['shop-old-4', 'shop-old-3', 'shop-old-2', 'shop-old-1', 'shop-reply-only'];
      expect(await allTraces(store)).toEqual(sortTraces(traces.map((trace) => (pruned.includes(trace.requestId) ? withoutBodies(trace) : trace))));
    });

    it('pruneBodies with no project prunes every project without a policy of its own, in every account', async () => {
      const traces = scene();
      await store.traces.insertBatch(traces);
      await store.retention.put(policy('acct-1', 'shop', {}));
      await store.retention.put(policy('acct-1', 'sh\u0000op', {}));
      expect(await pruneBodiesInBatches(store, null, 2)).toEqual([2, 1, 0]);
      const pruned = ['blog-old', 'other-account-old', 'unscoped-old'];
      expect(await allTraces(store)).toEqual(sortTraces(traces.map((trace) => (pruned.includes(trace.requestId) ? withoutBodies(trace) : trace))));
    });

    it('pruneTraces deletes one project\'s older calls, at most a batch at a time', async () => {
      const traces = scene();
      await store.traces.insertBatch(traces);
      expect(await pruneTracesInBatches(store, shop, 2)).toBe(6);
      const deleted = ['shop-old-4', 'shop-old-3', 'shop-old-2', 'shop-old-1', 'shop-reply-only', 'shop-no-bodies'];
      expect(await allTraces(store)).toEqual(sortTraces(traces.filter((trace) => !deleted.includes(trace.requestId))));
      expect(await store.traces.get('acct-1', 'shop-old-1')).toBeNull();
    });

    it('pruneTraces with no project deletes older calls of projects without a policy, in every account', async () => {
      const traces = scene();
      await store.traces.insertBatch(traces);
      await store.retention.put(policy('acct-1', 'shop', {}));
      await store.retention.put(policy('acct-1', 'sh\u0000op', {}));
      expect(await pruneTracesInBatches(store, null, 2)).toBe(3);
      const deleted = ['blog-old', 'other-account-old', 'unscoped-old'];
      expect(await allTraces(store)).toEqual(sortTraces(traces.filter((trace) => !deleted.includes(trace.requestId))));
    });

    it('pruneTraces reaches older calls over several days, and keeps another account\'s call on one of them', async () => {
      // Five calls on each of three days, another account's call on the middle one: a back end
      // that drops whole days may drop the first and the last, never the middle one.
      const traces = [3, 2, 1].flatMap((days) =>
        Array.from({ length: 5 }, (_, index) => traceFixture({ requestId: `day-${days}-${index}`, startedAt: before - days * DAY_MS + index * 1_000 })),
      );
      const kept = traceFixture({ requestId: 'kept', accountId: 'acct-2', startedAt: before - 2 * DAY_MS });
      await store.traces.insertBatch([...traces, kept]);
      expect(await pruneTracesInBatches(store, shop, 4)).toBe(15);
      expect(await allTraces(store)).toEqual([kept]);
    });

    it('rollups outlive the traces and bodies pruned under them', async () => {
      const traces = scene();
      await store.traces.insertBatch(traces);
      const window = { since: before - DAY_MS, until: before + DAY_MS };
      const rollups = await Promise.all(accounts.map((account) => store.rollups.query(account, window)));
      expect(rollups.flat().reduce((sum, row) => sum + row.calls, 0)).toBe(traces.length);
      await pruneBodiesInBatches(store, null, 3);
      await pruneTracesInBatches(store, shop, 3);
      await pruneTracesInBatches(store, null, 3);
      expect((await allTraces(store)).map((trace) => trace.requestId)).toEqual(['shop-new', 'blog-new', 'shop-at-cutoff']);
      expect(await Promise.all(accounts.map((account) => store.rollups.query(account, window)))).toEqual(rollups);
    });
  });

  describePart('rollups', () => {
    const minute = Date.UTC(2024, 0, 10, 12, 0);
    const base = { promptTokens: 10, completionTokens: 5, costUsd: 0.001, latencyMs: 100 };
    /** Rows of acct-1 in two minutes, split by project, workload, environment and served model; one row of acct-2. Two calls of `main` have a measured cost. */
    const scene = (): Trace[] => [
      traceFixture({ ...base, requestId: 'a', startedAt: minute + 1_000 }),
      traceFixture({ requestId: 'b', startedAt: minute + 59_999, status: 'error', errorClass: 'upstream_error', httpStatus: 502, promptTokens: 20, completionTokens: 0, costUsd: 0.002, latencyMs: 200, stream: true, ttftMs: 50, engineSeconds: 0.2, measuredCostUsd: 0.0004 }),
      traceFixture({ requestId: 'c', startedAt: minute, status: 'aborted', errorClass: null, promptTokens: 5, completionTokens: 1, costUsd: 0, latencyMs: 300, stream: true, ttftMs: 70, engineSeconds: 0.05, measuredCostUsd: 0.0001 }),
      traceFixture({ ...base, requestId: 'd', startedAt: minute + MINUTE_MS }),
      traceFixture({ ...base, requestId: 'e', startedAt: minute + 2_000, environment: 'staging' }),
      traceFixture({ ...base, requestId: 'f', startedAt: minute + 3_000, servedModel: 'big' }),
      traceFixture({ ...base, requestId: 'g', startedAt: minute + 4_000, workload: 'other' }),
      traceFixture({ ...base, requestId: 'h', startedAt: minute + 5_000, project: null, workload: null, servedModel: null, status: 'error', errorClass: 'invalid_request', httpStatus: 400 }),
      traceFixture({ ...base, requestId: 'i', startedAt: minute + 6_000, accountId: 'acct-2' }),
    ];
    const row = (key: Partial<Summary>, totals: Partial<Summary>): Summary => ({
      project: 'shop', workload: 'main', environment: 'production', model: 'small', minute,
      calls: 1, errors: 0, errorClasses: {}, promptTokens: 10, completionTokens: 5, costUsd: 0.001,
      measuredCalls: 0, measuredCostUsd: 0, measuredTokens: 0, latency: [1, 100, 100], ttft: null, ...key, ...totals,
    });
    const expected = {
      main: row({}, { calls: 3, errors: 1, errorClasses: { upstream_error: 1, unknown: 1 }, promptTokens: 35, completionTokens: 6, costUsd: 0.003,
        measuredCalls: 2, measuredCostUsd: 0.0005, measuredTokens: 26, latency: [3, 100, 300], ttft: [2, 50, 70] }),
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
      const cases: Array<[Partial<typeof window> & { project?: string; workload?: string; environment?: 'production' | 'staging' }, Summary[]]> = [
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
        traceFixture({ requestId, startedAt: minute + 5, promptTokens: 10, completionTokens: 5, engineSeconds: 0.5, measuredCostUsd: 0.01, ...overrides });
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

    it('adds up many batches and many rows into the same minutes', async () => {
      // 240 calls over 40 minutes and 3 workloads, in batches of 64, some rows spread over two batches.
      const traces = Array.from({ length: 240 }, (_, index) =>
        traceFixture({ requestId: `bulk-${index}`, startedAt: minute + (index % 40) * MINUTE_MS + index, workload: `w${index % 3}`, promptTokens: index, latencyMs: 10 + index }),
      );
      for (let start = 0; start < traces.length; start += 64) await store.traces.insertBatch(traces.slice(start, start + 64));
      const rows = await store.rollups.query('acct-1', { since: minute, until: minute + 40 * MINUTE_MS });
      expect(rows).toHaveLength(120);
      expectOldestMinuteFirst(rows);
      for (const stored of rows) {
        const own = traces.filter((trace) => trace.workload === stored.workload && Math.floor(trace.startedAt / MINUTE_MS) * MINUTE_MS === stored.minute);
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
    rows.map(({ accountId: owner, latency, ttft, costUsd, measuredCostUsd, ...rest }) => {
      expect(owner).toBe(accountId);
      const round = (usd: number) => Math.round(usd * 1e9) / 1e9;
      return { ...rest, costUsd: round(costUsd), measuredCostUsd: round(measuredCostUsd), latency: sketch(latency), ttft: sketch(ttft) };
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

/** Calls pruneBodies until it changes nothing; the count of each call. */
async function pruneBodiesInBatches(store: Store, target: Target, batchSize: number): Promise<number[]> {
  const counts: number[] = [];
  for (let changed = -1; changed !== 0; ) {
    changed = await store.retention.pruneBodies(target, before, batchSize);
    counts.push(changed);
    if (counts.length > 100) throw new Error('pruneBodies does not end');
  }
  return counts;
}

/**
 * Calls pruneTraces until it deletes nothing, checking each call: it returns
 * how many calls went, all of the target's and before the cutoff, and at most
 * `batchSize` of them outside whole days it emptied (see the file comment).
 */
async function pruneTracesInBatches(store: Store, target: Target, batchSize: number): Promise<number> {
  let total = 0;
  for (let calls = 1; ; calls += 1) {
    const present = await allTraces(store);
    const deleted = await store.retention.pruneTraces(target, before, batchSize);
    const remaining = await allTraces(store);
    const stillThere = new Set(remaining.map((trace) => `${trace.accountId}/${trace.requestId}`));
    const gone = present.filter((trace) => !stillThere.has(`${trace.accountId}/${trace.requestId}`));
    expect(deleted).toBe(gone.length);
    for (const trace of gone) expect(trace.startedAt).toBeLessThan(before);
    if (target !== null) for (const trace of gone) expect([trace.accountId, trace.project]).toEqual([target.accountId, target.project]);
    const dayOf = (trace: Trace) => Math.floor(trace.startedAt / DAY_MS) * DAY_MS;
    const emptiedDays = new Set(gone.map(dayOf).filter((day) => day + DAY_MS <= before && !remaining.some((trace) => dayOf(trace) === day)));
    expect(gone.filter((trace) => !emptiedDays.has(dayOf(trace))).length).toBeLessThanOrEqual(batchSize);
    total += deleted;
    if (deleted === 0) return total;
    if (calls > 100) throw new Error('pruneTraces does not end');
  }
}

/** Every trace of the test accounts, newest first. */
async function allTraces(store: Store): Promise<Trace[]> {
  const traces: Trace[] = [];
  for (const accountId of accounts) {
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<Store['traces']['list']>> = await store.traces.list(accountId, {}, { limit: 100, cursor });
      traces.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== null);
  }
  return sortTraces(traces);
}

function sortTraces(traces: readonly Trace[]): Trace[] {
  return [...traces].sort((left, right) => right.startedAt - left.startedAt || compareText(left.accountId, right.accountId) || compareText(left.requestId, right.requestId));
}

function withoutBodies(trace: Trace): Trace {
  return { ...trace, requestBody: null, replyBody: null };
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
