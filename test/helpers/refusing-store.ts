/**
 * A real store behind two switches: one makes every write fail the way SQLite
 * fails on a full disk (`SQLITE_FULL`) while reads go on working, what a
 * process sees when its data directory's disk fills up; the other makes
 * everything fail (`SQLITE_CANTOPEN`), a store that does not answer at all.
 */
import type { Store } from '../../src/store/store.js';

/** Every method of the store's parts that writes. */
const WRITES = new Set([
  'addEvalSpend',
  'addEvidence',
  'addJudgeCheck',
  'createKey',
  'ensureAccount',
  'ensureScope',
  'insertBatch',
  'pruneBodies',
  'pruneTraces',
  'put',
  'putContract',
  'recordFeedback',
  'resetEvidence',
  'revokeKey',
  'saveRoute',
  'touchKeys',
  'acquire',
  'release',
  'publish',
  'createSession',
  'deleteSession',
  'pruneSessions',
  'pushSamples',
  'takeSamples',
  'trimSamples',
  'saveRouterStates',
  'putBudget',
  'putCacheSettings',
  'reserveSpend',
  'addSpend',
  'deleteExpiredSpend',
]);

export interface RefusingStore {
  store: Store;
  /** Writes refused so far. */
  refused(): number;
  refuseWrites(refuse: boolean): void;
  /** Reads and pings fail too. */
  goDown(down: boolean): void;
}

export function refusingStore(inner: Store): RefusingStore {
  let refusing = false;
  let down = false;
  let refused = 0;
  const unreachable = () => Promise.reject(Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' }));
  function guard<T extends object>(part: T): T {
    return new Proxy(part, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof value !== 'function' || typeof name !== 'string') return value;
        return (...args: unknown[]) => {
          if (down) return unreachable();
          if (refusing && WRITES.has(name)) {
            refused += 1;
            return Promise.reject(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }));
          }
          return (value as (...parameters: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
  const store: Store = {
    accounts: guard(inner.accounts),
    projects: guard(inner.projects),
    traces: guard(inner.traces),
    routing: guard(inner.routing),
    rollups: guard(inner.rollups),
    retention: guard(inner.retention),
    sessions: guard(inner.sessions),
    leases: guard(inner.leases),
    budgets: guard(inner.budgets),
    changes: guard(inner.changes),
    migrate: () => inner.migrate(),
    ping: () => (down ? unreachable() : inner.ping()),
    close: () => inner.close(),
  };
  return { store, refused: () => refused, refuseWrites: (refuse) => void (refusing = refuse), goDown: (isDown) => void (down = isDown) };
}
