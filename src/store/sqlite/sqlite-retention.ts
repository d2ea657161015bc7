/** Retention policies and batched pruning on SQLite: each batch is one short write of at most `batchSize` rows. */
import type Database from 'better-sqlite3';
import type { ProjectRetention, RetentionStore } from '../retention-store.js';

interface RetentionRecord {
  account_id: string;
  project: string;
  bodies: ProjectRetention['bodies'];
  sample_rate: number;
  bodies_ttl_days: number | null;
  traces_ttl_days: number | null;
  updated_at: number;
}

const withoutPolicy = 'NOT EXISTS (SELECT 1 FROM project_retention r WHERE r.account_id = traces.account_id AND r.project = traces.project)';

function prepareRetentionStatements(database: Database.Database) {
  const batch = (action: string, extra: string) => ({
    project: database.prepare<[string, string, number, number]>(
      `${action} WHERE rowid IN (SELECT rowid FROM traces WHERE account_id = ? AND project = ? AND started_at < ?${extra} LIMIT ?)`,
    ),
    rest: database.prepare<[number, number]>(`${action} WHERE rowid IN (SELECT rowid FROM traces WHERE started_at < ?${extra} AND ${withoutPolicy} LIMIT ?)`),
  });
  return {
    get: database.prepare<[string, string], RetentionRecord>('SELECT * FROM project_retention WHERE account_id = ? AND project = ?'),
    list: database.prepare<[], RetentionRecord>('SELECT * FROM project_retention ORDER BY account_id, project'),
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

export function createSqliteRetentionStore(database: Database.Database): RetentionStore {
  let statements: ReturnType<typeof prepareRetentionStatements> | null = null;
  const prepared = () => (statements ??= prepareRetentionStatements(database));
  const run = (pair: ReturnType<typeof prepareRetentionStatements>['bodies'], project: { accountId: string; project: string } | null, before: number, batchSize: number) =>
    project === null ? pair.rest.run(before, batchSize).changes : pair.project.run(project.accountId, project.project, before, batchSize).changes;
  return {
    async get(accountId, project) {
      const record = prepared().get.get(accountId, project);
      return record === undefined ? null : fromRecord(record);
    },
    async put(retention) {
      prepared().put.run({ ...retention });
    },
    async list() {
      return prepared().list.all().map(fromRecord);
    },
    async pruneBodies(project, before, batchSize) {
      return run(prepared().bodies, project, before, batchSize);
    },
    async pruneTraces(project, before, batchSize) {
      return run(prepared().traces, project, before, batchSize);
    },
  };
}

function fromRecord(record: RetentionRecord): ProjectRetention {
  return {
    accountId: record.account_id,
    project: record.project,
    bodies: record.bodies,
    sampleRate: record.sample_rate,
    bodiesTtlDays: record.bodies_ttl_days,
    tracesTtlDays: record.traces_ttl_days,
    updatedAt: record.updated_at,
  };
}
