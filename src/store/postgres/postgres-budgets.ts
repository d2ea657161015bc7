/**
 * Budgets, cache settings, spend and the store ledger's rows (`BudgetStore`,
 * `budget-store.ts`) on PostgreSQL, shared by every process of a fleet.
 *
 * A reservation (and a batch of spend changes) is one transaction: insert
 * the cap rows it lacks, lock all of its rows with `SELECT … FOR UPDATE` in
 * cap id order, check, write. Every writer locks in the same order, so two
 * reservations on overlapping caps wait for each other and never deadlock,
 * and the second sees what the first wrote: they never both fit where only
 * one does. Expiry is judged by the database's clock, the one clock of the
 * fleet.
 */
import type { BudgetStore, SpendReservation } from '../budget-store.js';
import {
  budgetColumns,
  budgetValues,
  cacheSettingsColumns,
  foldSpend,
  fromBudgetRow,
  fromCacheSettingsRow,
  spendGroupBy,
  spendGroupColumns,
  type BudgetRow,
  type CacheSettingsRow,
  type SpendGroup,
} from '../sql-budget-records.js';
import { storeNowMs, type PostgresDatabase, type Queryable } from './postgres-database.js';

type PostgresCacheSettingsRow = CacheSettingsRow<boolean>;

const budgetOrder = 'ORDER BY account_id, project, workload, environment';
const cacheOrder = 'ORDER BY account_id, project, workload';

/** A locked row: its spend (0 when it has expired), and when it expires. */
interface LockedSpend {
  spentMicros: number;
  expiresAt: number;
}

/**
 * Inserts the rows of `created` that are missing (at 0; in id order, the
 * order of the locks after), then locks every row of `capIds` in id order;
 * returns the live ones.
 */
async function lockSpend(
  transaction: Queryable,
  capIds: readonly string[],
  created: ReadonlyArray<{ capId: string; expiresAt: number }>,
): Promise<Map<string, LockedSpend>> {
  if (created.length > 0) {
    await transaction.execute(
      `INSERT INTO budget_spend (cap_id, spent_micros, expires_at)
       SELECT cap_id, 0, expires_at FROM unnest($1::text[], $2::bigint[]) AS c (cap_id, expires_at) ORDER BY cap_id COLLATE "C"
       ON CONFLICT DO NOTHING`,
      [created.map((cap) => cap.capId), created.map((cap) => cap.expiresAt)],
    );
  }
  const rows = await transaction.query<{ capId: string; spentMicros: number; expiresAt: number; live: boolean }>(
    `SELECT cap_id AS "capId", spent_micros AS "spentMicros", expires_at AS "expiresAt", expires_at > ${storeNowMs} AS live
     FROM budget_spend WHERE cap_id = ANY($1::text[]) ORDER BY cap_id FOR UPDATE`,
    [capIds],
  );
  return new Map(rows.filter((row) => row.live).map((row) => [row.capId, { spentMicros: row.spentMicros, expiresAt: row.expiresAt }]));
}

/** Writes each row's new spend (upserted: a row deleted as expired meanwhile is written again). */
async function writeSpend(transaction: Queryable, rows: ReadonlyMap<string, LockedSpend>): Promise<void> {
  if (rows.size === 0) return;
  const entries = [...rows];
  await transaction.execute(
    `INSERT INTO budget_spend (cap_id, spent_micros, expires_at)
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS u (cap_id, spent_micros, expires_at) ORDER BY cap_id COLLATE "C"
     ON CONFLICT (cap_id) DO UPDATE SET spent_micros = excluded.spent_micros, expires_at = excluded.expires_at`,
    [entries.map(([capId]) => capId), entries.map(([, row]) => row.spentMicros), entries.map(([, row]) => row.expiresAt)],
  );
}

export function createPostgresBudgets(database: PostgresDatabase): BudgetStore {
  return {
    async getBudget(scope, environment) {
      const [row] = await database.query<BudgetRow>(
        `SELECT ${budgetColumns} FROM budgets WHERE account_id = $1 AND project = $2 AND workload = $3 AND environment = $4`,
        [scope.accountId, scope.project, scope.workload, environment],
      );
      return row === undefined ? null : fromBudgetRow(row);
    },
    async putBudget(budget) {
      await database.execute(
        `INSERT INTO budgets (account_id, project, workload, environment, daily_usd, monthly_usd, alert_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (account_id, project, workload, environment) DO UPDATE SET
           daily_usd = excluded.daily_usd, monthly_usd = excluded.monthly_usd, alert_at = excluded.alert_at, updated_at = excluded.updated_at`,
        budgetValues(budget),
      );
    },
    async listBudgets(accountId) {
      const rows =
        accountId === null
          ? await database.query<BudgetRow>(`SELECT ${budgetColumns} FROM budgets ${budgetOrder}`)
          : await database.query<BudgetRow>(`SELECT ${budgetColumns} FROM budgets WHERE account_id = $1 ${budgetOrder}`, [accountId]);
      return rows.map(fromBudgetRow);
    },
    async getCacheSettings(scope) {
      const [row] = await database.query<PostgresCacheSettingsRow>(
        `SELECT ${cacheSettingsColumns} FROM cache_settings WHERE account_id = $1 AND project = $2 AND workload = $3`,
        [scope.accountId, scope.project, scope.workload],
      );
      return row === undefined ? null : fromCacheSettingsRow(row, row.enabled, row.onlyRepeatable);
    },
    async putCacheSettings(settings) {
      const { scope } = settings;
      await database.execute(
        `INSERT INTO cache_settings (account_id, project, workload, enabled, ttl_seconds, only_repeatable, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (account_id, project, workload) DO UPDATE SET
           enabled = excluded.enabled, ttl_seconds = excluded.ttl_seconds, only_repeatable = excluded.only_repeatable, updated_at = excluded.updated_at`,
        [
          scope.accountId,
          scope.project,
          scope.workload,
          settings.enabled,
          settings.ttlSeconds,
          settings.onlyRepeatable,
          settings.updatedAt,
        ],
      );
    },
    async listCacheSettings(accountId) {
      const rows =
        accountId === null
          ? await database.query<PostgresCacheSettingsRow>(`SELECT ${cacheSettingsColumns} FROM cache_settings ${cacheOrder}`)
          : await database.query<PostgresCacheSettingsRow>(
              `SELECT ${cacheSettingsColumns} FROM cache_settings WHERE account_id = $1 ${cacheOrder}`,
              [accountId],
            );
      return rows.map((row) => fromCacheSettingsRow(row, row.enabled, row.onlyRepeatable));
    },
    async spendSince(accountId, since) {
      // traces_account_started for one account, traces_started for all; either way only the partitions from `since` on.
      const groups =
        accountId === null
          ? await database.query<SpendGroup>(
              `SELECT ${spendGroupColumns} FROM traces WHERE started_at >= $1 AND cost_usd > 0 GROUP BY ${spendGroupBy}`,
              [since],
            )
          : await database.query<SpendGroup>(
              `SELECT ${spendGroupColumns} FROM traces WHERE account_id = $1 AND started_at >= $2 AND cost_usd > 0 GROUP BY ${spendGroupBy}`,
              [accountId, since],
            );
      return foldSpend(groups);
    },
    async reserveSpend(caps, amountMicros) {
      if (caps.length === 0) return { reserved: true, refusedIndex: -1, spentMicros: [] };
      return database.transaction(async (transaction): Promise<SpendReservation> => {
        const locked = await lockSpend(
          transaction,
          caps.map((cap) => cap.id),
          caps.map((cap) => ({ capId: cap.id, expiresAt: cap.expiresAt })),
        );
        const spent = caps.map((cap) => locked.get(cap.id)?.spentMicros ?? 0);
        const refusedIndex = caps.findIndex((cap, index) => (spent[index] as number) + amountMicros > cap.limitMicros);
        // Refused: the transaction ends having changed nothing, and its locks go with it.
        if (refusedIndex !== -1) return { reserved: false, refusedIndex, spentMicros: spent };
        const after = spent.map((value) => value + amountMicros);
        await writeSpend(
          transaction,
          new Map(caps.map((cap, index) => [cap.id, { spentMicros: after[index] as number, expiresAt: cap.expiresAt }])),
        );
        return { reserved: true, refusedIndex: -1, spentMicros: after };
      });
    },
    async addSpend(changes) {
      if (changes.length === 0) return [];
      return database.transaction(async (transaction) => {
        const created = changes.flatMap((change) =>
          change.expiresAt === null ? [] : [{ capId: change.capId, expiresAt: change.expiresAt }],
        );
        const rows = await lockSpend(transaction, [...new Set(changes.map((change) => change.capId))], created);
        const written = new Map<string, LockedSpend>();
        // In the given order, so a cap changed twice in one batch takes both changes.
        const after = changes.map((change) => {
          const row = written.get(change.capId) ?? rows.get(change.capId);
          if (row === undefined && change.expiresAt === null) return null;
          const spentMicros = Math.max(0, (row?.spentMicros ?? 0) + change.deltaMicros);
          written.set(change.capId, { spentMicros, expiresAt: change.expiresAt ?? (row as LockedSpend).expiresAt });
          return spentMicros;
        });
        await writeSpend(transaction, written);
        return after;
      });
    },
    async spentOf(capIds) {
      if (capIds.length === 0) return [];
      const rows = await database.query<{ capId: string; spentMicros: number }>(
        `SELECT cap_id AS "capId", spent_micros AS "spentMicros" FROM budget_spend WHERE cap_id = ANY($1::text[]) AND expires_at > ${storeNowMs}`,
        [capIds],
      );
      const spent = new Map(rows.map((row) => [row.capId, row.spentMicros]));
      return capIds.map((capId) => spent.get(capId) ?? 0);
    },
    async deleteExpiredSpend() {
      // Rows a reservation holds are skipped, never waited for: they are deleted at the next pass.
      return database.execute(
        `DELETE FROM budget_spend WHERE cap_id IN (SELECT cap_id FROM budget_spend WHERE expires_at <= ${storeNowMs} FOR UPDATE SKIP LOCKED)`,
      );
    },
  };
}
