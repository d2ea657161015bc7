/**
 * The Store contract, API keys (`AccountStore`'s key methods,
 * `src/store/store.ts`): every back end runs it unchanged, through the Store
 * interface alone.
 */
import { describe, expect, it } from 'vitest';
import type { ApiKey, NewApiKey, Store } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, collectPages, compareText, type OpenStore } from './store-contract-support.js';

export function describeKeysContract(open: OpenStore): void {
  describe('keys', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    it('createKey fills id and times; findKeyByHash returns the same record', async () => {
      const account = await store.accounts.ensureAccount('acme');
      const before = Date.now();
      const key = await store.accounts.createKey(newKey(account.id, 'a'.repeat(64)));
      expect(key).toEqual({
        ...newKey(account.id, 'a'.repeat(64)),
        tokensPerMinute: null,
        dailyBudgetUsd: null,
        monthlyBudgetUsd: null,
        id: expect.any(String),
        createdAt: expect.any(Number),
        lastUsedAt: null,
        revokedAt: null,
      });
      expect(key.createdAt).toBeGreaterThanOrEqual(before);
      expect(await store.accounts.findKeyByHash('a'.repeat(64))).toEqual(key);
      expect(await store.accounts.findKeyByHash('b'.repeat(64))).toBeNull();

      const dated = await store.accounts.createKey({
        ...newKey(account.id, 'c'.repeat(64)),
        createdAt: 1_000,
        name: null,
        environment: 'staging',
        role: 'admin',
        requestsPerMinute: 60,
        tokensPerMinute: 90_000,
      });
      expect(await store.accounts.findKeyByHash('c'.repeat(64))).toEqual(dated);
      expect(dated).toMatchObject({
        createdAt: 1_000,
        name: null,
        environment: 'staging',
        role: 'admin',
        requestsPerMinute: 60,
        tokensPerMinute: 90_000,
      });
    });

    it("keeps a key's own spend caps, each optional", async () => {
      const account = await store.accounts.ensureAccount('acme');
      const capped = await store.accounts.createKey({
        ...newKey(account.id, 'd'.repeat(64)),
        dailyBudgetUsd: 2.5,
        monthlyBudgetUsd: 40.125,
      });
      expect(capped).toMatchObject({ dailyBudgetUsd: 2.5, monthlyBudgetUsd: 40.125 });
      expect(await store.accounts.findKeyByHash('d'.repeat(64))).toEqual(capped);
      const monthly = await store.accounts.createKey({ ...newKey(account.id, 'e'.repeat(64)), dailyBudgetUsd: null, monthlyBudgetUsd: 0 });
      expect(await store.accounts.findKeyByHash('e'.repeat(64))).toMatchObject({ dailyBudgetUsd: null, monthlyBudgetUsd: 0 });
      expect((await store.accounts.listKeys(account.id, { limit: 10 })).items).toEqual(expect.arrayContaining([capped, monthly]));
    });

    it("listKeys pages newest first, ties broken by id, only the account's own keys", async () => {
      const account = await store.accounts.ensureAccount('acme');
      const other = await store.accounts.ensureAccount('globex');
      const created: ApiKey[] = [];
      for (const [index, createdAt] of [5_000, 1_000, 3_000, 3_000, 3_000, 2_000, 4_000].entries()) {
        created.push(await store.accounts.createKey({ ...newKey(account.id, `hash-${index}`), createdAt }));
      }
      await store.accounts.createKey({ ...newKey(other.id, 'hash-other'), createdAt: 9_000 });

      const pages = await collectPages((page) => store.accounts.listKeys(account.id, page), 3);
      expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
      const expected = [...created].sort((left, right) => right.createdAt - left.createdAt || compareText(right.id, left.id));
      expect(pages.flat()).toEqual(expected);
    });

    it("revokeKey revokes once, and never another account's key", async () => {
      const account = await store.accounts.ensureAccount('acme');
      const other = await store.accounts.ensureAccount('globex');
      const key = await store.accounts.createKey(newKey(account.id, 'hash-1'));

      expect(await store.accounts.revokeKey(other.id, key.id, 2_000)).toBe(false);
      expect((await store.accounts.findKeyByHash('hash-1'))?.revokedAt).toBeNull();
      expect(await store.accounts.revokeKey(account.id, 'key_missing', 2_000)).toBe(false);

      expect(await store.accounts.revokeKey(account.id, key.id, 2_000)).toBe(true);
      expect(await store.accounts.revokeKey(account.id, key.id, 3_000)).toBe(false);
      expect((await store.accounts.findKeyByHash('hash-1'))?.revokedAt).toBe(2_000);
    });

    it('listKeysRevokedSince returns the hashes revoked at or after the time', async () => {
      const account = await store.accounts.ensureAccount('acme');
      const early = await store.accounts.createKey(newKey(account.id, 'hash-early'));
      const late = await store.accounts.createKey(newKey(account.id, 'hash-late'));
      await store.accounts.createKey(newKey(account.id, 'hash-live'));
      await store.accounts.revokeKey(account.id, early.id, 1_000);
      await store.accounts.revokeKey(account.id, late.id, 2_000);

      expect((await store.accounts.listKeysRevokedSince(0)).sort()).toEqual(['hash-early', 'hash-late']);
      expect(await store.accounts.listKeysRevokedSince(1_500)).toEqual(['hash-late']);
      expect(await store.accounts.listKeysRevokedSince(2_000)).toEqual(['hash-late']);
      expect(await store.accounts.listKeysRevokedSince(2_001)).toEqual([]);
    });

    it('touchKeys only ever moves lastUsedAt forward', async () => {
      const account = await store.accounts.ensureAccount('acme');
      const first = await store.accounts.createKey(newKey(account.id, 'hash-1'));
      const second = await store.accounts.createKey(newKey(account.id, 'hash-2'));

      await store.accounts.touchKeys([
        { keyId: first.id, usedAt: 100 },
        { keyId: second.id, usedAt: 300 },
        { keyId: second.id, usedAt: 200 },
        { keyId: 'key_missing', usedAt: 100 },
      ]);
      expect((await store.accounts.findKeyByHash('hash-1'))?.lastUsedAt).toBe(100);
      expect((await store.accounts.findKeyByHash('hash-2'))?.lastUsedAt).toBe(300);

      await store.accounts.touchKeys([{ keyId: first.id, usedAt: 50 }]);
      expect((await store.accounts.findKeyByHash('hash-1'))?.lastUsedAt).toBe(100);
      await store.accounts.touchKeys([{ keyId: first.id, usedAt: 150 }]);
      expect((await store.accounts.findKeyByHash('hash-1'))?.lastUsedAt).toBe(150);
      await store.accounts.touchKeys([]);
    });
  });
}

function newKey(accountId: string, hash: string): NewApiKey {
  return {
    accountId,
    name: 'ci',
    displayPrefix: 'tg_live_AbCd',
    hash,
    environment: 'production',
    role: 'inference',
    requestsPerMinute: null,
  };
}
