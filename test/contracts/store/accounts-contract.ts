/**
 * The Store contract, accounts (`AccountStore.ensureAccount`/`getAccount`,
 * `src/store/store.ts`): every back end runs it unchanged, through the Store
 * interface alone.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, type OpenStore } from './store-contract-support.js';

export function describeAccountsContract(open: OpenStore): void {
  describe('accounts', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    it('ensureAccount creates an account once and returns it on every call', async () => {
      const first = await store.accounts.ensureAccount('acme');
      const again = await store.accounts.ensureAccount('acme');
      const other = await store.accounts.ensureAccount('globex');
      expect(first).toEqual({ id: expect.any(String), name: 'acme', createdAt: expect.any(Number) });
      expect(again).toEqual(first);
      expect(other.id).not.toBe(first.id);
      expect(await store.accounts.getAccount(first.id)).toEqual(first);
      expect(await store.accounts.getAccount('acct_missing')).toBeNull();
    });

    it('concurrent ensureAccount calls agree on one account', async () => {
      const accounts = await Promise.all(Array.from({ length: 20 }, () => store.accounts.ensureAccount('acme')));
      expect(new Set(accounts.map((account) => account.id)).size).toBe(1);
    });
  });
}
