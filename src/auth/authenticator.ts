/**
 * Turns an Authorization header into the calling key, on the hot path. Keys are
 * looked up by hash and cached; a store round trip happens only the first time
 * a key is seen (and again after `cacheTtlMs`). Revocations made by any process
 * (the API, or `taskgate keys revoke` against the same store) reach the cache
 * when the change feed says keys were revoked (`refreshRevocations`), so a
 * revoked key stops working within a second; a poll every `revocationPollMs`
 * catches a notice that was missed. Unknown keys are cached briefly too, so a client hammering
 * with a bad key does not hammer the store.
 *
 * A valid key's header is also remembered as sent, in memory only (never
 * stored or logged), for as long as its cache entry lives: a repeat call is
 * one map lookup, without the header's parse and SHA-256 (measured:
 * docs/benchmarks.md). A revoked or
 * forgotten entry is expired in place, so the header's memory of it lapses
 * with it, and the poller's tick lets go of the headers of expired entries.
 */
import { AuthenticationError } from '../api/errors.js';
import type { Logger } from '../log/logger.js';
import { errorFields } from '../log/logger.js';
import { isStoreUnavailable } from '../store/store-errors.js';
import type { AccountStore, ApiKey } from '../store/store.js';
import { hashKey } from './api-key-text.js';

export interface Authenticator {
  /** The key behind the header; throws `AuthenticationError` (one identical 401) for every failure. */
  authenticate(authorization: string | undefined): ApiKey | Promise<ApiKey>;
  /** Forgets a key at once (this process revoked it); other processes learn through the change feed. */
  forgetKey(keyId: string): void;
  /** Reads the revocations made since the last read (the change feed says there are new ones). */
  refreshRevocations(): void;
  close(): Promise<void>;
}

interface CacheEntry {
  key: ApiKey | null;
  expiresAt: number;
}

export function createAuthenticator(options: {
  accounts: AccountStore;
  logger: Logger;
  cacheTtlMs?: number;
  negativeTtlMs?: number;
  revocationPollMs?: number;
  maxEntries?: number;
  now?: () => number;
}): Authenticator {
  const { accounts, logger } = options;
  const now = options.now ?? Date.now;
  const cacheTtlMs = options.cacheTtlMs ?? 60_000;
  const negativeTtlMs = options.negativeTtlMs ?? 1_000;
  const maxEntries = options.maxEntries ?? 100_000;
  const cache = new Map<string, CacheEntry>();
  /** Valid keys' Authorization headers, as sent, to their entries in `cache` (the same objects). */
  const byHeader = new Map<string, CacheEntry>();
  const lastUse = new Map<string, number>();
  let pollingSince = now();

  function remember(hash: string, key: ApiKey | null): CacheEntry {
    if (cache.size >= maxEntries) forget(cache.keys().next().value as string);
    const entry = { key, expiresAt: now() + (key === null ? negativeTtlMs : cacheTtlMs) };
    cache.set(hash, entry);
    return entry;
  }

  /** Drops a hash's entry and expires it, so a header remembered for it lapses too. */
  function forget(hash: string): void {
    const entry = cache.get(hash);
    if (entry === undefined) return;
    entry.expiresAt = 0;
    cache.delete(hash);
  }

  /** Remembers a valid key's header (bounded like the cache: the oldest goes first). */
  function rememberHeader(authorization: string, entry: CacheEntry): void {
    if (entry.key === null || entry.key.revokedAt !== null) return;
    if (byHeader.size >= maxEntries) byHeader.delete(byHeader.keys().next().value as string);
    byHeader.set(authorization, entry);
  }

  function accept(key: ApiKey | null): ApiKey {
    if (key === null || key.revokedAt !== null) throw new AuthenticationError();
    lastUse.set(key.id, now());
    return key;
  }

  /**
   * Reads a key from the store. While the store does not answer (a restart, a
   * failover), a key seen before keeps working from its expired cache entry:
   * revocations still reach it through the change feed and the poll once the
   * store is back, and refusing every known caller would stop the service.
   */
  async function lookUp(hash: string, stale: CacheEntry | undefined, authorization: string): Promise<ApiKey> {
    let key: ApiKey | null;
    try {
      key = await accounts.findKeyByHash(hash);
    } catch (error) {
      if (stale?.key != null && isStoreUnavailable(error)) return accept(stale.key);
      throw error;
    }
    rememberHeader(authorization, remember(hash, key));
    return accept(key);
  }

  function readRevocations(): void {
    const since = pollingSince;
    pollingSince = now() - 100;
    accounts
      .listKeysRevokedSince(since - 1_000)
      .then((hashes) => {
        for (const hash of hashes) forget(hash);
      })
      .catch((error: unknown) => logger.warn('revocation poll failed', errorFields(error)));
  }

  // Revocations and last-used times move through one timer: a store query per
  // tick, never one per request.
  const poller = setInterval(() => {
    readRevocations();
    const at = now();
    for (const [authorization, entry] of byHeader) if (entry.expiresAt <= at) byHeader.delete(authorization);
    if (lastUse.size > 0) {
      const uses = [...lastUse].map(([keyId, usedAt]) => ({ keyId, usedAt }));
      lastUse.clear();
      accounts.touchKeys(uses).catch((error: unknown) => logger.warn('key last-used update failed', errorFields(error)));
    }
  }, options.revocationPollMs ?? 5_000);
  poller.unref();

  return {
    authenticate(authorization) {
      if (authorization === undefined || authorization.length > 1024) throw new AuthenticationError();
      const known = byHeader.get(authorization);
      if (known !== undefined && known.expiresAt > now()) return accept(known.key);
      const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
      if (match === null) throw new AuthenticationError();
      const hash = hashKey(match[1] as string);
      const entry = cache.get(hash);
      if (entry !== undefined && entry.expiresAt > now()) {
        rememberHeader(authorization, entry);
        return accept(entry.key);
      }
      return lookUp(hash, entry, authorization);
    },
    forgetKey(keyId) {
      for (const [hash, entry] of cache) if (entry.key?.id === keyId) forget(hash);
    },
    refreshRevocations: readRevocations,
    async close() {
      clearInterval(poller);
      byHeader.clear();
      if (lastUse.size > 0) {
        await accounts.touchKeys([...lastUse].map(([keyId, usedAt]) => ({ keyId, usedAt }))).catch(() => undefined);
      }
    },
  };
}
