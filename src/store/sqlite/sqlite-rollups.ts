/**
 * Rollups on SQLite: `addRollups` runs inside the transaction that inserts a
 * batch of traces (merging each row's sketches with what is stored), and
 * `createSqliteRollupStore` answers window queries.
 */
import type Database from 'better-sqlite3';
import { mergeEncoded, encodeSketch } from '../../tracking/latency-sketch.js';
import type { RollupRow, RollupStore } from '../rollup-store.js';
import type { Environment } from '../store.js';

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

const keyWhere = 'account_id = ? AND project = ? AND workload = ? AND environment = ? AND model = ? AND minute = ?';

export function prepareRollupStatements(database: Database.Database) {
  return {
    existing: database.prepare<[string, string, string, string, string, number], RollupRecord>(`SELECT * FROM rollups WHERE ${keyWhere}`),
    upsert: database.prepare(
      `INSERT INTO rollups (account_id, project, workload, environment, model, minute, calls, errors, error_classes, prompt_tokens, completion_tokens, cost_usd, latency, ttft)
       VALUES (@accountId, @project, @workload, @environment, @model, @minute, @calls, @errors, @errorClasses, @promptTokens, @completionTokens, @costUsd, @latency, @ttft)
       ON CONFLICT (account_id, project, workload, environment, model, minute) DO UPDATE SET
         calls = excluded.calls, errors = excluded.errors, error_classes = excluded.error_classes, prompt_tokens = excluded.prompt_tokens,
         completion_tokens = excluded.completion_tokens, cost_usd = excluded.cost_usd, latency = excluded.latency, ttft = excluded.ttft`,
    ),
  };
}

type RollupStatements = ReturnType<typeof prepareRollupStatements>;

/** Adds folded rows to the stored ones; call inside the transaction that stores their traces. */
export function addRollups(statements: RollupStatements, rows: readonly RollupRow[]): void {
  for (const row of rows) {
    const stored = statements.existing.get(row.accountId, row.project, row.workload, row.environment, row.model, row.minute);
    const merged = stored === undefined ? row : mergeRows(fromRecord(stored), row);
    statements.upsert.run({
      ...merged,
      errorClasses: JSON.stringify(merged.errorClasses),
      latency: merged.latency === null ? null : Buffer.from(merged.latency),
      ttft: merged.ttft === null ? null : Buffer.from(merged.ttft),
    });
  }
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

export function createSqliteRollupStore(database: Database.Database): RollupStore {
  const statements = new Map<string, Database.Statement<unknown[], RollupRecord>>();
  return {
    async query(accountId, query) {
      const clauses = ['account_id = ?', 'minute >= ?', 'minute < ?'];
      const parameters: unknown[] = [accountId, query.since, query.until];
      for (const [column, value] of [['project', query.project], ['workload', query.workload], ['environment', query.environment]] as const) {
        if (value === undefined) continue;
        clauses.push(`${column} = ?`);
        parameters.push(value);
      }
      const sql = `SELECT * FROM rollups WHERE ${clauses.join(' AND ')} ORDER BY minute`;
      let statement = statements.get(sql);
      if (statement === undefined) statements.set(sql, (statement = database.prepare<unknown[], RollupRecord>(sql)));
      return statement.all(...parameters).map(fromRecord);
    },
  };
}
