/**
 * Issuing keys, shared by `taskgate keys create`, `POST /v1/keys` and the
 * bootstrap at start-up. The key text is returned once and never stored.
 */
import { randomUUID } from 'node:crypto';
import type { LeaseStore } from '../store/lease-store.js';
import type { AccountStore, ApiKey, Environment, KeyRole } from '../store/store.js';
import { displayPrefix, generateKeyText, hashKey } from './api-key-text.js';

export const DEFAULT_ACCOUNT = 'default';

export interface KeyRequest {
  accountId: string;
  environment: Environment;
  role: KeyRole;
  name?: string | null;
  requestsPerMinute?: number | null;
  tokensPerMinute?: number | null;
}

export async function issueKey(accounts: AccountStore, request: KeyRequest): Promise<{ key: ApiKey; text: string }> {
  const text = generateKeyText(request.environment);
  const key = await accounts.createKey({
    accountId: request.accountId,
    name: request.name ?? null,
    displayPrefix: displayPrefix(text),
    hash: hashKey(text),
    environment: request.environment,
    role: request.role,
    requestsPerMinute: request.requestsPerMinute ?? null,
    tokensPerMinute: request.tokensPerMinute ?? null,
  });
  return { key, text };
}

/**
 * Makes sure account `default` has an admin key. With `TASKGATE_ADMIN_KEY` set,
 * that text becomes (or already is) a production admin key. Without it, the
 * first start creates one and returns its text, to be printed once; later
 * starts return null.
 *
 * Processes of a fleet may start at once on an empty store: the operator's key
 * is created by whichever comes first (the others find it), and a generated
 * one by the process holding the `bootstrap` lease only, so exactly one key is
 * made and printed once.
 */
export async function ensureBootstrapAdminKey(
  store: { accounts: AccountStore; leases: LeaseStore },
  adminKeyText: string | null,
): Promise<string | null> {
  const { accounts, leases } = store;
  const account = await accounts.ensureAccount(DEFAULT_ACCOUNT);
  if (adminKeyText !== null) {
    const hash = hashKey(adminKeyText);
    if ((await accounts.findKeyByHash(hash)) !== null) return null;
    const newKey = {
      accountId: account.id,
      name: 'TASKGATE_ADMIN_KEY',
      displayPrefix: displayPrefix(adminKeyText),
      hash,
      environment: 'production',
      role: 'admin',
      requestsPerMinute: null,
    } as const;
    await accounts.createKey(newKey).catch(async (error: unknown) => {
      // Another process created it between the look and the insert.
      if ((await accounts.findKeyByHash(hash)) === null) throw error;
    });
    return null;
  }
  const holder = `bootstrap-${randomUUID()}`;
  if (!(await leases.acquire('bootstrap', holder, 60_000))) return null;
  try {
    const { items } = await accounts.listKeys(account.id, { limit: 1 });
    if (items.length > 0) return null;
    const { text } = await issueKey(accounts, { accountId: account.id, environment: 'production', role: 'admin', name: 'bootstrap admin' });
    return text;
  } finally {
    await leases.release('bootstrap', holder);
  }
}
