/**
 * The parts of the Store that let several processes act as one service, on
 * SQLite: leases, the change feed and dashboard sessions. On one machine
 * several processes may share the file (`serve --workers`), so none of this
 * lives in memory alone.
 */
import type Database from 'better-sqlite3';
import type { Change, ChangeFeed } from '../change-feed.js';
import type { Lease, LeaseStore } from '../lease-store.js';
import type { RouterStateRecord, RoutingStore } from '../routing-store.js';
import type { SessionStore, StoredSession } from '../session-store.js';
import { fromRevisedRow, fromRouterStateRow, routerStateColumns, type RevisedRow, type RouterStateRow } from '../sql-routing-records.js';

/** How often a subscribed process reads the changes table. */
const changePollMs = 200;
/** Changes older than this are of no use to anyone (subscribers read every 200 ms) and are removed. */
const changeRetentionMs = 60_000;

export function createSqliteLeases(database: Database.Database): LeaseStore {
  let statements: ReturnType<typeof prepare> | null = null;
  const prepare = () => ({
    take: database.prepare<[string, string, number, number]>(
      `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE leases.holder = excluded.holder OR leases.expires_at <= ?`,
    ),
    release: database.prepare<[string, string]>('DELETE FROM leases WHERE name = ? AND holder = ?'),
    current: database.prepare<[string, number], Lease>('SELECT name, holder, expires_at AS expiresAt FROM leases WHERE name = ? AND expires_at > ?'),
  });
  const prepared = () => (statements ??= prepare());
  return {
    async acquire(name, holder, ttlMs) {
      const now = Date.now();
      return prepared().take.run(name, holder, now + ttlMs, now).changes === 1;
    },
    async release(name, holder) {
      prepared().release.run(name, holder);
    },
    async current(name) {
      return prepared().current.get(name, Date.now()) ?? null;
    },
  };
}

export function createSqliteChangeFeed(database: Database.Database): ChangeFeed & { close(): void } {
  let statements: ReturnType<typeof prepare> | null = null;
  const prepare = () => ({
    insert: database.prepare<[string, number]>('INSERT INTO changes (body, at) VALUES (?, ?)'),
    prune: database.prepare<[number]>('DELETE FROM changes WHERE at < ?'),
    newest: database.prepare<[], number>('SELECT coalesce(max(id), 0) FROM changes').pluck(),
    after: database.prepare<[number], { id: number; body: string }>('SELECT id, body FROM changes WHERE id > ? ORDER BY id LIMIT 1000'),
  });
  const prepared = () => (statements ??= prepare());
  const listeners = new Set<(change: Change) => void>();
  let lastSeen = 0;
  let lastPruneAt = 0;
  let timer: NodeJS.Timeout | null = null;

  function read(): void {
    if (!database.open) return;
    for (const row of prepared().after.all(lastSeen)) {
      lastSeen = row.id;
      const change = JSON.parse(row.body) as Change;
      for (const listener of listeners) listener(change);
    }
  }

  return {
    async publish(change) {
      const now = Date.now();
      prepared().insert.run(JSON.stringify(change), now);
      if (now - lastPruneAt > changeRetentionMs / 6) {
        lastPruneAt = now;
        prepared().prune.run(now - changeRetentionMs);
      }
    },
    subscribe(listener) {
      if (listeners.size === 0) {
        lastSeen = prepared().newest.get() ?? 0;
        timer = setInterval(read, changePollMs);
        timer.unref();
      }
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && timer !== null) {
          clearInterval(timer);
          timer = null;
        }
      };
    },
    close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      listeners.clear();
    },
  };
}

interface SessionRow {
  idHash: string;
  keyId: string;
  accountId: string;
  keyHash: string;
  expiresAt: number;
}

export function createSqliteSessions(database: Database.Database): SessionStore {
  let statements: ReturnType<typeof prepare> | null = null;
  const columns = 'id_hash AS idHash, key_id AS keyId, account_id AS accountId, key_hash AS keyHash, expires_at AS expiresAt';
  const prepare = () => ({
    insert: database.prepare<[string, string, string, string, number]>(
      'INSERT INTO dashboard_sessions (id_hash, key_id, account_id, key_hash, expires_at) VALUES (?, ?, ?, ?, ?)',
    ),
    get: database.prepare<[string, number], SessionRow>(`SELECT ${columns} FROM dashboard_sessions WHERE id_hash = ? AND expires_at > ?`),
    delete: database.prepare<[string]>('DELETE FROM dashboard_sessions WHERE id_hash = ?'),
    prune: database.prepare<[number]>('DELETE FROM dashboard_sessions WHERE expires_at <= ?'),
  });
  const prepared = () => (statements ??= prepare());
  return {
    async createSession(session: StoredSession) {
      prepared().insert.run(session.idHash, session.keyId, session.accountId, session.keyHash, session.expiresAt);
    },
    async getSession(idHash, now) {
      return prepared().get.get(idHash, now) ?? null;
    },
    async deleteSession(idHash) {
      prepared().delete.run(idHash);
    },
    async pruneSessions(now) {
      return prepared().prune.run(now).changes;
    },
  };
}

type RouterQueue = Pick<RoutingStore, 'pushSamples' | 'takeSamples' | 'trimSamples' | 'saveRouterStates' | 'listRouterStatesChangedAfter'>;

/** The router's sample queue and per-route state (`routing-store.ts`), on SQLite. */
export function createSqliteRouterQueue(database: Database.Database): RouterQueue {
  let statements: ReturnType<typeof prepare> | null = null;
  const prepare = () => ({
    push: database.prepare<[string, number]>('INSERT INTO router_samples (body, at) VALUES (?, ?)'),
    take: database.prepare<[number], { id: number; body: string }>(
      'DELETE FROM router_samples WHERE id IN (SELECT id FROM router_samples ORDER BY id LIMIT ?) RETURNING id, body',
    ),
    trim: database.prepare<[number]>(
      'DELETE FROM router_samples WHERE id <= (SELECT id FROM router_samples ORDER BY id DESC LIMIT 1 OFFSET ?)',
    ),
    saveState: database.prepare<[string, string, string, string, string, number]>(
      `INSERT INTO router_states (account_id, project, workload, requested_model, state, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, project, workload, requested_model) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
    ),
    // Revisions are given by the triggers of migration 0012, in commit order.
    statesAfter: database.prepare<[number], RevisedRow<RouterStateRow>>(`SELECT ${routerStateColumns}, revision FROM router_states WHERE revision > ? ORDER BY revision`),
  });
  const prepared = () => (statements ??= prepare());
  const push = database.transaction((samples: ReadonlyArray<{ body: string; at: number }>) => {
    for (const sample of samples) prepared().push.run(sample.body, sample.at);
  });
  const save = database.transaction((states: readonly RouterStateRecord[]) => {
    for (const { scope, requestedModel, state, updatedAt } of states) prepared().saveState.run(scope.accountId, scope.project, scope.workload, requestedModel, state, updatedAt);
  });
  return {
    async pushSamples(samples) {
      if (samples.length > 0) push.immediate(samples);
    },
    async takeSamples(limit) {
      return prepared()
        .take.all(limit)
        .sort((left, right) => left.id - right.id)
        .map((row) => row.body);
    },
    async trimSamples(keep) {
      return prepared().trim.run(keep).changes;
    },
    async saveRouterStates(states) {
      if (states.length > 0) save.immediate(states);
    },
    async listRouterStatesChangedAfter(revision) {
      return prepared().statesAfter.all(revision).map((row) => fromRevisedRow(row, fromRouterStateRow));
    },
  };
}
