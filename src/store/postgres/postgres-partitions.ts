/**
 * The daily partitions of `traces`: one per UTC day of `started_at`, named
 * `traces_pYYYYMMDD`, created ahead of time (on migrate and then hourly, from
 * yesterday to `daysAhead` days on, by the store's clock), plus
 * `traces_default` for rows outside every day created (clock skew, backfills,
 * a maintenance that did not run), so an insert never fails for want of one.
 *
 * A day is created beside the table and attached: rows of that day already in
 * the default partition move into it first, and ATTACH takes a lock that lets
 * inserts and reads on other days go on (CREATE TABLE … PARTITION OF would
 * lock the whole table).
 */
import { advisoryLockKey, quoteIdentifier, storeNowMs, type PostgresDatabase } from './postgres-database.js';

export const DAY_MS = 86_400_000;

export interface TracePartition {
  name: string;
  /** Epoch ms [from, to); null for the default partition (or a range this store did not make). */
  range: { from: number; to: number } | null;
}

export interface TracePartitions {
  /** Creates the missing days from yesterday to `daysAhead` days ahead; returns the names created. */
  ensure(): Promise<string[]>;
  /** Creates the partition of the UTC day starting at `dayStart`; false when it existed. */
  create(dayStart: number): Promise<boolean>;
  /** Every partition, the default first, then by range. */
  list(): Promise<TracePartition[]>;
}

export function partitionName(dayStart: number): string {
  return `traces_p${new Date(dayStart).toISOString().slice(0, 10).replace(/-/g, '')}`;
}

export function createTracePartitions(database: PostgresDatabase, options: { daysAhead: number }): TracePartitions {
  const partitions: TracePartitions = {
    async ensure() {
      const [clock] = await database.query<{ now: number }>(`SELECT ${storeNowMs} AS now`);
      const today = Math.floor((clock?.now ?? Date.now()) / DAY_MS) * DAY_MS;
      const existing = new Set((await partitions.list()).map((partition) => partition.name));
      const created: string[] = [];
      for (let day = today - DAY_MS; day <= today + options.daysAhead * DAY_MS; day += DAY_MS) {
        if (!existing.has(partitionName(day)) && (await partitions.create(day))) created.push(partitionName(day));
      }
      return created;
    },
    async create(dayStart) {
      if (dayStart % DAY_MS !== 0) throw new Error(`postgres store: a partition starts at midnight UTC, not at ${dayStart}`);
      const name = partitionName(dayStart);
      const table = quoteIdentifier(name);
      const [from, to] = [dayStart, dayStart + DAY_MS];
      return database.transaction(async (transaction) => {
        await transaction.query("SET LOCAL lock_timeout = '5s'; SET LOCAL statement_timeout = 0");
        // Processes on one schema create days one at a time, so the check below holds until COMMIT.
        await transaction.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryLockKey(database.schema, 'partitions')]);
        const [found] = await transaction.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [name]);
        if (found?.exists === true) return false;
        // The CHECK lets ATTACH skip scanning the new table; it is dropped once the partition bound holds it.
        await transaction.query(
          `CREATE TABLE ${table} (LIKE traces INCLUDING DEFAULTS, CONSTRAINT ${quoteIdentifier(`${name}_range`)} CHECK (started_at >= ${from} AND started_at < ${to}))`,
        );
        await transaction.query(
          `WITH moved AS (DELETE FROM traces_default WHERE started_at >= $1 AND started_at < $2 RETURNING *) INSERT INTO ${table} SELECT * FROM moved`,
          [from, to],
        );
        await transaction.query(`ALTER TABLE traces ATTACH PARTITION ${table} FOR VALUES FROM (${from}) TO (${to})`);
        await transaction.query(`ALTER TABLE ${table} DROP CONSTRAINT ${quoteIdentifier(`${name}_range`)}`);
        return true;
      });
    },
    async list() {
      const rows = await database.query<{ name: string; bound: string }>(
        `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass('traces')`,
      );
      return rows
        .map((row) => ({ name: row.name, range: parseBound(row.bound) }))
        .sort((left, right) => (left.range?.from ?? -Infinity) - (right.range?.from ?? -Infinity) || (left.name < right.name ? -1 : 1));
    },
  };
  return partitions;
}

/** `FOR VALUES FROM ('1732406400000') TO ('1732492800000')` → the range; DEFAULT (or MINVALUE…) → null. */
function parseBound(bound: string): TracePartition['range'] {
  const match = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(bound);
  return match === null ? null : { from: Number(match[1]), to: Number(match[2]) };
}
