/**
 * The rows of `budgets`, `cache_settings` and `budget_spend`
 * (`budget-store.ts`) as both SQL back ends read them (`sql-records.ts` says
 * how rows map to records), and how the spend of the traces, summed by SQL
 * per (account, environment, key, project, workload), becomes the totals per
 * owner of a budget.
 */
import type { Scope } from '../api/scope.js';
import type { ScopeBudget, ScopeCacheSettings, SpendSince } from './budget-store.js';
import { selectList } from './sql-records.js';
import type { Environment } from './store.js';

/** A row of `budgets`: the scope in three columns. */
export type BudgetRow = Scope & Omit<ScopeBudget, 'scope'>;

export const budgetColumns = selectList<BudgetRow>({
  accountId: 'account_id',
  project: 'project',
  workload: 'workload',
  environment: 'environment',
  dailyUsd: 'daily_usd',
  monthlyUsd: 'monthly_usd',
  alertAt: 'alert_at',
  updatedAt: 'updated_at',
});

export function fromBudgetRow({ accountId, project, workload, ...budget }: BudgetRow): ScopeBudget {
  return { scope: { accountId, project, workload }, ...budget };
}

/** A budget's values in the order of `budgets`' columns (as `budgetColumns` names them). */
export function budgetValues(budget: ScopeBudget): unknown[] {
  const { scope } = budget;
  return [
    scope.accountId,
    scope.project,
    scope.workload,
    budget.environment,
    budget.dailyUsd,
    budget.monthlyUsd,
    budget.alertAt,
    budget.updatedAt,
  ];
}

/** A row of `cache_settings`: the scope in three columns, flags as the dialect keeps a boolean. */
export type CacheSettingsRow<Flag> = Scope &
  Omit<ScopeCacheSettings, 'scope' | 'enabled' | 'onlyRepeatable'> & { enabled: Flag; onlyRepeatable: Flag };

export const cacheSettingsColumns = selectList<CacheSettingsRow<unknown>>({
  accountId: 'account_id',
  project: 'project',
  workload: 'workload',
  enabled: 'enabled',
  ttlSeconds: 'ttl_seconds',
  onlyRepeatable: 'only_repeatable',
  updatedAt: 'updated_at',
});

export function fromCacheSettingsRow(row: CacheSettingsRow<unknown>, enabled: boolean, onlyRepeatable: boolean): ScopeCacheSettings {
  return {
    scope: { accountId: row.accountId, project: row.project, workload: row.workload },
    enabled,
    ttlSeconds: row.ttlSeconds,
    onlyRepeatable,
    updatedAt: row.updatedAt,
  };
}

/** A row of `budget_spend`. */
export interface SpendRow {
  capId: string;
  spentMicros: number;
  expiresAt: number;
}

export const spendColumns = selectList<SpendRow>({ capId: 'cap_id', spentMicros: 'spent_micros', expiresAt: 'expires_at' });

/** What the traces of one (account, environment, key, project, workload) cost: the SQL sum `foldSpend` starts from. */
export interface SpendGroup {
  accountId: string;
  environment: Environment;
  keyId: string;
  project: string | null;
  workload: string | null;
  costUsd: number;
}

/** The SELECT list and GROUP BY of `SpendGroup`s over `traces` (calls that cost nothing are filtered out by the caller's WHERE). */
export const spendGroupColumns = 'account_id AS "accountId", environment, key_id AS "keyId", project, workload, SUM(cost_usd) AS "costUsd"';
export const spendGroupBy = 'account_id, environment, key_id, project, workload';

/** The sums per owner of a budget, each list ordered by its key. */
export function foldSpend(groups: readonly SpendGroup[]): SpendSince {
  const accounts = new Map<string, SpendSince['accounts'][number]>();
  const projects = new Map<string, SpendSince['projects'][number]>();
  const workloads = new Map<string, SpendSince['workloads'][number]>();
  const keys = new Map<string, SpendSince['keys'][number]>();
  for (const { accountId, environment, keyId, project, workload, costUsd } of groups) {
    if (!(costUsd > 0)) continue;
    (
      accounts.get(key(accountId, environment)) ?? set(accounts, key(accountId, environment), { accountId, environment, costUsd: 0 })
    ).costUsd += costUsd;
    (keys.get(key(accountId, keyId)) ?? set(keys, key(accountId, keyId), { accountId, keyId, costUsd: 0 })).costUsd += costUsd;
    if (project === null) continue;
    const projectKey = key(accountId, project, environment);
    (projects.get(projectKey) ?? set(projects, projectKey, { scope: { accountId, project }, environment, costUsd: 0 })).costUsd += costUsd;
    if (workload === null) continue;
    const workloadKey = key(accountId, project, workload, environment);
    (
      workloads.get(workloadKey) ?? set(workloads, workloadKey, { scope: { accountId, project, workload }, environment, costUsd: 0 })
    ).costUsd += costUsd;
  }
  return { accounts: sorted(accounts), projects: sorted(projects), workloads: sorted(workloads), keys: sorted(keys) };
}

function key(...parts: string[]): string {
  return parts.join('\u0000');
}

function set<Value>(map: Map<string, Value>, mapKey: string, value: Value): Value {
  map.set(mapKey, value);
  return value;
}

function sorted<Value>(map: Map<string, Value>): Value[] {
  return [...map].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)).map(([, value]) => value);
}
