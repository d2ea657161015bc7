/**
 * Rollups on PostgreSQL: `addRollups` runs inside the transaction that inserts
 * a batch of traces, and `createPostgresRollups` answers window queries.
 *
 * Sketches merge in JavaScript, so a row is read, merged and written back
 * under a row lock. Several processes write at once: each batch first inserts
 * the rows it lacks (zeros), then locks all of its rows, both in one key
 * order, so two batches wait for each other instead of deadlocking.
 */
import { addRollupRows, rollupKey, type FoldedRollup } from '../rollup-fold.js';
import type { MeasuredModelCost, RollupStore } from '../rollup-store.js';
import { fromRollupRecord, rollupColumns, toRollupRecord, type RollupRecord } from '../sql-rollup-records.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';

const keyColumns = 'account_id, project, workload, environment, model, minute';
const keyArrays = 'unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])';

/** Adds folded rows to the stored ones; call inside the transaction that stores their traces. */
export async function addRollups(transaction: Queryable, rows: readonly FoldedRollup[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort(compareKeys);
  const keys = [
    sorted.map((row) => row.accountId),
    sorted.map((row) => row.project),
    sorted.map((row) => row.workload),
    sorted.map((row) => row.environment),
    sorted.map((row) => row.model),
    sorted.map((row) => row.minute),
  ];
  await transaction.execute(
    `INSERT INTO rollups (${keyColumns}, calls, errors, error_classes, prompt_tokens, completion_tokens, cost_usd)
     SELECT *, 0, 0, '{}', 0, 0, 0 FROM ${keyArrays} ON CONFLICT DO NOTHING`,
    keys,
  );
  const stored = await transaction.query<RollupRecord>(
    `SELECT ${rollupColumns} FROM rollups r JOIN ${keyArrays} AS k (${keyColumns}) USING (${keyColumns})
     ORDER BY ${keyColumns} FOR UPDATE OF r`,
    keys,
  );
  const byKey = new Map(stored.map((record) => [rollupKey(record), fromRollupRecord(record)]));
  const merged = sorted.map((row) => toRollupRecord(addRollupRows(byKey.get(rollupKey(row)), row)));
  await transaction.execute(
    `UPDATE rollups r SET calls = u.calls, errors = u.errors, error_classes = u.error_classes, prompt_tokens = u.prompt_tokens,
       completion_tokens = u.completion_tokens, cost_usd = u.cost_usd, measured_calls = u.measured_calls,
       measured_cost_usd = u.measured_cost_usd, measured_tokens = u.measured_tokens, cached_calls = u.cached_calls, cost_saved_usd = u.cost_saved_usd,
       latency = u.latency, ttft = u.ttft
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[],
       $10::bigint[], $11::bigint[], $12::float8[], $13::bigint[], $14::float8[], $15::bigint[], $16::bigint[], $17::float8[], $18::bytea[], $19::bytea[])
       AS u (${keyColumns}, calls, errors, error_classes, prompt_tokens, completion_tokens, cost_usd, measured_calls, measured_cost_usd, measured_tokens,
         cached_calls, cost_saved_usd, latency, ttft)
     WHERE (r.account_id, r.project, r.workload, r.environment, r.model, r.minute) = (u.account_id, u.project, u.workload, u.environment, u.model, u.minute)`,
    [
      ...keys,
      merged.map((record) => record.calls),
      merged.map((record) => record.errors),
      merged.map((record) => record.errorClasses),
      merged.map((record) => record.promptTokens),
      merged.map((record) => record.completionTokens),
      merged.map((record) => record.costUsd),
      merged.map((record) => record.measuredCalls),
      merged.map((record) => record.measuredCostUsd),
      merged.map((record) => record.measuredTokens),
      merged.map((record) => record.cachedCalls),
      merged.map((record) => record.costSavedUsd),
      merged.map((record) => record.latency),
      merged.map((record) => record.ttft),
    ],
  );
}

export function createPostgresRollups(database: PostgresDatabase): RollupStore {
  return {
    async measuredByModel(since) {
      return database.query<MeasuredModelCost>(
        `SELECT model, SUM(measured_cost_usd)::float8 AS "costUsd", SUM(measured_tokens)::float8 AS tokens FROM rollups
         WHERE minute >= $1 AND measured_calls > 0 AND model <> '' GROUP BY model ORDER BY model`,
        [since],
      );
    },
    async query(accountId, query) {
      const clauses = ['account_id = $1', 'minute >= $2', 'minute < $3'];
      const values: unknown[] = [accountId, query.since, query.until];
      for (const [column, value] of [
        ['project', query.project],
        ['workload', query.workload],
        ['environment', query.environment],
      ] as const) {
        if (value === undefined) continue;
        values.push(value);
        clauses.push(`${column} = $${values.length}`);
      }
      const records = await database.query<RollupRecord>(
        `SELECT ${rollupColumns} FROM rollups WHERE ${clauses.join(' AND ')} ORDER BY minute, project, workload, environment, model`,
        values,
      );
      return records.map(fromRollupRecord);
    },
  };
}

function compareKeys(left: Parameters<typeof rollupKey>[0], right: Parameters<typeof rollupKey>[0]): number {
  const a = rollupKey(left);
  const b = rollupKey(right);
  return a < b ? -1 : a > b ? 1 : 0;
}
