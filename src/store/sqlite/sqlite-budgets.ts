/**
 * Budgets, cache settings, spend and the store ledger's rows (`BudgetStore`,
 * `budget-store.ts`) on SQLite. A reservation reads and writes its rows in
 * one IMMEDIATE transaction: the write lock is taken before the first read,
 * so processes sharing the file reserve one at a time (each waits up to the
 * busy timeout), and two never both fit where only one does. Expiry is
 * judged by this machine's clock, the one every process on the file shares.
 */
import type { BudgetStore, ScopeBudget, SpendCap, SpendChange, SpendReservation } from '../budget-store.js';
import {
  budgetColumns,
  budgetValues,
  cacheSettingsColumns,
  foldSpend,
  fromBudgetRow,
  fromCacheSettingsRow,
  spendColumns,
  spendGroupBy,
  spendGroupColumns,
  type BudgetRow,
  type CacheSettingsRow,
  type SpendGroup,
  type SpendRow,
} from '../sql-budget-records.js';
import { preparedOnFirstUse, type SqliteDatabase } from './sqlite-database.js';
import { tracedAccounts } from './sqlite-retention.js';

type SqliteCacheSettingsRow = CacheSettingsRow<number>;

/**
 * The spend of the traces since a time, of one account or of every account:
 * both walk traces_account_started from `since` on (one account's range, or
 * each traced account's in turn), never the whole table.
 */
export const spendSinceSql = {
  ofAccount: `SELECT ${spendGroupColumns} FROM traces WHERE account_id = ? AND started_at >= ? AND cost_usd > 0 GROUP BY ${spendGroupBy}`,
  ofEveryAccount:
    `${tracedAccounts}SELECT ${spendGroupColumns} FROM traces WHERE account_id IN (SELECT account_id FROM traced) AND started_at >= ? AND cost_usd > 0 ` +
    `GROUP BY ${spendGroupBy}`,
};

const budgetOrder = 'ORDER BY account_id, project, workload, environment';
const cacheOrder = 'ORDER BY account_id, project, workload';

function prepareBudgetStatements(database: SqliteDatabase) {
  const spendRow = database.prepare<[string], SpendRow>(`SELECT ${spendColumns} FROM budget_spend WHERE cap_id = ?`);
  const writeSpend = database.prepare<[string, number, number]>(
    `INSERT INTO budget_spend (cap_id, spent_micros, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (cap_id) DO UPDATE SET spent_micros = excluded.spent_micros, expires_at = excluded.expires_at`,
  );
  /** A row's spend, or null when it is missing or has expired. */
  const live = (capId: string, now: number): SpendRow | null => {
    const row = spendRow.get(capId);
    return row !== undefined && row.expiresAt > now ? row : null;
  };

  const reserve = database.transaction((caps: readonly SpendCap[], amountMicros: number): SpendReservation => {
    const now = Date.now();
    const spent = caps.map((cap) => live(cap.id, now)?.spentMicros ?? 0);
    const refusedIndex = caps.findIndex((cap, index) => (spent[index] as number) + amountMicros > cap.limitMicros);
    if (refusedIndex !== -1) return { reserved: false, refusedIndex, spentMicros: spent };
    const after = spent.map((value) => value + amountMicros);
    caps.forEach((cap, index) => writeSpend.run(cap.id, after[index] as number, cap.expiresAt));
    return { reserved: true, refusedIndex: -1, spentMicros: after };
  });

  const add = database.transaction((changes: readonly SpendChange[]): Array<number | null> => {
    const now = Date.now();
    return changes.map((change) => {
      const row = live(change.capId, now);
      if (row === null && change.expiresAt === null) return null;
      const after = Math.max(0, (row?.spentMicros ?? 0) + change.deltaMicros);
      writeSpend.run(change.capId, after, change.expiresAt ?? (row as SpendRow).expiresAt);
      return after;
    });
  });

  return {
    getBudget: database.prepare<[string, string, string, string], BudgetRow>(
      `SELECT ${budgetColumns} FROM budgets WHERE account_id = ? AND project = ? AND workload = ? AND environment = ?`,
    ),
    putBudget: database.prepare<unknown[]>(
      `INSERT INTO budgets (account_id, project, workload, environment, daily_usd, monthly_usd, alert_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, project, workload, environment) DO UPDATE SET
         daily_usd = excluded.daily_usd, monthly_usd = excluded.monthly_usd, alert_at = excluded.alert_at, updated_at = excluded.updated_at`,
    ),
    budgetsOf: database.prepare<[string], BudgetRow>(`SELECT ${budgetColumns} FROM budgets WHERE account_id = ? ${budgetOrder}`),
    allBudgets: database.prepare<[], BudgetRow>(`SELECT ${budgetColumns} FROM budgets ${budgetOrder}`),
    getCache: database.prepare<[string, string, string], SqliteCacheSettingsRow>(
      `SELECT ${cacheSettingsColumns} FROM cache_settings WHERE account_id = ? AND project = ? AND workload = ?`,
    ),
    putCache: database.prepare<[string, string, string, number, number, number, number]>(
      `INSERT INTO cache_settings (account_id, project, workload, enabled, ttl_seconds, only_repeatable, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, project, workload) DO UPDATE SET
         enabled = excluded.enabled, ttl_seconds = excluded.ttl_seconds, only_repeatable = excluded.only_repeatable, updated_at = excluded.updated_at`,
    ),
    cacheOf: database.prepare<[string], SqliteCacheSettingsRow>(
      `SELECT ${cacheSettingsColumns} FROM cache_settings WHERE account_id = ? ${cacheOrder}`,
    ),
    allCache: database.prepare<[], SqliteCacheSettingsRow>(`SELECT ${cacheSettingsColumns} FROM cache_settings ${cacheOrder}`),
    spendOf: database.prepare<[string, number], SpendGroup>(spendSinceSql.ofAccount),
    allSpend: database.prepare<[number], SpendGroup>(spendSinceSql.ofEveryAccount),
    reserve,
    add,
    live,
    deleteExpired: database.prepare<[number]>('DELETE FROM budget_spend WHERE expires_at <= ?'),
  };
}

export function createSqliteBudgets(database: SqliteDatabase): BudgetStore {
  const prepared = preparedOnFirstUse(() => prepareBudgetStatements(database));
  const toCacheSettings = (row: SqliteCacheSettingsRow) => fromCacheSettingsRow(row, row.enabled === 1, row.onlyRepeatable === 1);
  return {
    async getBudget(scope, environment) {
      const row = prepared().getBudget.get(scope.accountId, scope.project, scope.workload, environment);
      return row === undefined ? null : fromBudgetRow(row);
    },
    async putBudget(budget: ScopeBudget) {
      prepared().putBudget.run(...budgetValues(budget));
    },
    async listBudgets(accountId) {
      const statements = prepared();
      return (accountId === null ? statements.allBudgets.all() : statements.budgetsOf.all(accountId)).map(fromBudgetRow);
    },
    async getCacheSettings(scope) {
      const row = prepared().getCache.get(scope.accountId, scope.project, scope.workload);
      return row === undefined ? null : toCacheSettings(row);
    },
    async putCacheSettings(settings) {
      const { scope } = settings;
      prepared().putCache.run(
        scope.accountId,
        scope.project,
        scope.workload,
        settings.enabled ? 1 : 0,
        settings.ttlSeconds,
        settings.onlyRepeatable ? 1 : 0,
        settings.updatedAt,
      );
    },
    async listCacheSettings(accountId) {
      const statements = prepared();
      return (accountId === null ? statements.allCache.all() : statements.cacheOf.all(accountId)).map(toCacheSettings);
    },
    async spendSince(accountId, since) {
      const statements = prepared();
      return foldSpend(accountId === null ? statements.allSpend.all(since) : statements.spendOf.all(accountId, since));
    },
    async reserveSpend(caps, amountMicros) {
      return prepared().reserve.immediate(caps, amountMicros);
    },
    async addSpend(changes) {
      return changes.length === 0 ? [] : prepared().add.immediate(changes);
    },
    async spentOf(capIds) {
      const { live } = prepared();
      const now = Date.now();
      return capIds.map((capId) => live(capId, now)?.spentMicros ?? 0);
    },
    async deleteExpiredSpend() {
      return prepared().deleteExpired.run(Date.now()).changes;
    },
  };
}
