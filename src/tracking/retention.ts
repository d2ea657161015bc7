/**
 * Trace retention: which calls keep their bodies (per project: all, a sample,
 * none; decided as each trace is written, from a policy cached in memory), and
 * a background pruner that removes bodies, then whole traces, past their
 * time to live, in batches of at most `batchSize` rows with a pause between
 * batches, never one long delete. Rollups are never pruned.
 */
import type { Logger } from '../log/logger.js';
import { createRefreshingCache } from '../store/refreshing-cache.js';
import type { RetentionPolicy, RetentionStore } from '../store/retention-store.js';

const DAY_MS = 86_400_000;

export interface Retention {
  /** Whether this call keeps its request and reply bodies. */
  keepsBodies(accountId: string, project: string | null): boolean;
  /** The policy in force for a project (its own, else the defaults). */
  policy(accountId: string, project: string): Promise<RetentionPolicy & { own: boolean }>;
  /** Stores a project's policy; applies at once in this process. */
  setPolicy(accountId: string, project: string, policy: RetentionPolicy): Promise<void>;
  /** Reads a project's policy again (another process stored one). */
  refreshPolicy(accountId: string, project: string): void;
  /** One pruning pass; returns how many calls lost their bodies and how many were deleted. */
  pruneNow(): Promise<{ bodies: number; traces: number }>;
  close(): Promise<void>;
}

export interface RetentionOptions {
  store: RetentionStore;
  defaults: RetentionPolicy;
  logger: Logger;
  intervalMs: number;
  batchSize?: number;
  /** How long a cached policy is trusted before it is read again. */
  cacheTtlMs?: number;
  random?: () => number;
  now?: () => number;
}

export function createRetention(options: RetentionOptions): Retention {
  const { store, defaults, logger } = options;
  const batchSize = options.batchSize ?? 1_000;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const policies = createRefreshingCache<{ accountId: string; project: string }, RetentionPolicy>({
    keyOf: ({ accountId, project }) => `${accountId}\u0000${project}`,
    read: ({ accountId, project }) => store.get(accountId, project),
    fallback: defaults,
    ttlMs: options.cacheTtlMs ?? 5_000,
    onError: (error) => logger.warn('retention policy read failed', { error: error instanceof Error ? error.message : String(error) }),
    now,
  });
  let pruning: Promise<{ bodies: number; traces: number }> | null = null;

  /** Removes in batches until a batch comes back short; yields to the event loop between batches. */
  async function drain(step: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const changed = await step();
      total += changed;
      if (changed < batchSize) return total;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async function pass(): Promise<{ bodies: number; traces: number }> {
    const cutoff = (days: number | null) => (days === null ? null : now() - days * DAY_MS);
    let bodies = 0;
    let traces = 0;
    const targets: Array<[{ accountId: string; project: string } | null, RetentionPolicy]> = [
      ...(await store.list()).map((policy): [{ accountId: string; project: string }, RetentionPolicy] => [
        { accountId: policy.accountId, project: policy.project },
        policy,
      ]),
      [null, defaults],
    ];
    for (const [target, policy] of targets) {
      const tracesBefore = cutoff(policy.tracesTtlDays);
      if (tracesBefore !== null) traces += await drain(() => store.pruneTraces(target, tracesBefore, batchSize));
      const bodiesBefore = cutoff(policy.bodiesTtlDays);
      if (bodiesBefore !== null) bodies += await drain(() => store.pruneBodies(target, bodiesBefore, batchSize));
    }
    if (bodies + traces > 0) logger.info('pruned traces', { bodies_removed: bodies, traces_removed: traces });
    return { bodies, traces };
  }

  function pruneNow(): Promise<{ bodies: number; traces: number }> {
    pruning ??= pass().finally(() => (pruning = null));
    return pruning;
  }

  const timer = setInterval(() => {
    pruneNow().catch((error: unknown) => logger.warn('pruning failed', { error: error instanceof Error ? error.message : String(error) }));
  }, options.intervalMs);
  timer.unref();

  return {
    keepsBodies(accountId, project) {
      if (project === null) return defaults.bodies !== 'none';
      const policy = policies.get({ accountId, project });
      return policy.bodies === 'all' || (policy.bodies === 'sample' && random() < policy.sampleRate);
    },
    async policy(accountId, project) {
      const stored = await store.get(accountId, project);
      return stored === null
        ? { ...defaults, own: false }
        : {
            bodies: stored.bodies,
            sampleRate: stored.sampleRate,
            bodiesTtlDays: stored.bodiesTtlDays,
            tracesTtlDays: stored.tracesTtlDays,
            own: true,
          };
    },
    async setPolicy(accountId, project, policy) {
      await store.put({ accountId, project, ...policy, updatedAt: now() });
      policies.set({ accountId, project }, policy);
    },
    refreshPolicy(accountId, project) {
      policies.refresh({ accountId, project });
    },
    pruneNow,
    async close() {
      clearInterval(timer);
      await pruning?.catch(() => undefined);
    },
  };
}
