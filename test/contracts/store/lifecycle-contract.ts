/**
 * The Store contract, the store as a whole (`migrate`, `ping`,
 * `src/store/store.ts`): every back end runs it unchanged, through the Store
 * interface alone.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, type OpenStore } from './store-contract-support.js';

export function describeLifecycleContract(open: OpenStore): void {
  describe('lifecycle', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    it('ping answers while the store is open', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('migrate runs again on a migrated store and keeps what it holds', async () => {
      const account = await store.accounts.ensureAccount('acme');
      await store.migrate();
      expect(await store.accounts.getAccount(account.id)).toEqual(account);
    });
  });
}
