/**
 * Traces (`TraceStore`, `store.ts`) on SQLite. A batch is stored in one
 * transaction with its rollups (`sqlite-rollups.ts`), counting only the
 * traces it had not stored before.
 */
import { DecodedSketches, foldTraces } from '../rollup-fold.js';
import { fromTraceRow, traceColumns, traceInsertColumns, traceProperties, traceValues, type TraceRow } from '../sql-trace-records.js';
import type { Trace, TraceFilter, TraceStore } from '../store.js';
import { preparedOnFirstUse, type SqliteDatabase, type SqliteStatement } from './sqlite-database.js';
import { paginate } from './sqlite-pagination.js';
import { addRollups, prepareRollupStatements } from './sqlite-rollups.js';

/** Traces as this store reads them: SQLite keeps `stream` and `cached` as 0/1. */
type SqliteTraceRow = TraceRow<number>;

/** TraceFilter field -> column, in the fixed order that names a query shape. */
const filterColumns: ReadonlyArray<[keyof TraceFilter, string]> = [
  ['project', 'project = ?'],
  ['workload', 'workload = ?'],
  ['status', 'status = ?'],
  ['model', 'served_model = ?'],
  ['user', 'end_user = ?'],
  ['environment', 'environment = ?'],
  ['since', 'started_at >= ?'],
  ['until', 'started_at < ?'],
];

/** The WHERE clause of a filter shape, and the filter's values in parameter order. */
function where(filter: TraceFilter, afterCursor: boolean) {
  const present = filterColumns.filter(([field]) => filter[field] !== undefined);
  const conditions = ['account_id = ?', ...present.map(([, condition]) => condition)];
  if (afterCursor) conditions.push('(started_at, request_id) < (?, ?)');
  return {
    shape: `${afterCursor ? 'after' : 'first'}:${present.map(([field]) => field).join(',')}`,
    sql: conditions.join(' AND '),
    values: present.map(([field]) => filter[field]),
  };
}

export function createSqliteTraces(database: SqliteDatabase): TraceStore {
  const prepared = preparedOnFirstUse(() => {
    // ON CONFLICT (request_id) rather than INSERT OR IGNORE: OR IGNORE would also
    // skip rows that break NOT NULL, losing a malformed trace without an error.
    // Bound as arguments, not as one array: better-sqlite3 reads an array's
    // elements through V8's object API one lookup at a time (0.7 µs more a row).
    const insert = database.prepare<unknown[]>(
      `INSERT INTO traces (${traceInsertColumns}) VALUES (${traceProperties.map(() => '?').join(', ')}) ON CONFLICT (request_id) DO NOTHING`,
    );
    const rollupStatements = prepareRollupStatements(database);
    const sketches = new DecodedSketches();
    return {
      byId: database.prepare<[string, string], SqliteTraceRow>(
        `SELECT ${traceColumns} FROM traces WHERE account_id = ? AND request_id = ?`,
      ),
      /** List and count statements per filter shape, prepared the first time each shape is asked for. */
      lists: new Map<string, SqliteStatement<unknown[], SqliteTraceRow>>(),
      counts: new Map<string, SqliteStatement<unknown[], number>>(),
      // Traces and their rollups in one transaction; a trace stored before (a retried batch) is not rolled up twice.
      insertAll: database.transaction((traces: readonly Trace[]): number => {
        const inserted: Trace[] = [];
        for (const trace of traces)
          if (insert.run(...traceValues(trace, trace.stream ? 1 : 0, trace.cached === true ? 1 : 0)).changes === 1) inserted.push(trace);
        addRollups(rollupStatements, foldTraces(inserted), sketches);
        return inserted.length;
      }),
    };
  });

  return {
    async insertBatch(traces) {
      return traces.length === 0 ? 0 : prepared().insertAll(traces);
    },
    async get(accountId, requestId) {
      const row = prepared().byId.get(accountId, requestId);
      return row === undefined ? null : toTrace(row);
    },
    async list(accountId, filter, page) {
      const { lists } = prepared();
      const rows = paginate(
        page,
        (row: SqliteTraceRow) => [row.startedAt, row.requestId],
        (limit, after) => {
          const clause = where(filter, after !== null);
          let statement = lists.get(clause.shape);
          if (statement === undefined) {
            statement = database.prepare<unknown[], SqliteTraceRow>(
              `SELECT ${traceColumns} FROM traces WHERE ${clause.sql} ORDER BY started_at DESC, request_id DESC LIMIT ?`,
            );
            lists.set(clause.shape, statement);
          }
          return statement.all(accountId, ...clause.values, ...(after ?? []), limit);
        },
      );
      return { items: rows.items.map(toTrace), nextCursor: rows.nextCursor };
    },
    async count(accountId, filter) {
      const { counts } = prepared();
      const clause = where(filter, false);
      let statement = counts.get(clause.shape);
      if (statement === undefined) {
        statement = database.prepare<unknown[], number>(`SELECT count(*) FROM traces WHERE ${clause.sql}`).pluck();
        counts.set(clause.shape, statement);
      }
      return statement.get(accountId, ...clause.values) ?? 0;
    },
  };
}

function toTrace(row: SqliteTraceRow): Trace {
  return fromTraceRow(row, row.stream === 1, row.cached === 1);
}
