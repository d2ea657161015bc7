import { describe, expect, it } from 'vitest';
import { AuthenticationError } from '../api/errors.js';
import { createLogger } from '../log/logger.js';
import { StoreUnavailableError } from '../store/store-errors.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { AccountStore } from '../store/store.js';
import { createAuthenticator } from './authenticator.js';
import { issueKey } from './key-issuer.js';

/** An account store over SQLite whose key lookups can be made to fail as a store that does not answer. */
async function flakyAccounts(): Promise<{ accounts: AccountStore; down: { value: boolean }; lookups: { value: number } }> {
  const store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  const down = { value: false };
  const lookups = { value: 0 };
  const accounts: AccountStore = {
    ...store.accounts,
    findKeyByHash: async (hash) => {
      lookups.value += 1;
      if (down.value)
        throw new StoreUnavailableError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
      return store.accounts.findKeyByHash(hash);
    },
  };
  return { accounts, down, lookups };
}

describe('authenticator while the store does not answer', () => {
  it('keeps accepting a key it has seen after its cache entry expires, and reads it again once the store is back', async () => {
    const { accounts, down, lookups } = await flakyAccounts();
    const account = await accounts.ensureAccount('acme');
    const { key, text } = await issueKey(accounts, { accountId: account.id, environment: 'production', role: 'inference' });
    let clock = 1_000_000;
    const authenticator = createAuthenticator({
      accounts,
      logger: createLogger({ level: 'silent' }),
      cacheTtlMs: 60_000,
      now: () => clock,
    });

    expect((await authenticator.authenticate(`Bearer ${text}`)).id).toBe(key.id);
    down.value = true;
    clock += 120_000;
    expect((await authenticator.authenticate(`Bearer ${text}`)).id).toBe(key.id);
    expect(lookups.value).toBe(2);

    // A key never seen cannot be vouched for: the store's 503, not a 401 that would tell the caller the key is bad.
    await expect(authenticator.authenticate(`Bearer tg_live_${'x'.repeat(40)}`)).rejects.toBeInstanceOf(StoreUnavailableError);

    down.value = false;
    expect((await authenticator.authenticate(`Bearer ${text}`)).id).toBe(key.id);
    expect(lookups.value).toBe(4);
    await authenticator.close();
  });

  it('still refuses a key it last saw as unknown', async () => {
    const { accounts, down } = await flakyAccounts();
    let clock = 0;
    const authenticator = createAuthenticator({
      accounts,
      logger: createLogger({ level: 'silent' }),
      negativeTtlMs: 1_000,
      now: () => clock,
    });
    const text = `tg_live_${'y'.repeat(40)}`;
    await expect(authenticator.authenticate(`Bearer ${text}`)).rejects.toBeInstanceOf(AuthenticationError);
    down.value = true;
    clock += 5_000;
    await expect(authenticator.authenticate(`Bearer ${text}`)).rejects.toBeInstanceOf(StoreUnavailableError);
    await authenticator.close();
  });
});

describe('authenticator remembering headers', () => {
  it('reads the store once for a key used again and again, until its cache entry expires', async () => {
    const { accounts, lookups } = await flakyAccounts();
    const account = await accounts.ensureAccount('acme');
    const { key, text } = await issueKey(accounts, { accountId: account.id, environment: 'production', role: 'inference' });
    let clock = 1_000_000;
    const authenticator = createAuthenticator({
      accounts,
      logger: createLogger({ level: 'silent' }),
      cacheTtlMs: 60_000,
      now: () => clock,
    });
    for (let call = 0; call < 3; call++) expect((await authenticator.authenticate(`Bearer ${text}`)).id).toBe(key.id);
    // The same key written another way (scheme case, spacing) is the same key.
    expect((await authenticator.authenticate(`bearer  ${text}`)).id).toBe(key.id);
    expect(lookups.value).toBe(1);
    clock += 61_000;
    expect((await authenticator.authenticate(`Bearer ${text}`)).id).toBe(key.id);
    expect(lookups.value).toBe(2);
    await authenticator.close();
  });

  it('refuses a key revoked by another process, or forgotten by this one, however often its header was seen', async () => {
    const { accounts } = await flakyAccounts();
    const account = await accounts.ensureAccount('acme');
    const revoked = await issueKey(accounts, { accountId: account.id, environment: 'production', role: 'inference' });
    const forgotten = await issueKey(accounts, { accountId: account.id, environment: 'production', role: 'inference' });
    let clock = Date.now();
    const authenticator = createAuthenticator({ accounts, logger: createLogger({ level: 'silent' }), now: () => clock });
    for (let call = 0; call < 2; call++) {
      expect((await authenticator.authenticate(`Bearer ${revoked.text}`)).id).toBe(revoked.key.id);
      expect((await authenticator.authenticate(`Bearer ${forgotten.text}`)).id).toBe(forgotten.key.id);
    }

    clock += 1_000;
    expect(await accounts.revokeKey(account.id, revoked.key.id, clock)).toBe(true);
    authenticator.refreshRevocations();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(authenticator.authenticate(`Bearer ${revoked.text}`)).rejects.toBeInstanceOf(AuthenticationError);

    authenticator.forgetKey(forgotten.key.id);
    expect(await accounts.revokeKey(account.id, forgotten.key.id, clock)).toBe(true);
    await expect(authenticator.authenticate(`Bearer ${forgotten.text}`)).rejects.toBeInstanceOf(AuthenticationError);
    await authenticator.close();
  });
});
