/**
 * The embedded Store back end: one SQLite file through better-sqlite3. The
 * contract is async for PostgreSQL's sake; here every method does its work
 * synchronously and returns a settled promise.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { closePage, openPage, type Position } from '../page-cursor.js';
import { accountColumns, keyColumns, newId, projectColumns, workloadColumns } from '../sql-records.js';
import { fromTraceRow, traceColumns, traceInsertColumns, traceProperties, traceValues, type TraceRow } from '../sql-trace-records.js';
import { applyMigrations } from './sqlite-migrations.js';
import { createSqliteRoutingStore } from './sqlite-routing-store.js';
import { addRollups, createSqliteRollupStore, prepareRollupStatements } from './sqlite-rollups.js';
import { createSqliteRetentionStore } from './sqlite-retention.js';
import { createSqliteChangeFeed, createSqliteLeases, createSqliteRouterQueue, createSqliteSessions } from './sqlite-fleet.js';
import { DecodedSketches, foldTraces } from '../../tracking/rollup-delta.js';
import type {
  Account,
  AccountStore,
  ApiKey,
  Page,
  PageRequest,
  Project,
  ProjectStore,
  Store,
  Trace,
  TraceFilter,
  TraceStore,
  Workload,
} from '../store.js';

export function createSqliteStore(options: { path: string }): Store {
  const memory = options.path === ':memory:' || options.path === '';
  if (!memory) mkdirSync(dirname(options.path), { recursive: true });
  const database = new Database(options.path);
  // busy_timeout first: switching to WAL needs a lock another process may hold.
  database.pragma('busy_timeout = 5000');
  // 16 KiB pages for a new database (an existing one keeps its own): a trace with its bodies
  // (1-3 KB) then rarely spills onto an overflow page, and a batch commits with a quarter of
  // the page writes: some 20 % less CPU per stored trace than the default 4 KiB.
  if (!memory) database.pragma('page_size = 16384');
  // A checkpoint every 4 MiB of WAL whatever the page size (SQLite counts 1,000 pages): with 16 KiB
  // pages the default would copy 16 MiB at once, on the thread that commits.
  const pageBytes = Number(database.pragma('page_size', { simple: true }));
  if (!memory && pageBytes > 0) database.pragma(`wal_autocheckpoint = ${Math.max(1, Math.round(4_194_304 / pageBytes))}`);
  // A 4 MiB page cache, not better-sqlite3's 16 MiB: storing traces touches a few dozen pages
  // (the table's and each index's newest), and reads page through the OS's cache anyway. The
  // larger cache only filled with pages written once, 14 MB of the process's resident set.
  database.pragma('cache_size = -4096');
  // WAL lets readers (the API, the dashboard) run while the trace writer commits.
  if (!memory) database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');

  // Prepared on first use rather than here: the tables exist only after migrate().
  let statements: Statements | null = null;
  const prepared = (): Statements => (statements ??= prepareStatements(database));
  const ping = database.prepare('SELECT 1');
  const changes = createSqliteChangeFeed(database);

  return {
    accounts: createAccountStore(prepared),
    projects: createProjectStore(prepared),
    traces: createTraceStore(database, prepared),
    routing: { ...createSqliteRoutingStore(database), ...createSqliteRouterQueue(database) },
    rollups: createSqliteRollupStore(database),
    retention: createSqliteRetentionStore(database),
    sessions: createSqliteSessions(database),
    leases: createSqliteLeases(database),
    changes,
    async migrate() {
      applyMigrations(database);
    },
    async ping() {
      ping.get();
    },
    async close() {
      changes.close();
      if (database.open) database.close();
    },
  };
}

type Statement<Parameters extends unknown[], Result = unknown> = Database.Statement<Parameters, Result>;

/** Traces as this store reads them: SQLite keeps `stream` as 0/1. */
type SqliteTraceRow = TraceRow<number>;

function prepareStatements(database: Database.Database) {
  const statements = {
    insertAccount: database.prepare<[string, string, number]>(
      'INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
    ),
    accountByName: database.prepare<[string], Account>(`SELECT ${accountColumns} FROM accounts WHERE name = ?`),
    accountById: database.prepare<[string], Account>(`SELECT ${accountColumns} FROM accounts WHERE id = ?`),

    insertKey: database.prepare<[string, string, string | null, string, string, string, string, number | null, number | null, number]>(
      'INSERT INTO api_keys (id, account_id, name, display_prefix, hash, environment, role, requests_per_minute, tokens_per_minute, created_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    keyByHash: database.prepare<[string], ApiKey>(`SELECT ${keyColumns} FROM api_keys WHERE hash = ?`),
    keyById: database.prepare<[string], ApiKey>(`SELECT ${keyColumns} FROM api_keys WHERE id = ?`),
    keysFirst: database.prepare<[string, number], ApiKey>(
      `SELECT ${keyColumns} FROM api_keys WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
    ),
    keysAfter: database.prepare<[string, number, string, number], ApiKey>(
      `SELECT ${keyColumns} FROM api_keys WHERE account_id = ? AND (created_at, id) < (?, ?) ` +
        'ORDER BY created_at DESC, id DESC LIMIT ?',
    ),
    revokeKey: database.prepare<[number, string, string]>(
      'UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND id = ? AND revoked_at IS NULL',
    ),
    hashesRevokedSince: database.prepare<[number], string>('SELECT hash FROM api_keys WHERE revoked_at >= ?').pluck(),
    touchKey: database.prepare<[number, string, number]>(
      'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
    ),

    insertProject: database.prepare<[string, string, string, number]>(
      'INSERT INTO projects (id, account_id, slug, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (account_id, slug) DO NOTHING',
    ),
    projectBySlug: database.prepare<[string, string], Project>(
      `SELECT ${projectColumns} FROM projects WHERE account_id = ? AND slug = ?`,
    ),
    projectsFirst: database.prepare<[string, number], Project>(
      `SELECT ${projectColumns} FROM projects WHERE account_id = ? ORDER BY created_at, id LIMIT ?`,
    ),
    projectsAfter: database.prepare<[string, number, string, number], Project>(
      `SELECT ${projectColumns} FROM projects WHERE account_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`,
    ),
    insertWorkload: database.prepare<[string, string, string, number]>(
      'INSERT INTO workloads (id, project_id, name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (project_id, name) DO NOTHING',
    ),
    workloadByName: database.prepare<[string, string], Workload>(
      `SELECT ${workloadColumns} FROM workloads WHERE project_id = ? AND name = ?`,
    ),
    workloadsFirst: database.prepare<[string, number], Workload>(
      `SELECT ${workloadColumns} FROM workloads WHERE project_id = ? ORDER BY created_at, id LIMIT ?`,
    ),
    workloadsAfter: database.prepare<[string, number, string, number], Workload>(
      `SELECT ${workloadColumns} FROM workloads WHERE project_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`,
    ),

    // ON CONFLICT (request_id) rather than INSERT OR IGNORE: OR IGNORE would also
    // skip rows that break NOT NULL, losing a malformed trace without an error.
    // Bound as arguments, not as one array: better-sqlite3 reads an array's
    // elements through V8's object API one lookup at a time (0.7 µs more a row).
    insertTrace: database.prepare<unknown[]>(
      `INSERT INTO traces (${traceInsertColumns}) VALUES (${traceProperties.map(() => '?').join(', ')}) ON CONFLICT (request_id) DO NOTHING`,
    ),
    traceById: database.prepare<[string, string], SqliteTraceRow>(
      `SELECT ${traceColumns} FROM traces WHERE account_id = ? AND request_id = ?`,
    ),
    /** Trace list and count statements per filter shape, prepared the first time each shape is asked for. */
    traceLists: new Map<string, Statement<unknown[], SqliteTraceRow>>(),
    traceCounts: new Map<string, Statement<unknown[], number>>(),
  };
  const rollupStatements = prepareRollupStatements(database);
  const sketches = new DecodedSketches();
  // Transaction wrappers are built once too; each call is then one BEGIN/COMMIT.
  return {
    ...statements,
    touchAll: database.transaction((uses: ReadonlyArray<{ keyId: string; usedAt: number }>) => {
      for (const use of uses) statements.touchKey.run(use.usedAt, use.keyId, use.usedAt);
    }),
    // Traces and their rollups in one transaction; a trace stored before (a retried batch) is not rolled up twice.
    insertAll: database.transaction((traces: readonly Trace[]): number => {
      const inserted: Trace[] = [];
      for (const trace of traces) if (statements.insertTrace.run(...traceValues(trace, trace.stream ? 1 : 0)).changes === 1) inserted.push(trace);
      addRollups(rollupStatements, foldTraces(inserted), sketches);
      return inserted.length;
    }),
    ensureScope: database.transaction((accountId: string, projectSlug: string, workloadName: string) => {
      statements.insertProject.run(newId('proj'), accountId, projectSlug, Date.now());
      const project = found(statements.projectBySlug.get(accountId, projectSlug));
      statements.insertWorkload.run(newId('wl'), project.id, workloadName, Date.now());
      return { project, workload: found(statements.workloadByName.get(project.id, workloadName)) };
    }),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

function createAccountStore(prepared: () => Statements): AccountStore {
  return {
    async ensureAccount(name) {
      const statements = prepared();
      statements.insertAccount.run(newId('acct'), name, Date.now());
      return found(statements.accountByName.get(name));
    },
    async getAccount(id) {
      return prepared().accountById.get(id) ?? null;
    },
    async createKey(key) {
      const statements = prepared();
      const id = newId('key');
      statements.insertKey.run(
        id, key.accountId, key.name, key.displayPrefix, key.hash, key.environment, key.role,
        key.requestsPerMinute, key.tokensPerMinute ?? null, key.createdAt ?? Date.now(),
      );
      return found(statements.keyById.get(id));
    },
    async findKeyByHash(hash) {
      return prepared().keyByHash.get(hash) ?? null;
    },
    async listKeys(accountId, page) {
      const statements = prepared();
      return paginate(page, (row) => [row.createdAt, row.id], (limit, after) =>
        after === null
          ? statements.keysFirst.all(accountId, limit)
          : statements.keysAfter.all(accountId, after[0], after[1], limit),
      );
    },
    async revokeKey(accountId, keyId, at) {
      return prepared().revokeKey.run(at, accountId, keyId).changes === 1;
    },
    async listKeysRevokedSince(since) {
      return prepared().hashesRevokedSince.all(since);
    },
    async touchKeys(uses) {
      if (uses.length > 0) prepared().touchAll(uses);
    },
  };
}

function createProjectStore(prepared: () => Statements): ProjectStore {
  return {
    async ensureScope(accountId, projectSlug, workloadName) {
      const statements = prepared();
      // Read first: an existing scope then costs no write lock, which the trace
      // writer would otherwise contend for.
      const project = statements.projectBySlug.get(accountId, projectSlug);
      const workload = project === undefined ? undefined : statements.workloadByName.get(project.id, workloadName);
      if (project !== undefined && workload !== undefined) return { project, workload };
      // IMMEDIATE takes the write lock before the inserts, so another process
      // creating the same scope waits and then reads the one row.
      return statements.ensureScope.immediate(accountId, projectSlug, workloadName);
    },
    async getProject(accountId, slug) {
      return prepared().projectBySlug.get(accountId, slug) ?? null;
    },
    async listProjects(accountId, page) {
      const statements = prepared();
      return paginate(page, (row) => [row.createdAt, row.id], (limit, after) =>
        after === null
          ? statements.projectsFirst.all(accountId, limit)
          : statements.projectsAfter.all(accountId, after[0], after[1], limit),
      );
    },
    async listWorkloads(accountId, projectSlug, page) {
      const statements = prepared();
      const project = statements.projectBySlug.get(accountId, projectSlug);
      if (project === undefined) return null;
      return paginate(page, (row) => [row.createdAt, row.id], (limit, after) =>
        after === null
          ? statements.workloadsFirst.all(project.id, limit)
          : statements.workloadsAfter.all(project.id, after[0], after[1], limit),
      );
    },
  };
}

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

function createTraceStore(database: Database.Database, prepared: () => Statements): TraceStore {
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

  return {
    async insertBatch(traces) {
      return traces.length === 0 ? 0 : prepared().insertAll(traces);
    },
    async get(accountId, requestId) {
      const row = prepared().traceById.get(accountId, requestId);
      return row === undefined ? null : toTrace(row);
    },
    async list(accountId, filter, page) {
      const { traceLists } = prepared();
      const rows = paginate(page, (row: SqliteTraceRow) => [row.startedAt, row.requestId], (limit, after) => {
        const clause = where(filter, after !== null);
        let statement = traceLists.get(clause.shape);
        if (statement === undefined) {
          statement = database.prepare<unknown[], SqliteTraceRow>(
            `SELECT ${traceColumns} FROM traces WHERE ${clause.sql} ORDER BY started_at DESC, request_id DESC LIMIT ?`,
          );
          traceLists.set(clause.shape, statement);
        }
        return statement.all(accountId, ...clause.values, ...(after ?? []), limit);
      });
      return { items: rows.items.map(toTrace), nextCursor: rows.nextCursor };
    },
    async count(accountId, filter) {
      const { traceCounts } = prepared();
      const clause = where(filter, false);
      let statement = traceCounts.get(clause.shape);
      if (statement === undefined) {
        statement = database.prepare<unknown[], number>(`SELECT count(*) FROM traces WHERE ${clause.sql}`).pluck();
        traceCounts.set(clause.shape, statement);
      }
      return statement.get(accountId, ...clause.values) ?? 0;
    },
  };
}

/** One keyset page (`page-cursor.ts`): fetches one row more than asked, to learn whether another page follows. */
function paginate<Row>(page: PageRequest, positionOf: (row: Row) => Position, fetch: (limit: number, after: Position | null) => Row[]): Page<Row> {
  const opened = openPage(page);
  return closePage(fetch(opened.limit + 1, opened.after), opened, positionOf);
}

/** A row just written or guaranteed by a constraint; missing means the database broke its promise. */
function found<Row>(row: Row | undefined): Row {
  if (row === undefined) throw new Error('sqlite store: a row written in this call could not be read back');
  return row;
}

function toTrace(row: SqliteTraceRow): Trace {
  return fromTraceRow(row, row.stream === 1);
}
