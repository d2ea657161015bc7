/**
 * The Store contract, retention (`src/store/retention-store.ts`): every back
 * end runs it unchanged, through the Store interface alone.
 *
 * One allowance is written into the checks of `pruneTraces`: a back end that
 * keeps traces in one partition per UTC day may drop a whole expired day in
 * one statement, so a call may remove more than `batchSize` calls when the
 * extra ones make up whole days that ended before the cutoff and that hold
 * nothing else (`src/store/postgres/postgres-retention.ts`). Everything else
 * it removes counts against `batchSize`.
 */
import { describe, expect, it } from 'vitest';
import type { ProjectRetention } from '../../../src/store/retention-store.js';
import type { Store, Trace } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, compareText, type OpenStore } from './store-contract-support.js';
import { traceFixture } from './trace-fixture.js';

const DAY_MS = 86_400_000;
/** A cutoff away from every day boundary (2024-01-10 12:00 UTC). */
const before = Date.UTC(2024, 0, 10, 12);
const accounts = ['acct-1', 'acct-2'];
type Target = { accountId: string; project: string } | null;

export function describeRetentionContract(open: OpenStore): void {
  describe('retention', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    const policy = (accountId: string, project: string, overrides: Partial<ProjectRetention>): ProjectRetention => ({
      accountId,
      project,
      bodies: 'all',
      sampleRate: 1,
      bodiesTtlDays: 7,
      tracesTtlDays: 30,
      updatedAt: 1_000,
      ...overrides,
    });

    it('keeps one policy per project, replaced by put, and lists them all', async () => {
      expect(await store.retention.get('acct-1', 'shop')).toBeNull();
      expect(await store.retention.list()).toEqual([]);
      const blog = policy('acct-1', 'blog', { bodies: 'none', sampleRate: 0, bodiesTtlDays: null, tracesTtlDays: null, updatedAt: 2_000 });
      const otherShop = policy('acct-2', 'shop', { bodies: 'sample', sampleRate: 0.125, bodiesTtlDays: 1.5, tracesTtlDays: 90 });
      const nul = policy('acct-1', 'sh\u0000op', { tracesTtlDays: 3 });
      for (const stored of [policy('acct-1', 'shop', { bodies: 'sample', sampleRate: 0.25 }), blog, otherShop, nul])
        await store.retention.put(stored);
      const replaced = policy('acct-1', 'shop', { bodies: 'all', sampleRate: 1, bodiesTtlDays: null, tracesTtlDays: 14, updatedAt: 3_000 });
      await store.retention.put(replaced);

      expect(await store.retention.get('acct-1', 'shop')).toEqual(replaced);
      expect(await store.retention.get('acct-2', 'shop')).toEqual(otherShop);
      expect(await store.retention.get('acct-1', 'sh\u0000op')).toEqual(nul);
      expect(await store.retention.get('acct-1', 'sh')).toBeNull();
      expect(await store.retention.get('acct-3', 'shop')).toBeNull();
      const byKey = (left: ProjectRetention, right: ProjectRetention) =>
        compareText(`${left.accountId}/${left.project}`, `${right.accountId}/${right.project}`);
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

    it("pruneBodies removes the bodies of one project's older calls, at most a batch at a time", async () => {
      const traces = scene();
      await store.traces.insertBatch(traces);
      // Five old calls of the project have a body; the one without is not counted.
      expect(await pruneBodiesInBatches(store, shop, 2)).toEqual([2, 2, 1, 0]);
      const pruned = ['shop-old-4', 'shop-old-3', 'shop-old-2', 'shop-old-1', 'shop-reply-only'];
      expect(await allTraces(store)).toEqual(
        sortTraces(traces.map((trace) => (pruned.includes(trace.requestId) ? withoutBodies(trace) : trace))),
      );
    });

    it('pruneBodies with no project prunes every project without a policy of its own, in every account', async () => {
      const traces = scene();
      await store.traces.insertBatch(traces);
      await store.retention.put(policy('acct-1', 'shop', {}));
      await store.retention.put(policy('acct-1', 'sh\u0000op', {}));
      expect(await pruneBodiesInBatches(store, null, 2)).toEqual([2, 1, 0]);
      const pruned = ['blog-old', 'other-account-old', 'unscoped-old'];
      expect(await allTraces(store)).toEqual(
        sortTraces(traces.map((trace) => (pruned.includes(trace.requestId) ? withoutBodies(trace) : trace))),
      );
    });

    it("pruneTraces deletes one project's older calls, at most a batch at a time", async () => {
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

    it("pruneTraces reaches older calls over several days, and keeps another account's call on one of them", async () => {
      // Five calls on each of three days, another account's call on the middle one: a back end
      // that drops whole days may drop the first and the last, never the middle one.
      const traces = [3, 2, 1].flatMap((days) =>
        Array.from({ length: 5 }, (_, index) =>
          traceFixture({ requestId: `day-${days}-${index}`, startedAt: before - days * DAY_MS + index * 1_000 }),
        ),
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
}

/** Calls pruneBodies until it changes nothing; the count of each call. */
async function pruneBodiesInBatches(store: Store, target: Target, batchSize: number): Promise<number[]> {
  const counts: number[] = [];
  for (let changed = -1; changed !== 0;) {
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
    const emptiedDays = new Set(
      gone.map(dayOf).filter((day) => day + DAY_MS <= before && !remaining.some((trace) => dayOf(trace) === day)),
    );
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
  return [...traces].sort(
    (left, right) =>
      right.startedAt - left.startedAt || compareText(left.accountId, right.accountId) || compareText(left.requestId, right.requestId),
  );
}

function withoutBodies(trace: Trace): Trace {
  return { ...trace, requestBody: null, replyBody: null };
}
