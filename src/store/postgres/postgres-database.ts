/**
 * The connection pool every PostgreSQL part shares: one `pg.Pool` of its own
 * (its own type parsers, never pg's global ones), every connection on the
 * store's schema, and no way for a dying connection to crash the process.
 *
 * PostgreSQL going away (restart, failover) must degrade, never crash: idle
 * connections that die are dropped by the pool (its 'error' event is handled
 * here), a connection that dies while checked out is released as broken and
 * replaced, and while the server is down every query fails fast with the
 * driver's connection error, which `store-errors.ts` turns into a 503.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../../log/logger.js';
import { decodeRow, encodeParameter } from './postgres-text.js';

export interface Queryable {
  /** The rows, strings unescaped (`postgres-text.ts`). */
  query<Row extends object = Record<string, unknown>>(sql: string, values?: readonly unknown[]): Promise<Row[]>;
  /** How many rows the statement changed. */
  execute(sql: string, values?: readonly unknown[]): Promise<number>;
}

export interface PostgresDatabase extends Queryable {
  readonly schema: string;
  /** Runs `work` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(work: (transaction: Queryable) => Promise<T>): Promise<T>;
  /** How to open a connection outside the pool (the change feed's LISTEN), with the pool's settings. */
  readonly clientConfig: pg.ClientConfig;
  close(): Promise<void>;
}

export interface PostgresConnectionOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  poolSize: number;
  schema: string;
  logger?: Logger;
}

/** Lower-case letters, digits and underscores: used unquoted in `search_path`, channel names and lock keys. */
const schemaPattern = /^[a-z_][a-z0-9_]{0,45}$/;

/** How long a connection attempt, or a wait for a free pooled connection, may take before the query fails. */
const connectTimeoutMs = 5_000;
/** A statement running longer is cancelled (maintenance lifts it with SET LOCAL). */
const statementTimeoutMs = 60_000;

/** The store's clock in epoch ms, as SQL: leases are judged by it. */
export const storeNowMs = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/** BIGINT (counts, epoch ms) and NUMERIC (sums of BIGINT) as numbers: every value the store keeps fits in 2^53. */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return (value: string) => Number(value);
    return format === undefined ? pg.types.getTypeParser(oid) : pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};

export function createPostgresDatabase(options: PostgresConnectionOptions): PostgresDatabase {
  const { schema, logger } = options;
  if (!schemaPattern.test(schema)) throw new Error(`postgres store: schema must match ${schemaPattern.source}, got "${schema}"`);
  const clientConfig: pg.ClientConfig = {
    connectionString: withSearchPath(options.url, schema),
    types,
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    statement_timeout: statementTimeoutMs,
    idle_in_transaction_session_timeout: 60_000,
    application_name: 'taskgate',
  };
  const pool = new pg.Pool({ ...clientConfig, max: Math.max(1, options.poolSize), idleTimeoutMillis: 30_000 });
  // An idle connection that dies (server restart, network cut) is dropped by the pool, which then emits 'error'.
  pool.on('error', (error) => logger?.warn('postgres connection lost', { error: error.message }));
  // A checked-out connection that dies emits 'error' on the client; the query in flight fails with it, and
  // the client is released as broken. Without a listener the event would crash the process.
  pool.on('connect', (client) => client.on('error', () => undefined));

  let closed: Promise<void> | null = null;
  const database: PostgresDatabase = {
    schema,
    clientConfig,
    ...queryable(pool),
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work(queryable(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
        throw error;
      } finally {
        // Released with an error, the pool destroys the connection instead of reusing it.
        client.release(broken);
      }
    },
    close() {
      closed ??= pool.end();
      return closed;
    },
  };
  return database;
}

function queryable(target: pg.Pool | pg.PoolClient): Queryable {
  // Several statements in one text (no parameters) answer with one result each: the last one is the answer.
  const run = async (sql: string, values: readonly unknown[] = []): Promise<pg.QueryResult> => {
    const result: pg.QueryResult | pg.QueryResult[] = await target.query(sql, values.map(encodeParameter));
    return Array.isArray(result) ? (result.at(-1) as pg.QueryResult) : result;
  };
  return {
    async query<Row extends object>(sql: string, values?: readonly unknown[]) {
      const result = await run(sql, values);
      return (result.rows as Row[]).map(decodeRow);
    },
    async execute(sql, values) {
      return (await run(sql, values)).rowCount ?? 0;
    },
  };
}

/** The URL with `-c search_path=<schema>` added to its startup `options` (the URL's own options kept). */
function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  const existing = parsed.searchParams.get('options') ?? '';
  parsed.searchParams.set('options', `${existing} -c search_path=${schema}`.trim());
  return parsed.toString();
}

/** A 64-bit advisory lock key for one purpose on one schema: processes on other schemas never wait for it. */
export function advisoryLockKey(schema: string, purpose: string): string {
  return createHash('sha256').update(`taskgate:${purpose}:${schema}`).digest().readBigInt64BE(0).toString();
}

export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
