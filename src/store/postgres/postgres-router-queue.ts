/** The router's sample queue and per-route state (`routing-store.ts`) on PostgreSQL. */
import type { RouterStateRecord, RoutingStore } from '../routing-store.js';
import { fromRevisedRow, fromRouterStateRow, routerStateColumns, type RevisedRow, type RouterStateRow } from '../sql-routing-records.js';
import type { PostgresDatabase } from './postgres-database.js';

export type RouterQueue = Pick<
  RoutingStore,
  'pushSamples' | 'takeSamples' | 'trimSamples' | 'saveRouterStates' | 'listRouterStatesChangedAfter'
>;

export function createPostgresRouterQueue(database: PostgresDatabase): RouterQueue {
  return {
    async pushSamples(samples) {
      if (samples.length === 0) return;
      // Ids follow the order given (WITH ORDINALITY), so "oldest" is the order pushed, as in SQLite.
      await database.execute(
        'INSERT INTO router_samples (body, at) SELECT body, at FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS s (body, at, position) ORDER BY position',
        [samples.map((sample) => sample.body), samples.map((sample) => sample.at)],
      );
    },
    async takeSamples(limit) {
      // SKIP LOCKED: a second taker passes over the rows the first is taking instead of waiting for
      // them (and then finding them gone), so each sample goes to one taker and none waits.
      const rows = await database.query<{ id: number; body: string }>(
        `DELETE FROM router_samples WHERE id IN (SELECT id FROM router_samples ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, body`,
        [Math.max(0, Math.trunc(limit))],
      );
      return rows.sort((left, right) => left.id - right.id).map((row) => row.body);
    },
    async trimSamples(keep) {
      return database.execute('DELETE FROM router_samples WHERE id <= (SELECT id FROM router_samples ORDER BY id DESC OFFSET $1 LIMIT 1)', [
        Math.max(0, Math.trunc(keep)),
      ]);
    },
    async saveRouterStates(states) {
      // One row per route: the last of a route given twice wins (ON CONFLICT may not touch a row twice in one statement).
      const latest = new Map<string, RouterStateRecord>();
      for (const record of states)
        latest.set(JSON.stringify([record.scope.accountId, record.scope.project, record.scope.workload, record.requestedModel]), record);
      if (latest.size === 0) return;
      const rows = [...latest.values()];
      await database.execute(
        `INSERT INTO router_states (account_id, project, workload, requested_model, state, updated_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
         ON CONFLICT (account_id, project, workload, requested_model) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
        [
          rows.map((row) => row.scope.accountId),
          rows.map((row) => row.scope.project),
          rows.map((row) => row.scope.workload),
          rows.map((row) => row.requestedModel),
          rows.map((row) => row.state),
          rows.map((row) => row.updatedAt),
        ],
      );
    },
    async listRouterStatesChangedAfter(revision) {
      // Numbered in commit order by the trigger of migration 0007, as routes are.
      const rows = await database.query<RevisedRow<RouterStateRow>>(
        `SELECT ${routerStateColumns}, revision FROM router_states WHERE revision > $1 ORDER BY revision`,
        [revision],
      );
      return rows.map((row) => fromRevisedRow(row, fromRouterStateRow));
    },
  };
}
