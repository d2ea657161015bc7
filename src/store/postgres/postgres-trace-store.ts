/**
 * Traces on PostgreSQL: a batch is one multi-row INSERT of unnest() arrays,
 * with its rollups updated in the same transaction, counting only the traces
 * it had not stored before.
 */
import { foldTraces } from '../../tracking/rollup-delta.js';
import type { Trace, TraceFilter, TraceStore } from '../store.js';
import type { PostgresDatabase } from './postgres-database.js';
import { paginate } from './postgres-pagination.js';
import { addRollups } from './postgres-rollups.js';

/** Column, property and the SQL type of its unnest() array, in insertion order. */
const traceFields: ReadonlyArray<[string, keyof Trace, string]> = [
  ['request_id', 'requestId', 'text'], ['account_id', 'accountId', 'text'], ['key_id', 'keyId', 'text'], ['environment', 'environment', 'text'],
  ['project', 'project', 'text'], ['workload', 'workload', 'text'], ['end_user', 'user', 'text'], ['requested_model', 'requestedModel', 'text'],
  ['served_model', 'servedModel', 'text'], ['replica', 'replica', 'text'], ['status', 'status', 'text'], ['error_class', 'errorClass', 'text'],
  ['error_message', 'errorMessage', 'text'], ['http_status', 'httpStatus', 'integer'], ['finish_reason', 'finishReason', 'text'],
  ['prompt_tokens', 'promptTokens', 'integer'], ['completion_tokens', 'completionTokens', 'integer'], ['cost_usd', 'costUsd', 'float8'],
  ['latency_ms', 'latencyMs', 'float8'], ['ttft_ms', 'ttftMs', 'float8'], ['stream', 'stream', 'boolean'], ['metadata', 'metadata', 'text'],
  ['started_at', 'startedAt', 'bigint'], ['request_body', 'requestBody', 'text'], ['reply_body', 'replyBody', 'text'],
];
const traceColumns = traceFields.map(([column, field]) => `${column} AS "${field}"`).join(', ');
const insertTraces =
  `INSERT INTO traces (${traceFields.map(([column]) => column).join(', ')}) ` +
  `SELECT * FROM unnest(${traceFields.map(([, , type], index) => `$${index + 1}::${type}[]`).join(', ')}) ` +
  'ON CONFLICT DO NOTHING RETURNING request_id';

type TraceRow = Omit<Trace, 'metadata'> & { metadata: string | null };

/** TraceFilter field and its condition on a parameter. */
const filterColumns: ReadonlyArray<[keyof TraceFilter, string]> = [
  ['project', 'project'],
  ['workload', 'workload'],
  ['status', 'status'],
  ['model', 'served_model'],
  ['user', 'end_user'],
  ['environment', 'environment'],
];

export function createPostgresTraceStore(database: PostgresDatabase): TraceStore {
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
        const columns = traceFields.map(([, field]) => batch.map((trace) => parameterOf(trace, field)));
        const stored = new Set((await transaction.query<{ request_id: string }>(insertTraces, columns)).map((row) => row.request_id));
        const inserted = batch.filter((trace) => stored.has(trace.requestId));
        await addRollups(transaction, foldTraces(inserted));
        return inserted.length;
      });
    },
    async get(accountId, requestId) {
      const rows = await database.query<TraceRow>(`SELECT ${traceColumns} FROM traces WHERE account_id = $1 AND request_id = $2 LIMIT 1`, [accountId, requestId]);
      return rows[0] === undefined ? null : toTrace(rows[0]);
    },
    async list(accountId, filter, page) {
      const rows = await paginate(page, (row: TraceRow) => [row.startedAt, row.requestId], (limit, after) => {
        const values: unknown[] = [];
        let conditions = where(accountId, filter, values);
        if (after !== null) {
          values.push(after[0], after[1]);
          conditions += ` AND (started_at, request_id) < ($${values.length - 1}, $${values.length})`;
        }
        values.push(limit);
        return database.query<TraceRow>(
          `SELECT ${traceColumns} FROM traces WHERE ${conditions} ORDER BY started_at DESC, request_id DESC LIMIT $${values.length}`,
          values,
        );
      });
      return { items: rows.items.map(toTrace), nextCursor: rows.nextCursor };
    },
    async count(accountId, filter) {
      const values: unknown[] = [];
      const rows = await database.query<{ count: number }>(`SELECT count(*) AS count FROM traces WHERE ${where(accountId, filter, values)}`, values);
      return rows[0]?.count ?? 0;
    },
  };
}

function parameterOf(trace: Trace, field: keyof Trace): unknown {
  return field === 'metadata' ? (trace.metadata === null ? null : JSON.stringify(trace.metadata)) : trace[field];
}

function toTrace(row: TraceRow): Trace {
  // Only this store writes the metadata column, always from a Record<string, string>.
  return { ...row, metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, string>) };
}
