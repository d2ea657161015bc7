/**
 * The Store contract, the router's sample queue and per-route state (the
 * queue methods of `RoutingStore`, `src/store/routing-store.ts`): every back
 * end runs it unchanged, through the Store interface alone. The tests of two
 * processes on one database run when the back end can open them
 * (`openShared`).
 */
import { describe, expect, it } from 'vitest';
import type { Scope } from '../../../src/api/scope.js';
import type { Store } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, eachTestOnSharedStores, type OpenSharedStores, type OpenStore } from './store-contract-support.js';

const scope: Scope = { accountId: 'acct-1', project: 'shop', workload: 'summarise' };

export function describeRouterQueueContract(open: OpenStore, openShared?: OpenSharedStores): void {
  describe('router queue', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    it('queues router samples oldest first, hands each to one taker, and trims the oldest', async () => {
      await store.routing.pushSamples(Array.from({ length: 5 }, (_, index) => ({ body: `{"n":${index}}`, at: 1_000 + index })));
      expect(await store.routing.takeSamples(2)).toEqual(['{"n":0}', '{"n":1}']);
      expect(await store.routing.takeSamples(10)).toEqual(['{"n":2}', '{"n":3}', '{"n":4}']);
      expect(await store.routing.takeSamples(10)).toEqual([]);

      await store.routing.pushSamples(Array.from({ length: 30 }, (_, index) => ({ body: `s${index}`, at: index })));
      const taken = (await Promise.all(Array.from({ length: 6 }, () => store.routing.takeSamples(4)))).flat();
      expect(new Set(taken).size).toBe(taken.length);
      const rest = await store.routing.takeSamples(100);
      expect([...taken, ...rest].sort()).toEqual(Array.from({ length: 30 }, (_, index) => `s${index}`).sort());

      await store.routing.pushSamples(Array.from({ length: 10 }, (_, index) => ({ body: `t${index}`, at: index })));
      expect(await store.routing.trimSamples(3)).toBe(7);
      expect(await store.routing.trimSamples(3)).toBe(0);
      expect(await store.routing.takeSamples(10)).toEqual(['t7', 't8', 't9']);
    });

    it("keeps one router state per route, listed in the order written whatever the writer's clock", async () => {
      const other = { ...scope, workload: 'translate' };
      await store.routing.saveRouterStates([
        { scope, requestedModel: 'big', state: '{"v":1}', updatedAt: 1_000 },
        { scope: other, requestedModel: 'big', state: '{"v":2}', updatedAt: 2_000 },
      ]);
      const first = await store.routing.listRouterStatesChangedAfter(0);
      expect(first.map((revised) => revised.record.state)).toEqual(['{"v":1}', '{"v":2}']);
      // A new leader whose clock is behind the last one's: its write still comes after.
      await store.routing.saveRouterStates([{ scope, requestedModel: 'big', state: '{"v":3}', updatedAt: 500 }]);
      const all = await store.routing.listRouterStatesChangedAfter(0);
      expect(all.map((revised) => revised.record)).toEqual([
        { scope: other, requestedModel: 'big', state: '{"v":2}', updatedAt: 2_000 },
        { scope, requestedModel: 'big', state: '{"v":3}', updatedAt: 500 },
      ]);
      expect(all[1]!.revision).toBeGreaterThan(all[0]!.revision);
      expect(all[0]!.revision).toBeGreaterThan(first[0]!.revision);
      const since = await store.routing.listRouterStatesChangedAfter(first.at(-1)!.revision);
      expect(since.map((revised) => revised.record)).toEqual([{ scope, requestedModel: 'big', state: '{"v":3}', updatedAt: 500 }]);
      expect(await store.routing.listRouterStatesChangedAfter(all.at(-1)!.revision)).toEqual([]);
    });
  });

  describe.skipIf(openShared === undefined)('router queue: two processes on one database', () => {
    let first: Store;
    let second: Store;
    eachTestOnSharedStores(openShared, (stores) => ([first, second] = stores));

    it('samples pushed by one process are taken by the other, once', async () => {
      await first.routing.pushSamples([
        { body: 'a', at: 1 },
        { body: 'b', at: 2 },
      ]);
      const [fromSecond, fromFirst] = await Promise.all([second.routing.takeSamples(1), first.routing.takeSamples(1)]);
      expect([...fromSecond, ...fromFirst].sort()).toEqual(['a', 'b']);
    });
  });
}
