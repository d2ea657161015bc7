/**
 * The Store contract's fleet parts as a test suite: leases, the change feed,
 * dashboard sessions, the router's sample queue and state. Run by
 * `describeStoreContract` for every back end; the tests that need two
 * processes on one database run when the back end can open a second store on
 * the first one's database (`openShared`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Change } from './change-feed.js';
import type { RouteRecord, Scope } from './routing-store.js';
import type { Store } from './store.js';

/** Two stores on one fresh, migrated database, as two processes would have. */
export type OpenSharedStores = () => Promise<[Store, Store]>;

const scope: Scope = { accountId: 'acct-1', project: 'shop', workload: 'summarise' };

export function describeFleetStoreContract(openStore: () => Promise<Store>, openShared?: OpenSharedStores): void {
  describe('fleet: one store', () => {
    let store: Store;
    beforeEach(async () => {
      store = await openStore();
      await store.migrate();
    });
    afterEach(async () => {
      await store.close();
    });

    it('a lease has one holder until it expires or is released; renewing keeps it', async () => {
      expect(await store.leases.current('router')).toBeNull();
      expect(await store.leases.acquire('router', 'process-a', 60_000)).toBe(true);
      expect(await store.leases.acquire('router', 'process-b', 60_000)).toBe(false);
      expect(await store.leases.acquire('router', 'process-a', 60_000)).toBe(true);
      expect(await store.leases.current('router')).toEqual({ name: 'router', holder: 'process-a', expiresAt: expect.any(Number) });
      expect(await store.leases.acquire('other-role', 'process-b', 60_000)).toBe(true);
      await store.leases.release('router', 'process-b');
      expect((await store.leases.current('router'))?.holder).toBe('process-a');
      await store.leases.release('router', 'process-a');
      expect(await store.leases.current('router')).toBeNull();
      expect(await store.leases.acquire('router', 'process-b', 60_000)).toBe(true);
    });

    it('an expired lease goes to the next process that asks, and concurrent asks get one holder', async () => {
      expect(await store.leases.acquire('short', 'process-a', 50)).toBe(true);
      await sleep(120);
      expect(await store.leases.current('short')).toBeNull();
      expect(await store.leases.acquire('short', 'process-b', 60_000)).toBe(true);
      const winners = await Promise.all(Array.from({ length: 10 }, (_, index) => store.leases.acquire('contested', `process-${index}`, 60_000)));
      expect(winners.filter(Boolean)).toHaveLength(1);
    });

    it('delivers published changes to subscribers, its own included, until they stop', async () => {
      const heard: Change[] = [];
      const stop = store.changes.subscribe((change) => heard.push(change));
      const route: Change = { kind: 'route', scope, requestedModel: 'big' };
      const revoked: Change = { kind: 'keys' };
      await store.changes.publish(route);
      await store.changes.publish(revoked);
      await vi.waitFor(() => expect(heard).toEqual([route, revoked]), { timeout: 2_000 });
      stop();
      await store.changes.publish({ kind: 'router_state' });
      await sleep(400);
      expect(heard).toHaveLength(2);
    });

    it('keeps sessions by the hash of their id until they expire or end', async () => {
      const session = { idHash: 'a'.repeat(64), keyId: 'key-1', accountId: 'acct-1', keyHash: 'b'.repeat(64), expiresAt: 10_000 };
      await store.sessions.createSession(session);
      await store.sessions.createSession({ ...session, idHash: 'c'.repeat(64), expiresAt: 5_000 });
      expect(await store.sessions.getSession('a'.repeat(64), 9_999)).toEqual(session);
      expect(await store.sessions.getSession('a'.repeat(64), 10_000)).toBeNull();
      expect(await store.sessions.getSession('d'.repeat(64), 0)).toBeNull();
      expect(await store.sessions.pruneSessions(6_000)).toBe(1);
      await store.sessions.deleteSession('a'.repeat(64));
      expect(await store.sessions.getSession('a'.repeat(64), 0)).toBeNull();
    });

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

    it('keeps one router state per route, listed in the order written whatever the writer\'s clock', async () => {
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

  describe.skipIf(openShared === undefined)('fleet: two processes on one database', () => {
    let first: Store;
    let second: Store;
    beforeEach(async () => {
      [first, second] = await (openShared as OpenSharedStores)();
    });
    afterEach(async () => {
      await first.close();
      await second.close();
    });

    it('a lease taken by one process is refused to the other', async () => {
      expect(await first.leases.acquire('router', 'first', 60_000)).toBe(true);
      expect(await second.leases.acquire('router', 'second', 60_000)).toBe(false);
      expect((await second.leases.current('router'))?.holder).toBe('first');
      await first.leases.release('router', 'first');
      expect(await second.leases.acquire('router', 'second', 60_000)).toBe(true);
    });

    it('a change published by one process reaches the other within a second', async () => {
      const heard: Change[] = [];
      const stop = second.changes.subscribe((change) => heard.push(change));
      const change: Change = { kind: 'contract', scope };
      await first.changes.publish(change);
      await vi.waitFor(() => expect(heard).toEqual([change]), { timeout: 1_000 });
      stop();
    });

    it('route writes of processes with clocks 5 s apart all reach a reader polling by revision', async () => {
      const now = Date.now();
      const route = (fields: Partial<RouteRecord>, clockOffsetMs: number): RouteRecord => ({
        scope, requestedModel: 'big', servedModel: 'big', pinnedModel: null, certificate: null, cooldowns: {}, fallbacks: [], split: null, ...fields, updatedAt: now + clockOffsetMs,
      });
      await first.routing.saveRoute(route({}, 0), null);
      let last = (await second.routing.listRoutesChangedAfter(0)).at(-1)?.revision ?? 0;
      // The first process's clock is 5 s ahead, then 5 s behind; the second reads after each write.
      for (const [fields, offset] of [[{ pinnedModel: 'mid' }, +5_000], [{ pinnedModel: null, servedModel: 'small' }, -5_000], [{ servedModel: 'big' }, -5_000]] as const) {
        await first.routing.saveRoute(route(fields, offset), null);
        const changed = await second.routing.listRoutesChangedAfter(last);
        expect(changed.map((revised) => revised.record)).toEqual([route(fields, offset)]);
        last = changed.at(-1)?.revision ?? last;
      }
    });

    it('revisions follow commit order: a reader polling while both processes write misses no write', async () => {
      // Each process writes its own routes, each route a rising count; a third party polls meanwhile.
      const writer = async (store: Store, name: string) => {
        for (let count = 1; count <= 15; count++) {
          await store.routing.saveRoute({ scope, requestedModel: `${name}-${count % 3}`, servedModel: `${count}`, pinnedModel: null, certificate: null, cooldowns: {}, fallbacks: [], split: null, updatedAt: count }, null);
        }
      };
      const held = new Map<string, string>();
      const revisions: number[] = [];
      let last = 0;
      const poll = async () => {
        for (const { record, revision } of await second.routing.listRoutesChangedAfter(last)) {
          held.set(record.requestedModel, record.servedModel);
          revisions.push(revision);
          last = revision;
        }
      };
      let writing = true;
      const polling = (async () => {
        while (writing) await poll();
      })();
      await Promise.all([writer(first, 'first'), writer(second, 'second'), writer(first, 'third'), writer(second, 'fourth')]);
      writing = false;
      await polling;
      await poll();
      // Every revision read is above the last one read, and what the reader holds is what the store holds.
      expect(revisions).toEqual([...revisions].sort((left, right) => left - right));
      expect(new Set(revisions).size).toBe(revisions.length);
      const stored = await first.routing.listRoutes(scope);
      expect(stored).toHaveLength(12);
      expect(Object.fromEntries(held)).toEqual(Object.fromEntries(stored.map((route) => [route.requestedModel, route.servedModel])));
      expect(stored.every((route) => ['13', '14', '15'].includes(route.servedModel))).toBe(true);
    });

    it('samples pushed by one process are taken by the other, once', async () => {
      await first.routing.pushSamples([{ body: 'a', at: 1 }, { body: 'b', at: 2 }]);
      const [fromSecond, fromFirst] = await Promise.all([second.routing.takeSamples(1), first.routing.takeSamples(1)]);
      expect([...fromSecond, ...fromFirst].sort()).toEqual(['a', 'b']);
    });
  });
}
