/**
 * The router's sample queue and per-route state (`routing-store.ts`) on
 * SQLite, in the file every process on this machine shares, so any of them
 * may push samples and whichever leads the router takes them.
 */
import type { RouterStateRecord, RoutingStore } from '../routing-store.js';
import { fromRevisedRow, fromRouterStateRow, routerStateColumns, type RevisedRow, type RouterStateRow } from '../sql-routing-records.js';
import { preparedOnFirstUse, type SqliteDatabase } from './sqlite-database.js';

export type RouterQueue = Pick<
  RoutingStore,
  'pushSamples' | 'takeSamples' | 'trimSamples' | 'saveRouterStates' | 'listRouterStatesChangedAfter'
>;

export function createSqliteRouterQueue(database: SqliteDatabase): RouterQueue {
  const prepared = preparedOnFirstUse(() => ({
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
    statesAfter: database.prepare<[number], RevisedRow<RouterStateRow>>(
      `SELECT ${routerStateColumns}, revision FROM router_states WHERE revision > ? ORDER BY revision`,
    ),
  }));
  const push = database.transaction((samples: ReadonlyArray<{ body: string; at: number }>) => {
    for (const sample of samples) prepared().push.run(sample.body, sample.at);
  });
  const save = database.transaction((states: readonly RouterStateRecord[]) => {
    for (const { scope, requestedModel, state, updatedAt } of states)
      prepared().saveState.run(scope.accountId, scope.project, scope.workload, requestedModel, state, updatedAt);
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
      return prepared()
        .statesAfter.all(revision)
        .map((row) => fromRevisedRow(row, fromRouterStateRow));
    },
  };
}
