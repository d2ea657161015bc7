/**
 * Rollups on SQLite: `addRollups` runs inside the transaction that inserts a
 * batch of traces (merging each row's sketches with what is stored), and
 * `createSqliteRollups` answers window queries.
 */
import { addRollupRows, type DecodedSketches, type FoldedRollup } from '../rollup-fold.js';
import type { MeasuredModelCost, RollupStore } from '../rollup-store.js';
import { fromRollupRecord, rollupColumns, toRollupRecord, type RollupRecord } from '../sql-rollup-records.js';
import type { SqliteDatabase, SqliteStatement } from './sqlite-database.js';

const keyWhere = 'account_id = ? AND project = ? AND workload = ? AND environment = ? AND model = ? AND minute = ?';

export function prepareRollupStatements(database: SqliteDatabase) {
  return {
    existing: database.prepare<[string, string, string, string, string, number], RollupRecord>(
      `SELECT ${rollupColumns} FROM rollups WHERE ${keyWhere}`,
    ),
    upsert: database.prepare(
      `INSERT INTO rollups (account_id, project, workload, environment, model, minute, calls, errors, error_classes, prompt_tokens, completion_tokens, cost_usd,
         measured_calls, measured_cost_usd, measured_tokens, cached_calls, cost_saved_usd, latency, ttft)
       VALUES (@accountId, @project, @workload, @environment, @model, @minute, @calls, @errors, @errorClasses, @promptTokens, @completionTokens, @costUsd,
         @measuredCalls, @measuredCostUsd, @measuredTokens, @cachedCalls, @costSavedUsd, @latency, @ttft)
       ON CONFLICT (account_id, project, workload, environment, model, minute) DO UPDATE SET
         calls = excluded.calls, errors = excluded.errors, error_classes = excluded.error_classes, prompt_tokens = excluded.prompt_tokens,
         completion_tokens = excluded.completion_tokens, cost_usd = excluded.cost_usd, measured_calls = excluded.measured_calls,
         measured_cost_usd = excluded.measured_cost_usd, measured_tokens = excluded.measured_tokens, cached_calls = excluded.cached_calls,
         cost_saved_usd = excluded.cost_saved_usd, latency = excluded.latency, ttft = excluded.ttft`,
    ),
  };
}

type RollupStatements = ReturnType<typeof prepareRollupStatements>;

/** Adds folded rows to the stored ones; call inside the transaction that stores their traces. `sketches`: the ones this store wrote last (`rollup-fold.ts`). */
export function addRollups(statements: RollupStatements, rows: readonly FoldedRollup[], sketches: DecodedSketches): void {
  for (const row of rows) {
    const stored = statements.existing.get(row.accountId, row.project, row.workload, row.environment, row.model, row.minute);
    statements.upsert.run(toRollupRecord(addRollupRows(stored === undefined ? undefined : fromRollupRecord(stored), row, sketches)));
  }
}

export function createSqliteRollups(database: SqliteDatabase): RollupStore {
  const statements = new Map<string, SqliteStatement<unknown[], RollupRecord>>();
  // Prepared on first use: the store is made before its migrations run.
  let measured: SqliteStatement<[number], MeasuredModelCost> | null = null;
  return {
    async measuredByModel(since) {
      measured ??= database.prepare<[number], MeasuredModelCost>(
        `SELECT model, SUM(measured_cost_usd) AS costUsd, SUM(measured_tokens) AS tokens FROM rollups
         WHERE minute >= ? AND measured_calls > 0 AND model <> '' GROUP BY model ORDER BY model`,
      );
      return measured.all(since);
    },
    async query(accountId, query) {
      const clauses = ['account_id = ?', 'minute >= ?', 'minute < ?'];
      const parameters: unknown[] = [accountId, query.since, query.until];
      for (const [column, value] of [
        ['project', query.project],
        ['workload', query.workload],
        ['environment', query.environment],
      ] as const) {
        if (value === undefined) continue;
        clauses.push(`${column} = ?`);
        parameters.push(value);
      }
      const sql = `SELECT ${rollupColumns} FROM rollups WHERE ${clauses.join(' AND ')} ORDER BY minute`;
      let statement = statements.get(sql);
      if (statement === undefined) statements.set(sql, (statement = database.prepare<unknown[], RollupRecord>(sql)));
      return statement.all(...parameters).map(fromRollupRecord);
    },
  };
}
