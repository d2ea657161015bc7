/**
 * What the SQL back ends (`sqlite/`, `postgres/`) share about their rows: the
 * two schemas have the same tables and column names, so how a row maps to a
 * contract record is written once, here and in `sql-trace-records.ts`,
 * `sql-rollup-records.ts`, `sql-routing-records.ts` and `sql-budget-records.ts`. Each back end keeps
 * its own SQL and migrations.
 *
 * Columns are selected under the record's property names (`selectList`:
 * `account_id AS "accountId"`, a double-quoted alias both dialects keep as
 * written), so a row is its record but where SQL cannot hold a value as the
 * record does: JSON kept as TEXT, sketches as bytes, a scope spread over
 * three columns. The conversions undo exactly that.
 *
 * What really differs stays in the back end, explicit: booleans (SQLite
 * 0/1, PostgreSQL BOOLEAN), placeholders (`?`, `$1`), the times PostgreSQL's
 * BIGINT can bind. Bytes are no difference: better-sqlite3 (BLOB) and pg
 * (BYTEA) both read them as a Buffer.
 */
import { randomBytes } from 'node:crypto';
import type { ProjectRetention } from './retention-store.js';
import type { Account, ApiKey, Project, Workload } from './store.js';

/**
 * The SELECT list of a row type: `column AS "property"` for each property
 * (a bare column where the names are equal). Every property must be given,
 * so a field added to a record fails to compile until its column is named.
 */
export function selectList<Row>(columns: { [Property in keyof Row]-?: string }): string {
  return Object.entries<string>(columns)
    .map(([property, column]) => (column === property ? column : `${column} AS "${property}"`))
    .join(', ');
}

/** A value for a nullable JSON (TEXT) column. */
export function jsonOrNull(value: unknown): string | null {
  return value === null ? null : JSON.stringify(value);
}

/** A BLOB or BYTEA as the contract's bytes, without a copy. */
export function bytesOf(blob: Buffer | null): Uint8Array | null {
  return blob === null ? null : new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength);
}

/** Bytes as a Buffer for either driver to bind as BLOB or BYTEA, without a copy. */
export function bufferOf(bytes: Uint8Array | null): Buffer | null {
  return bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A new id of an account, key, project or workload: the prefix names the kind. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

// Accounts, keys, projects, workloads and retention policies: their columns map as they are.

export const accountColumns = selectList<Account>({ id: 'id', name: 'name', createdAt: 'created_at' });

export const keyColumns = selectList<ApiKey>({
  id: 'id',
  accountId: 'account_id',
  name: 'name',
  displayPrefix: 'display_prefix',
  hash: 'hash',
  environment: 'environment',
  role: 'role',
  requestsPerMinute: 'requests_per_minute',
  tokensPerMinute: 'tokens_per_minute',
  dailyBudgetUsd: 'daily_budget_usd',
  monthlyBudgetUsd: 'monthly_budget_usd',
  createdAt: 'created_at',
  lastUsedAt: 'last_used_at',
  revokedAt: 'revoked_at',
});

export const projectColumns = selectList<Project>({ id: 'id', accountId: 'account_id', slug: 'slug', createdAt: 'created_at' });

export const workloadColumns = selectList<Workload>({ id: 'id', projectId: 'project_id', name: 'name', createdAt: 'created_at' });

export const retentionColumns = selectList<ProjectRetention>({
  accountId: 'account_id',
  project: 'project',
  bodies: 'bodies',
  sampleRate: 'sample_rate',
  bodiesTtlDays: 'bodies_ttl_days',
  tracesTtlDays: 'traces_ttl_days',
  updatedAt: 'updated_at',
});

/** A row just written, or guaranteed by a constraint: missing means the database broke its promise. */
export function readBack<Row>(row: Row | null | undefined, backEnd: 'sqlite' | 'postgres'): Row {
  if (row === undefined || row === null) throw new Error(`${backEnd} store: a row written in this call could not be read back`);
  return row;
}
