/**
 * Rollups on PostgreSQL: `addRollups` runs inside the transaction that inserts
 * a batch of traces, and `createPostgresRollupStore` answers window queries.
 *
 * Sketches merge in JavaScript, so a row is read, merged and written back
 * under a row lock. Several processes write at once: each batch first inserts
 * the rows it lacks (zeros), then locks all of its rows, both in one key
 * order, so two batches wait for each other instead of deadlocking.
 */
import { encodeSketch, mergeEncoded } from '../../tracking/latency-sketch.js';
import type { RollupRow, RollupStore } from '../rollup-store.js';
import type { Environment } from '../store.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';

interface RollupRecord {
  account_id: string;
  project: string;
  workload: string;
  environment: Environment;
  model: string;
  minute: number;
  calls: number;
  errors: number;
  error_classes: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  latency: Buffer | null;
  ttft: Buffer | null;
}

const keyColumns = 'account_id, project, workload, environment, model, minute';
const keyArrays = 'unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])';

/** Adds folded rows to the stored ones; call inside the transaction that stores their traces. */
export async function addRollups(transaction: Queryable, rows: readonly RollupRow[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort(compareKeys);
  const keys = [
    sorted.map((row) => row.accountId), sorted.map((row) => row.project), sorted.map((row) => row.workload),
    sorted.map((row) => row.environment), sorted.map((row) => row.model), sorted.map((row) => row.minute),
  ];
  await transaction.execute(
    `INSERT INTO rollups (${keyColumns}, calls, errors, error_classes, prompt_tokens, completion_tokens, cost_usd)
     SELECT *, 0, 0, '{}', 0, 0, 0 FROM ${keyArrays} ON CONFLICT DO NOTHING`,
    keys,
  );
  const stored = await transaction.query<RollupRecord>(
    `SELECT r.* FROM rollups r JOIN ${keyArrays} AS k (${keyColumns}) USING (${keyColumns})
     ORDER BY ${keyColumns} FOR UPDATE OF r`,
    keys,
  );
  const byKey = new Map(stored.map((record) => [keyOf(fromRecord(record)), fromRecord(record)]));
  const merged = sorted.map((row) => {
    const existing = byKey.get(keyOf(row));
    return existing === undefined ? row : mergeRows(existing, row);
  });
  await transaction.execute(
    `UPDATE rollups r SET calls = u.calls, errors = u.errors, error_classes = u.error_classes, prompt_tokens = u.prompt_tokens,
       completion_tokens = u.completion_tokens, cost_usd = u.cost_usd, latency = u.latency, ttft = u.ttft
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[],
       $10::bigint[], $11::bigint[], $12::float8[], $13::bytea[], $14::bytea[])
       AS u (${keyColumns}, calls, errors, error_classes, prompt_tokens, completion_tokens, cost_usd, latency, ttft)
     WHERE (r.account_id, r.project, r.workload, r.environment, r.model, r.minute) = (u.account_id, u.project, u.workload, u.environment, u.model, u.minute)`,
    [
      ...keys,
      merged.map((row) => row.calls), merged.map((row) => row.errors), merged.map((row) => JSON.stringify(row.errorClasses)),
      merged.map((row) => row.promptTokens), merged.map((row) => row.completionTokens), merged.map((row) => row.costUsd),
      merged.map((row) => asBuffer(row.latency)), merged.map((row) => asBuffer(row.ttft)),
    ],
  );
}

export function createPostgresRollupStore(database: PostgresDatabase): RollupStore {
  return {
    async query(accountId, query) {
      const clauses = ['account_id = $1', 'minute >= $2', 'minute < $3'];
      const values: unknown[] = [accountId, query.since, query.until];
      for (const [column, value] of [['project', query.project], ['workload', query.workload], ['environment', query.environment]] as const) {
        if (value === undefined) continue;
        values.push(value);
        clauses.push(`${column} = $${values.length}`);
      }
      const records = await database.query<RollupRecord>(`SELECT * FROM rollups WHERE ${clauses.join(' AND ')} ORDER BY minute, project, workload, environment, model`, values);
      return records.map(fromRecord);
    },
  };
}

function mergeRows(stored: RollupRow, added: RollupRow): RollupRow {
  const errorClasses = { ...stored.errorClasses };
  for (const [name, count] of Object.entries(added.errorClasses)) errorClasses[name] = (errorClasses[name] ?? 0) + count;
  const latency = mergeEncoded([stored.latency, added.latency]);
  const ttft = mergeEncoded([stored.ttft, added.ttft]);
  return {
    ...stored,
    calls: stored.calls + added.calls,
    errors: stored.errors + added.errors,
    errorClasses,
    promptTokens: stored.promptTokens + added.promptTokens,
    completionTokens: stored.completionTokens + added.completionTokens,
    costUsd: stored.costUsd + added.costUsd,
    latency: latency === null ? null : encodeSketch(latency),
    ttft: ttft === null ? null : encodeSketch(ttft),
  };
}

function fromRecord(record: RollupRecord): RollupRow {
  return {
    accountId: record.account_id,
    project: record.project,
    workload: record.workload,
    environment: record.environment,
    model: record.model,
    minute: record.minute,
    calls: record.calls,
    errors: record.errors,
    errorClasses: JSON.parse(record.error_classes) as Record<string, number>,
    promptTokens: record.prompt_tokens,
    completionTokens: record.completion_tokens,
    costUsd: record.cost_usd,
    latency: record.latency === null ? null : new Uint8Array(record.latency),
    ttft: record.ttft === null ? null : new Uint8Array(record.ttft),
  };
}

function keyOf(row: RollupRow): string {
  return `${row.accountId}\u0000${row.project}\u0000${row.workload}\u0000${row.environment}\u0000${row.model}\u0000${row.minute}`;
}

function compareKeys(left: RollupRow, right: RollupRow): number {
  const a = keyOf(left);
  const b = keyOf(right);
  return a < b ? -1 : a > b ? 1 : 0;
}

function asBuffer(bytes: Uint8Array | null): Buffer | null {
  return bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
