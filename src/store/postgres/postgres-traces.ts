/**
 * Traces on PostgreSQL: a batch is one multi-row INSERT of unnest() arrays,
 * with its rollups updated in the same transaction, counting only the traces
 * it had not stored before.
 */
import { foldTraces } from '../rollup-fold.js';
import { fromTraceRow, traceColumns, traceInsertColumns, traceProperties, traceValues, type TraceRow } from '../sql-trace-records.js';
import type { Trace, TraceFilter, TraceStore } from '../store.js';
import type { PostgresDatabase } from './postgres-database.js';
import { paginate } from './postgres-pagination.js';
import { addRollups } from './postgres-rollups.js';

/** The SQL type of each property's unnest() array: text but for these. */
const arrayTypes: Partial<Record<keyof Trace, string>> = {
  httpStatus: 'integer',
  promptTokens: 'integer',
  completionTokens: 'integer',
  costUsd: 'float8',
  engineSeconds: 'float8',
  measuredCostUsd: 'float8',
  latencyMs: 'float8',
  ttftMs: 'float8',
  routeShare: 'float8',
  stream: 'boolean',
  cached: 'boolean',
  costSavedUsd: 'float8',
  startedAt: 'bigint',
};
const insertTraces =
  `INSERT INTO traces (${traceInsertColumns}) ` +
  `SELECT * FROM unnest(${traceProperties.map((property, index) => `$${index + 1}::${arrayTypes[property] ?? 'text'}[]`).join(', ')}) ` +
  'ON CONFLICT DO NOTHING RETURNING request_id';

/** Traces as this store reads them: `stream` and `cached` are BOOLEANs. */
type PostgresTraceRow = TraceRow<boolean>;

/** TraceFilter field and its condition on a parameter. */
const filterColumns: ReadonlyArray<[keyof TraceFilter, string]> = [
  ['project', 'project'],
  ['workload', 'workload'],
  ['status', 'status'],
  ['model', 'served_model'],
  ['user', 'end_user'],
  ['environment', 'environment'],
];

export function createPostgresTraces(database: PostgresDatabase): TraceStore {
  /** The WHERE clause of a filter, numbering parameters after `values`. */
  function where(accountId: string, filter: TraceFilter, values: unknown[]): string {
    values.push(accountId);
    const conditions = ['account_id = $1'];
    for (const [field, column] of filterColumns) {
      if (filter[field] === undefined) continue;
      values.push(filter[field]);
      conditions.push(`${column} = $${values.length}`);
    }
    if (filter.since !== undefined) {
      values.push(filter.since);
      conditions.push(`started_at >= $${values.length}`);
    }
    if (filter.until !== undefined) {
      values.push(filter.until);
      conditions.push(`started_at < $${values.length}`);
    }
    return conditions.join(' AND ');
  }

  return {
    async insertBatch(traces) {
      if (traces.length === 0) return 0;
      // A request id twice in one batch: the first is stored, as SQLite does.
      const unique = new Map<string, Trace>();
      for (const trace of traces) if (!unique.has(trace.requestId)) unique.set(trace.requestId, trace);
      return database.transaction(async (transaction) => {
        const batch = [...unique.values()];
        const rows = batch.map((trace) => traceValues(trace, trace.stream, trace.cached === true));
        const columns = traceProperties.map((_property, index) => rows.map((row) => row[index]));
        const stored = new Set((await transaction.query<{ request_id: string }>(insertTraces, columns)).map((row) => row.request_id));
        const inserted = batch.filter((trace) => stored.has(trace.requestId));
        await addRollups(transaction, foldTraces(inserted));
        return inserted.length;
      });
    },
    async get(accountId, requestId) {
      const rows = await database.query<PostgresTraceRow>(
        `SELECT ${traceColumns} FROM traces WHERE account_id = $1 AND request_id = $2 LIMIT 1`,
        [accountId, requestId],
      );
      return rows[0] === undefined ? null : toTrace(rows[0]);
    },
    async list(accountId, filter, page) {
      const rows = await paginate(
        page,
        (row: PostgresTraceRow) => [row.startedAt, row.requestId],
        (limit, after) => {
          const values: unknown[] = [];
          let conditions = where(accountId, filter, values);
          if (after !== null) {
            values.push(after[0], after[1]);
            conditions += ` AND (started_at, request_id) < ($${values.length - 1}, $${values.length})`;
          }
          values.push(limit);
          return database.query<PostgresTraceRow>(
            `SELECT ${traceColumns} FROM traces WHERE ${conditions} ORDER BY started_at DESC, request_id DESC LIMIT $${values.length}`,
            values,
          );
        },
      );
      return { items: rows.items.map(toTrace), nextCursor: rows.nextCursor };
    },
    async count(accountId, filter) {
      const values: unknown[] = [];
      const rows = await database.query<{ count: number }>(
        `SELECT count(*) AS count FROM traces WHERE ${where(accountId, filter, values)}`,
        values,
      );
      return rows[0]?.count ?? 0;
    },
  };
}

function toTrace(row: PostgresTraceRow): Trace {
  return fromTraceRow(row, row.stream, row.cached);
}
