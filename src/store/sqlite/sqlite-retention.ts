/** Retention policies and batched pruning on SQLite: each batch is one short write of at most `batchSize` rows. */
import type { ProjectRetention, RetentionStore } from '../retention-store.js';
import { retentionColumns } from '../sql-records.js';
import { preparedOnFirstUse, type SqliteDatabase } from './sqlite-database.js';

const withoutPolicy =
  'NOT EXISTS (SELECT 1 FROM project_retention r WHERE r.account_id = traces.account_id AND r.project = traces.project)';

/**
 * Every account that has traces, read from traces_account_started by one index
 * seek each (a loose index scan: the next account after the last one), so the
 * pruner can walk that index an account at a time. No index of its own on
 * `started_at` is needed, which every call would pay to keep up; and the
 * traces of an account missing from `accounts` are pruned too. The spend of
 * every account (`sqlite-budgets.ts`) walks it the same way.
 */
export const tracedAccounts =
  'WITH RECURSIVE traced (account_id) AS (SELECT MIN(account_id) FROM traces ' +
  'UNION ALL SELECT (SELECT MIN(account_id) FROM traces WHERE account_id > traced.account_id) FROM traced WHERE traced.account_id IS NOT NULL) ';

function prepareRetentionStatements(database: SqliteDatabase) {
  const batch = (action: string, extra: string) => ({
    project: database.prepare<[string, string, number, number]>(
      `${action} WHERE rowid IN (SELECT rowid FROM traces WHERE account_id = ? AND project = ? AND started_at < ?${extra} LIMIT ?)`,
    ),
    rest: database.prepare<[number, number]>(
      `${action} WHERE rowid IN (${tracedAccounts}SELECT traces.rowid FROM traced JOIN traces ON traces.account_id = traced.account_id ` +
        `AND traces.started_at < ?${extra} WHERE ${withoutPolicy} LIMIT ?)`,
    ),
  });
  return {
    get: database.prepare<[string, string], ProjectRetention>(
      `SELECT ${retentionColumns} FROM project_retention WHERE account_id = ? AND project = ?`,
    ),
    list: database.prepare<[], ProjectRetention>(`SELECT ${retentionColumns} FROM project_retention ORDER BY account_id, project`),
    put: database.prepare(
      `INSERT INTO project_retention (account_id, project, bodies, sample_rate, bodies_ttl_days, traces_ttl_days, updated_at)
       VALUES (@accountId, @project, @bodies, @sampleRate, @bodiesTtlDays, @tracesTtlDays, @updatedAt)
       ON CONFLICT (account_id, project) DO UPDATE SET bodies = excluded.bodies, sample_rate = excluded.sample_rate,
         bodies_ttl_days = excluded.bodies_ttl_days, traces_ttl_days = excluded.traces_ttl_days, updated_at = excluded.updated_at`,
    ),
    bodies: batch('UPDATE traces SET request_body = NULL, reply_body = NULL', ' AND (request_body IS NOT NULL OR reply_body IS NOT NULL)'),
    traces: batch('DELETE FROM traces', ''),
  };
}

export function createSqliteRetention(database: SqliteDatabase): RetentionStore {
  const prepared = preparedOnFirstUse(() => prepareRetentionStatements(database));
  const run = (
    pair: ReturnType<typeof prepareRetentionStatements>['bodies'],
    project: { accountId: string; project: string } | null,
    before: number,
    batchSize: number,
  ) =>
    project === null
      ? pair.rest.run(before, batchSize).changes
      : pair.project.run(project.accountId, project.project, before, batchSize).changes;
  return {
    async get(accountId, project) {
      return prepared().get.get(accountId, project) ?? null;
    },
    async put(retention) {
      prepared().put.run({ ...retention });
    },
    async list() {
      return prepared().list.all();
    },
    async pruneBodies(project, before, batchSize) {
      return run(prepared().bodies, project, before, batchSize);
    },
    async pruneTraces(project, before, batchSize) {
      return run(prepared().traces, project, before, batchSize);
    },
  };
}
