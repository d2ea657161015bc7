/**
 * Retention on PostgreSQL, on top of the daily partitions of `traces`
 * (`postgres-partitions.ts`).
 *
 * `pruneTraces` first DROPs every day that ended before the cutoff and whose
 * rows all belong to what the call prunes: the project named, or (`null`)
 * only projects without a policy of their own. The pruner
 * (`tracking/retention.ts`) calls each project with a policy first, then the
 * rest, so once a shorter-lived project's rows are gone the day is dropped by
 * the last call; a day that still holds a longer-lived project's rows is not.
 * What remains past the cutoff (the day that straddles it, days shared with
 * longer-lived projects, the default partition) is deleted in batches of at
 * most `batchSize`, one partition at a time, oldest first. A drop removes a
 * whole day in one short statement, so its count may exceed `batchSize`.
 *
 * Dropping a partition locks the whole table (PostgreSQL must update the
 * parent's partition list): the lock is taken first, with a 2 s lock_timeout,
 * and a day that cannot get it is left for the next pass, never deleted row by
 * row instead.
 *
 * Every process of a fleet runs the pruner, so a day listed here may be
 * dropped by another process before this one reaches it: a partition that is
 * gone by then has nothing left to prune, which is not an error.
 */
import type { ProjectRetention, RetentionStore } from '../retention-store.js';
import { retentionColumns } from '../sql-records.js';
import { quoteIdentifier, type PostgresDatabase } from './postgres-database.js';
import type { TracePartition, TracePartitions } from './postgres-partitions.js';

type Target = { accountId: string; project: string } | null;

/** The rows of `t` a call prunes; parameters $1 (cutoff) and $2 (batch size) come first. */
function targetCondition(target: Target): { sql: string; values: unknown[] } {
  return target === null
    ? { sql: 'NOT EXISTS (SELECT 1 FROM project_retention r WHERE r.account_id = t.account_id AND r.project = t.project)', values: [] }
    : { sql: 't.account_id = $3 AND t.project = $4', values: [target.accountId, target.project] };
}

/** True when every row of the partition is the target's: index probes, never a scan of the day. */
function onlyTargetRows(table: string, target: Target): { sql: string; values: unknown[] } {
  if (target === null) {
    return {
      sql: `SELECT NOT EXISTS (SELECT 1 FROM project_retention r WHERE EXISTS (SELECT 1 FROM ${table} t WHERE t.account_id = r.account_id AND t.project = r.project)) AS only`,
      values: [],
    };
  }
  return {
    sql: `SELECT coalesce((SELECT min(account_id) FROM ${table}) = $1 AND (SELECT max(account_id) FROM ${table}) = $1
            AND (SELECT min(project) FROM ${table} WHERE account_id = $1) = $2 AND (SELECT max(project) FROM ${table} WHERE account_id = $1) = $2
            AND NOT EXISTS (SELECT 1 FROM ${table} WHERE account_id = $1 AND project IS NULL), false) AS only`,
    values: [target.accountId, target.project],
  };
}

export function createPostgresRetention(database: PostgresDatabase, partitions: TracePartitions): RetentionStore {
  /** Partitions that may hold rows started before `before`: the default first, then the oldest days. */
  const partitionsBefore = async (before: number) =>
    (await partitions.list()).filter((partition) => partition.range === null || partition.range.from < before);

  /** `work` on one partition, or `gone` when another process dropped the partition after it was listed. */
  async function unlessDropped<T>(partition: TracePartition, work: () => Promise<T>, gone: T): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      // 40P01: a deadlock with another process dropping this day; PostgreSQL undid this statement, the next pass does it.
      if (code === '40P01') return gone;
      // 42P01: undefined_table. Anything else, or a partition that is still there, is a real failure.
      if (code !== '42P01') throw error;
      const [found] = await database.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [partition.name]);
      if (found?.exists !== false) throw error;
      return gone;
    }
  }

  /** Runs `step` on each partition until `batchSize` rows changed; returns how many did. */
  async function inBatches(
    candidates: readonly TracePartition[],
    batchSize: number,
    step: (table: string, limit: number) => Promise<number>,
  ): Promise<number> {
    let changed = 0;
    for (const partition of candidates) {
      if (changed >= batchSize) break;
      changed += await unlessDropped(partition, () => step(quoteIdentifier(partition.name), batchSize - changed), 0);
    }
    return changed;
  }

  /**
   * Drops the day when all its rows are the target's: how many rows it held;
   * `shared` when it holds rows of others (they are deleted in batches), `busy`
   * when the table lock was not to be had (left for the next pass).
   */
  async function dropIfAllExpired(partition: TracePartition, target: Target): Promise<number | 'shared' | 'busy'> {
    const table = quoteIdentifier(partition.name);
    const check = onlyTargetRows(table, target);
    if ((await database.query<{ only: boolean }>(check.sql, check.values))[0]?.only !== true) return 'shared';
    // Counted before the lock is taken, so the table is locked only for the check and the drop.
    const count = await database.transaction(async (transaction) => {
      await transaction.query('SET LOCAL statement_timeout = 0');
      return (await transaction.query<{ count: number }>(`SELECT count(*) AS count FROM ${table}`))[0]?.count ?? 0;
    });
    try {
      return await database.transaction(async (transaction) => {
        await transaction.query("SET LOCAL lock_timeout = '2s'");
        // The parent first: DROP would lock the partition, then the parent, the reverse of an insert's order.
        await transaction.query('LOCK TABLE ONLY traces IN ACCESS EXCLUSIVE MODE');
        if ((await transaction.query<{ only: boolean }>(check.sql, check.values))[0]?.only !== true) return 'shared';
        await transaction.query(`DROP TABLE ${table}`);
        return count;
      });
    } catch (error) {
      // 55P03: the lock was not to be had in time; 40P01: a deadlock with another process's prune. Either way, next pass.
      const code = (error as { code?: unknown }).code;
      if (code === '55P03' || code === '40P01') return 'busy';
      throw error;
    }
  }

  return {
    async get(accountId, project) {
      const [retention] = await database.query<ProjectRetention>(
        `SELECT ${retentionColumns} FROM project_retention WHERE account_id = $1 AND project = $2`,
        [accountId, project],
      );
      return retention ?? null;
    },
    async put(retention) {
      await database.execute(
        `INSERT INTO project_retention (account_id, project, bodies, sample_rate, bodies_ttl_days, traces_ttl_days, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (account_id, project) DO UPDATE SET bodies = excluded.bodies, sample_rate = excluded.sample_rate,
           bodies_ttl_days = excluded.bodies_ttl_days, traces_ttl_days = excluded.traces_ttl_days, updated_at = excluded.updated_at`,
        [
          retention.accountId,
          retention.project,
          retention.bodies,
          retention.sampleRate,
          retention.bodiesTtlDays,
          retention.tracesTtlDays,
          retention.updatedAt,
        ],
      );
    },
    async list() {
      return database.query<ProjectRetention>(`SELECT ${retentionColumns} FROM project_retention ORDER BY account_id, project`);
    },
    async pruneBodies(target, before, batchSize) {
      const condition = targetCondition(target);
      // ORDER BY started_at walks the partial index of rows that still have bodies.
      return inBatches(await partitionsBefore(before), batchSize, (table, limit) =>
        database.execute(
          `UPDATE ${table} SET request_body = NULL, reply_body = NULL WHERE ctid = ANY(ARRAY(
             SELECT ctid FROM ${table} t WHERE started_at < $1 AND (request_body IS NOT NULL OR reply_body IS NOT NULL) AND ${condition.sql}
             ORDER BY started_at LIMIT $2))`,
          [before, limit, ...condition.values],
        ),
      );
    },
    async pruneTraces(target, before, batchSize) {
      const candidates = await partitionsBefore(before);
      let dropped = 0;
      const kept: TracePartition[] = [];
      for (const partition of candidates) {
        // A day another process dropped meanwhile counts for nothing here (its rows were that process's count).
        const outcome =
          partition.range !== null && partition.range.to <= before
            ? await unlessDropped(partition, () => dropIfAllExpired(partition, target), 0)
            : 'shared';
        if (outcome === 'shared') kept.push(partition);
        else if (outcome !== 'busy') dropped += outcome;
      }
      const condition = targetCondition(target);
      // ORDER BY started_at walks the index, past the rows earlier batches deleted, rather than scanning them again.
      const deleted = await inBatches(kept, batchSize, (table, limit) =>
        database.execute(
          `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} t WHERE started_at < $1 AND ${condition.sql} ORDER BY started_at LIMIT $2))`,
          [before, limit, ...condition.values],
        ),
      );
      return dropped + deleted;
    },
  };
}
