/**
 * Remembers which (account, project, workload) scopes exist, so only the first
 * call of a scope waits for the store. Concurrent first calls share one
 * creation.
 */
import type { ProjectStore } from '../store/store.js';

export interface ScopeRegistry {
  ensure(accountId: string, project: string, workload: string): Promise<void> | undefined;
}

export function createScopeRegistry(projects: ProjectStore, maxEntries = 100_000): ScopeRegistry {
  const known = new Map<string, Promise<void> | true>();
  return {
    ensure(accountId, project, workload) {
      const cacheKey = `${accountId}\u0000${project}\u0000${workload}`;
      const entry = known.get(cacheKey);
      if (entry === true) return undefined;
      if (entry !== undefined) return entry;
      if (known.size >= maxEntries) known.clear();
      const creation = projects.ensureScope(accountId, project, workload).then(
        () => void known.set(cacheKey, true),
        (error: unknown) => {
          known.delete(cacheKey);
          throw error;
        },
      );
      known.set(cacheKey, creation);
      return creation;
    },
  };
}
