/**
 * The Store contract, leases (`src/store/lease-store.ts`): every back end
 * runs it unchanged, through the Store interface alone. The test of two
 * processes on one database runs when the back end can open them
 * (`openShared`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, eachTestOnSharedStores, type OpenSharedStores, type OpenStore } from './store-contract-support.js';

export function describeLeasesContract(open: OpenStore, openShared?: OpenSharedStores): void {
  describe('leases', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

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
      const winners = await Promise.all(
        Array.from({ length: 10 }, (_, index) => store.leases.acquire('contested', `process-${index}`, 60_000)),
      );
      expect(winners.filter(Boolean)).toHaveLength(1);
    });
  });

  describe.skipIf(openShared === undefined)('leases: two processes on one database', () => {
    let first: Store;
    let second: Store;
    eachTestOnSharedStores(openShared, (stores) => ([first, second] = stores));

    it('a lease taken by one process is refused to the other', async () => {
      expect(await first.leases.acquire('router', 'first', 60_000)).toBe(true);
      expect(await second.leases.acquire('router', 'second', 60_000)).toBe(false);
      expect((await second.leases.current('router'))?.holder).toBe('first');
      await first.leases.release('router', 'first');
      expect(await second.leases.acquire('router', 'second', 60_000)).toBe(true);
    });
  });
}
