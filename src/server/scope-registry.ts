/**
 * Remembers which (account, project, workload) scopes exist, so only the first
 * call of a scope waits for the store. Concurrent first calls share one
 * creation.
 *
 * A store that refuses the write (a full disk, a database that is down) does
 * not fail the call: the scope lives in memory, the call is answered and
 * traced, and the write is retried with backoff until the store takes it.
 * Until then the scope is missing from the project and workload lists.
 */
import { errorFields, type Logger } from '../log/logger.js';
import type { Scope } from '../api/scope.js';
import type { ProjectStore } from '../store/store.js';

export interface ScopeRegistry {
  /** Resolves once the scope is stored or kept in memory for a later write; never rejects. Undefined when already known. */
  ensure(scope: Scope): Promise<void> | undefined;
  /** Scopes in memory only, waiting for the store to accept their write. */
  unwritten(): number;
  /** Stops retrying; scopes still unwritten are created by their next call after a restart. */
  close(): void;
}

export interface ScopeRegistryOptions {
  projects: ProjectStore;
  logger: Logger;
  maxEntries?: number;
  /** First retry of unwritten scopes; doubles up to `maxRetryMs`. Defaults 1 s and 30 s. */
  firstRetryMs?: number;
  maxRetryMs?: number;
}

export function createScopeRegistry(options: ScopeRegistryOptions): ScopeRegistry {
  const { projects, logger } = options;
  const maxEntries = options.maxEntries ?? 100_000;
  const firstRetryMs = options.firstRetryMs ?? 1_000;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  const known = new Map<string, Promise<void> | true>();
  const unwritten = new Map<string, Scope>();
  let retryTimer: NodeJS.Timeout | null = null;
  let retryMs = firstRetryMs;

  function keep(cacheKey: string, scope: Scope, error: unknown): void {
    known.set(cacheKey, true);
    if (unwritten.size === 0)
      logger.warn('store refused a new scope; serving it from memory until the store takes writes', { ...scope, ...errorFields(error) });
    unwritten.set(cacheKey, scope);
    scheduleRetry();
  }

  function scheduleRetry(): void {
    if (retryTimer !== null) return;
    retryTimer = setTimeout(() => void retry(), retryMs);
    retryTimer.unref();
  }

  async function retry(): Promise<void> {
    let failed = false;
    for (const [cacheKey, scope] of unwritten) {
      try {
        await projects.ensureScope(scope);
        unwritten.delete(cacheKey);
      } catch {
        failed = true;
        break;
      }
    }
    retryTimer = null;
    if (unwritten.size === 0) {
      retryMs = firstRetryMs;
      logger.info('scopes kept in memory are stored');
      return;
    }
    retryMs = failed ? Math.min(maxRetryMs, retryMs * 2) : firstRetryMs;
    scheduleRetry();
  }

  return {
    ensure(scope) {
      const cacheKey = `${scope.accountId}\u0000${scope.project}\u0000${scope.workload}`;
      const entry = known.get(cacheKey);
      if (entry === true) return undefined;
      if (entry !== undefined) return entry;
      if (known.size >= maxEntries) known.clear();
      const creation = projects.ensureScope(scope).then(
        () => void known.set(cacheKey, true),
        (error: unknown) => keep(cacheKey, scope, error),
      );
      known.set(cacheKey, creation);
      return creation;
    },
    unwritten: () => unwritten.size,
    close() {
      if (retryTimer !== null) clearTimeout(retryTimer);
      retryTimer = null;
    },
  };
}
