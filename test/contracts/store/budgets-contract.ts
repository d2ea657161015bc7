/**
 * The Store contract, budgets (`BudgetStore`, `src/store/budget-store.ts`):
 * budget and cache settings per scope, the spend of the traces since a time,
 * and the store ledger's rows. Every back end runs it unchanged, through the
 * Store interface alone; the concurrency tests need two stores on one
 * database (`openShared`), as two processes would have.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ScopeBudget, ScopeCacheSettings, SpendCap } from '../../../src/store/budget-store.js';
import type { Store } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, compareText, type OpenSharedStores, type OpenStore } from './store-contract-support.js';
import { traceFixture } from './trace-fixture.js';

const DAY_MS = 86_400_000;

export function describeBudgetsContract(open: OpenStore, openShared?: OpenSharedStores): void {
  describe('budgets', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    const budget = (accountId: string, project: string, workload: string, overrides: Partial<ScopeBudget> = {}): ScopeBudget => ({
      scope: { accountId, project, workload },
      environment: 'production',
      dailyUsd: 5,
      monthlyUsd: 100,
      alertAt: 0.8,
      updatedAt: 1_000,
      ...overrides,
    });

    it('keeps one budget per project or workload and environment, replaced by put, listed per account or all', async () => {
      const shop = budget('acct-1', 'shop', '');
      expect(await store.budgets.getBudget(shop.scope, 'production')).toBeNull();
      expect(await store.budgets.listBudgets(null)).toEqual([]);
      const stored = [
        shop,
        budget('acct-1', 'shop', '', { environment: 'staging', dailyUsd: 0.5, monthlyUsd: null, alertAt: null }),
        budget('acct-1', 'shop', 'main', { dailyUsd: null, monthlyUsd: 12.34, alertAt: 0.5 }),
        budget('acct-1', 'sh\u0000op', 'main', { dailyUsd: 1 }),
        budget('acct-2', 'shop', '', { dailyUsd: 7 }),
      ];
      for (const each of stored) await store.budgets.putBudget(each);
      const replaced = budget('acct-1', 'shop', '', { dailyUsd: null, monthlyUsd: null, alertAt: null, updatedAt: 2_000 });
      await store.budgets.putBudget(replaced);
      const [, staging, workload, nul, other] = stored as [ScopeBudget, ScopeBudget, ScopeBudget, ScopeBudget, ScopeBudget];

      expect(await store.budgets.getBudget(shop.scope, 'production')).toEqual(replaced);
      expect(await store.budgets.getBudget(shop.scope, 'staging')).toEqual(staging);
      expect(await store.budgets.getBudget({ accountId: 'acct-1', project: 'shop', workload: 'main' }, 'production')).toEqual(workload);
      expect(await store.budgets.getBudget({ accountId: 'acct-1', project: 'shop', workload: 'main' }, 'staging')).toBeNull();
      expect(await store.budgets.getBudget({ accountId: 'acct-1', project: 'sh\u0000op', workload: 'main' }, 'production')).toEqual(nul);
      expect(await store.budgets.getBudget({ accountId: 'acct-1', project: 'sh', workload: 'main' }, 'production')).toBeNull();
      expect(await store.budgets.getBudget({ accountId: 'acct-3', project: 'shop', workload: '' }, 'production')).toBeNull();

      const order = (left: ScopeBudget, right: ScopeBudget) =>
        compareText(
          `${left.scope.accountId}/${left.scope.project}/${left.scope.workload}/${left.environment}`,
          `${right.scope.accountId}/${right.scope.project}/${right.scope.workload}/${right.environment}`,
        );
      expect(await store.budgets.listBudgets('acct-1')).toEqual([replaced, staging, workload, nul].sort(order));
      expect(await store.budgets.listBudgets('acct-2')).toEqual([other]);
      expect(await store.budgets.listBudgets('acct-3')).toEqual([]);
      expect(await store.budgets.listBudgets(null)).toEqual([replaced, staging, workload, nul, other].sort(order));
    });

    it('keeps one cache setting per project or workload, replaced by put, listed per account or all', async () => {
      const settings = (
        accountId: string,
        project: string,
        workload: string,
        overrides: Partial<ScopeCacheSettings> = {},
      ): ScopeCacheSettings => ({
        scope: { accountId, project, workload },
        enabled: true,
        ttlSeconds: 3_600,
        onlyRepeatable: true,
        updatedAt: 1_000,
        ...overrides,
      });
      const project = settings('acct-1', 'shop', '');
      expect(await store.budgets.getCacheSettings(project.scope)).toBeNull();
      const workload = settings('acct-1', 'shop', 'main', { enabled: false, ttlSeconds: 60, onlyRepeatable: false });
      const other = settings('acct-2', 'shop', '');
      for (const each of [project, workload, other]) await store.budgets.putCacheSettings(each);
      const replaced = settings('acct-1', 'shop', '', { ttlSeconds: 86_400, onlyRepeatable: false, updatedAt: 2_000 });
      await store.budgets.putCacheSettings(replaced);

      expect(await store.budgets.getCacheSettings(project.scope)).toEqual(replaced);
      expect(await store.budgets.getCacheSettings(workload.scope)).toEqual(workload);
      expect(await store.budgets.getCacheSettings({ accountId: 'acct-1', project: 'shop', workload: 'other' })).toBeNull();
      expect(await store.budgets.getCacheSettings({ accountId: 'acct-3', project: 'shop', workload: '' })).toBeNull();
      expect(await store.budgets.listCacheSettings('acct-1')).toEqual([replaced, workload]);
      expect(await store.budgets.listCacheSettings(null)).toEqual([replaced, workload, other]);
    });

    it('sums the spend of the calls since a time per account, project, workload and key, production and staging apart', async () => {
      const since = Date.UTC(2024, 0, 10);
      const call = (requestId: string, costUsd: number, overrides: Parameters<typeof traceFixture>[0] = {}) =>
        traceFixture({ requestId, costUsd, startedAt: since + 3_600_000, ...overrides });
      await store.traces.insertBatch([
        call('a', 0.25),
        call('b', 0.5, { workload: 'other' }),
        call('c', 0.125, { keyId: 'key-2' }),
        call('d', 1, { environment: 'staging', keyId: 'key-staging' }),
        // Refused before its scope was known: the account's and the key's spend only.
        call('e', 2, { project: null, workload: null }),
        // At the very start counts; before it, not.
        call('f', 4, { startedAt: since }),
        call('g', 8, { startedAt: since - 1 }),
        // A call answered from the cache costs nothing.
        call('h', 0, { cached: true, costSavedUsd: 16 }),
        call('i', 32, { accountId: 'acct-2', keyId: 'key-other' }),
      ]);
      const production = { accountId: 'acct-1', project: 'shop' };
      expect(await store.budgets.spendSince('acct-1', since)).toEqual({
        accounts: [
          { accountId: 'acct-1', environment: 'production', costUsd: 6.875 },
          { accountId: 'acct-1', environment: 'staging', costUsd: 1 },
        ],
        projects: [
          { scope: production, environment: 'production', costUsd: 4.875 },
          { scope: production, environment: 'staging', costUsd: 1 },
        ],
        workloads: [
          { scope: { ...production, workload: 'main' }, environment: 'production', costUsd: 4.375 },
          { scope: { ...production, workload: 'main' }, environment: 'staging', costUsd: 1 },
          { scope: { ...production, workload: 'other' }, environment: 'production', costUsd: 0.5 },
        ],
        keys: [
          { accountId: 'acct-1', keyId: 'key-1', costUsd: 6.75 },
          { accountId: 'acct-1', keyId: 'key-2', costUsd: 0.125 },
          { accountId: 'acct-1', keyId: 'key-staging', costUsd: 1 },
        ],
      });
      const everyone = await store.budgets.spendSince(null, since);
      expect(everyone.accounts).toEqual([
        { accountId: 'acct-1', environment: 'production', costUsd: 6.875 },
        { accountId: 'acct-1', environment: 'staging', costUsd: 1 },
        { accountId: 'acct-2', environment: 'production', costUsd: 32 },
      ]);
      expect(everyone.keys).toContainEqual({ accountId: 'acct-2', keyId: 'key-other', costUsd: 32 });
      expect(await store.budgets.spendSince('acct-3', since)).toEqual({ accounts: [], projects: [], workloads: [], keys: [] });
      expect(await store.budgets.spendSince(null, since + DAY_MS)).toEqual({ accounts: [], projects: [], workloads: [], keys: [] });
    });

    const later = () => Date.now() + DAY_MS;
    const cap = (id: string, limitMicros: number, expiresAt = later()): SpendCap => ({ id, limitMicros, expiresAt });

    it('reserves on every cap or on none, naming the first cap in the request that would pass its limit', async () => {
      const [account, project, key] = [cap('acct', 1_000), cap('proj', 500), cap('key', 300)];
      expect(await store.budgets.reserveSpend([account, project, key], 200)).toEqual({
        reserved: true,
        refusedIndex: -1,
        spentMicros: [200, 200, 200],
      });
      expect(await store.budgets.reserveSpend([account, project, key], 150)).toEqual({
        reserved: false,
        refusedIndex: 2,
        spentMicros: [200, 200, 200],
      });
      expect(await store.budgets.spentOf(['acct', 'proj', 'key', 'unknown'])).toEqual([200, 200, 200, 0]);
      expect(await store.budgets.reserveSpend([account, project], 300)).toEqual({
        reserved: true,
        refusedIndex: -1,
        spentMicros: [500, 500],
      });
      // Exactly at the limit fits; one micro-dollar more does not, and nothing either at the limit.
      expect(await store.budgets.reserveSpend([key, project], 1)).toEqual({ reserved: false, refusedIndex: 1, spentMicros: [200, 500] });
      expect(await store.budgets.reserveSpend([project], 0)).toEqual({ reserved: true, refusedIndex: -1, spentMicros: [500] });
      expect(await store.budgets.reserveSpend([], 5)).toEqual({ reserved: true, refusedIndex: -1, spentMicros: [] });
      // Exact far past 2^32.
      const big = cap('big', Number.MAX_SAFE_INTEGER);
      await store.budgets.reserveSpend([big], 2 ** 52);
      expect(await store.budgets.reserveSpend([big], 2 ** 52 - 1)).toMatchObject({
        reserved: true,
        spentMicros: [Number.MAX_SAFE_INTEGER],
      });
      expect(await store.budgets.spentOf(['big'])).toEqual([Number.MAX_SAFE_INTEGER]);
    });

    it('adds spend changes, never below 0, and only to live rows unless told when a new one expires', async () => {
      await store.budgets.reserveSpend([cap('held', 10_000)], 4_000);
      expect(
        await store.budgets.addSpend([
          { capId: 'held', deltaMicros: -1_500, expiresAt: null },
          { capId: 'missing', deltaMicros: 700, expiresAt: null },
          { capId: 'created', deltaMicros: 700, expiresAt: later() },
          { capId: 'held', deltaMicros: -9_000, expiresAt: null },
          { capId: 'held', deltaMicros: 250, expiresAt: null },
        ]),
      ).toEqual([2_500, null, 700, 0, 250]);
      expect(await store.budgets.spentOf(['held', 'missing', 'created'])).toEqual([250, 0, 700]);
      expect(await store.budgets.addSpend([])).toEqual([]);
    });

    it('counts an expired row as nothing: reserved from 0, not settled, read as 0, deleted by deleteExpiredSpend', async () => {
      const ended = cap('ended', 1_000, Date.now() - 1_000);
      expect(await store.budgets.reserveSpend([ended], 1_000)).toMatchObject({ reserved: true, spentMicros: [1_000] });
      expect(await store.budgets.spentOf(['ended'])).toEqual([0]);
      expect(await store.budgets.reserveSpend([ended], 1_000)).toMatchObject({ reserved: true, spentMicros: [1_000] });
      expect(await store.budgets.addSpend([{ capId: 'ended', deltaMicros: -10, expiresAt: null }])).toEqual([null]);
      // Spend made elsewhere for a period that has ended meanwhile starts from nothing, and still reads as nothing.
      expect(await store.budgets.addSpend([{ capId: 'ended', deltaMicros: 30, expiresAt: ended.expiresAt }])).toEqual([30]);
      expect(await store.budgets.spentOf(['ended'])).toEqual([0]);

      await store.budgets.reserveSpend([cap('live', 1_000)], 10);
      expect(await store.budgets.deleteExpiredSpend()).toBe(1);
      expect(await store.budgets.deleteExpiredSpend()).toBe(0);
      expect(await store.budgets.spentOf(['live', 'ended'])).toEqual([10, 0]);
    });

    describe.skipIf(openShared === undefined)('two processes reserving at once', () => {
      let stores: [Store, Store];
      /** The store of the `index`th caller: the two take turns. */
      const storeOf = (index: number): Store => stores[index % 2 === 0 ? 0 : 1];
      beforeEach(async () => {
        stores = await (openShared as OpenSharedStores)();
      });
      afterEach(async () => {
        await Promise.all(stores.map((each) => each.close()));
      });

      it('200 concurrent reservations against a small cap never pass it, and none fitting is refused', async () => {
        const small = cap('small', 100_000);
        const large = cap('large', 10_000_000);
        const amounts = Array.from({ length: 200 }, (_, index) => 1_000 + ((index * 7_919) % 3_000));
        const results = await Promise.all(
          amounts.map((amount, index) => storeOf(index).budgets.reserveSpend(index % 3 === 0 ? [small, large] : [large, small], amount)),
        );
        const total = amounts.filter((_, index) => results[index]?.reserved === true).reduce((sum, amount) => sum + amount, 0);
        expect(total).toBeLessThanOrEqual(100_000);
        expect(await stores[0].budgets.spentOf(['small', 'large'])).toEqual([total, total]);
        const refused = amounts.filter((_, index) => results[index]?.reserved === false);
        expect(refused.length).toBeGreaterThan(0);
        for (const amount of refused) expect(total + amount).toBeGreaterThan(100_000);
      });

      it('settlements and reservations of overlapping caps from both, in any order, add up exactly', async () => {
        const caps = ['a', 'b', 'c'].map((id) => cap(id, 1_000_000_000));
        const work = Array.from({ length: 60 }, (_, index) => {
          const own = storeOf(index);
          const mine = index % 2 === 0 ? caps : [...caps].reverse();
          return index % 3 === 0
            ? own.budgets.addSpend(mine.map((each) => ({ capId: each.id, deltaMicros: 7, expiresAt: each.expiresAt })))
            : own.budgets.reserveSpend(mine, 10);
        });
        await Promise.all(work);
        expect(await stores[1].budgets.spentOf(['a', 'b', 'c'])).toEqual([20 * 7 + 40 * 10, 20 * 7 + 40 * 10, 20 * 7 + 40 * 10]);
      });
    });
  });
}
