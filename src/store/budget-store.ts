/**
 * What the Store keeps for spend budgets and the response cache (issue 39):
 * the budgets set on projects and workloads, the cache settings of projects
 * and workloads, the spend of the traces since a time (to seed one process's
 * memory ledger), and the ledger rows of the store-backed budget ledger
 * (`budgets/store/store-budget-ledger.ts`, used when the store is PostgreSQL
 * and there is no Redis). Keys carry their own caps (`ApiKey.dailyBudgetUsd`,
 * `monthlyBudgetUsd`); the account's come from the config.
 *
 * A scope's workload '' stands for the project itself: the project's own
 * budget, or the cache setting of every workload of the project that has
 * none of its own.
 *
 * Ledger amounts are integer micro-dollars (1 USD = 1_000_000) so sums are
 * exact in any back end; settings and trace costs stay in USD, as set and
 * as recorded.
 */
import type { ProjectScope, Scope } from '../api/scope.js';
import type { Environment } from './store.js';

/** The spend caps of a project (workload '') or of a workload, in one environment. */
export interface ScopeBudget {
  scope: Scope;
  /** Production and staging have budgets of their own. */
  environment: Environment;
  /** Cap per UTC day; null: none. */
  dailyUsd: number | null;
  /** Cap per UTC month; null: none. */
  monthlyUsd: number | null;
  /** Soft threshold as a share of each cap (0 < x < 1), logged and counted when crossed; null: none. */
  alertAt: number | null;
  updatedAt: number;
}

/** Whether and how replies are cached for a project (workload '') or a workload. */
export interface CacheSettings {
  enabled: boolean;
  /** How long a stored reply is served, seconds. */
  ttlSeconds: number;
  /** Only calls that ask for repeatable output (`temperature: 0` or a `seed`) are cached. */
  onlyRepeatable: boolean;
}

export interface ScopeCacheSettings extends CacheSettings {
  scope: Scope;
  updatedAt: number;
}

/**
 * What the traces started since a time cost (`TraceStore`'s `costUsd`), per
 * owner of a budget, production and staging apart. Cached calls cost 0, and
 * owners whose calls cost nothing are left out.
 */
export interface SpendSince {
  accounts: Array<{ accountId: string; environment: Environment; costUsd: number }>;
  /** Calls without a project (refused before their scope was known) count for the account and the key only. */
  projects: Array<{ scope: ProjectScope; environment: Environment; costUsd: number }>;
  workloads: Array<{ scope: Scope; environment: Environment; costUsd: number }>;
  /** A key has one environment: its id is enough. */
  keys: Array<{ accountId: string; keyId: string; costUsd: number }>;
}

/** One cap of a reservation, as the ledger rows know it. */
export interface SpendCap {
  /** The ledger key (`budgets/budget-caps.ts` names it, period included). */
  id: string;
  limitMicros: number;
  /** When the row stops counting (epoch ms): the period's end plus a grace for late settlements. */
  expiresAt: number;
}

/** The answer to a reservation (the shape of `budgets/ledger-rules.ts`'s `SpendReply`). */
export interface SpendReservation {
  reserved: boolean;
  /** Index in the request of the first cap that refused; -1 when reserved. */
  refusedIndex: number;
  /** Each cap's spend in the request's order: after the reservation when reserved, as it stands when refused. */
  spentMicros: number[];
}

/** One change to a cap's spend. */
export interface SpendChange {
  capId: string;
  /** May be negative (a settlement below its reservation); the spend never goes below 0. */
  deltaMicros: number;
  /**
   * Null: only a row that is there and has not expired changes (a settlement;
   * a cap whose period is over is left alone). Else a missing or expired row
   * starts from 0 and expires then (spend made while the store was away,
   * added once it answers).
   */
  expiresAt: number | null;
}

export interface BudgetStore {
  /** A project's (workload '') or workload's budget in one environment; null when none was set. */
  getBudget(scope: Scope, environment: Environment): Promise<ScopeBudget | null>;
  /** Stores the budget, replacing the one of the same scope and environment (caps left null are removed). */
  putBudget(budget: ScopeBudget): Promise<void>;
  /** Every budget of one account, or (null) of every account, ordered by account, project, workload, environment. */
  listBudgets(accountId: string | null): Promise<ScopeBudget[]>;

  /** A project's (workload '') or workload's cache settings; null when none were set. */
  getCacheSettings(scope: Scope): Promise<ScopeCacheSettings | null>;
  /** Stores the settings, replacing those of the same scope. */
  putCacheSettings(settings: ScopeCacheSettings): Promise<void>;
  /** Every cache setting of one account, or (null) of every account, ordered by account, project, workload. */
  listCacheSettings(accountId: string | null): Promise<ScopeCacheSettings[]>;

  /**
   * The spend of the calls started at or after `since`, of one account or
   * (null) of every account: what one process's memory ledger starts from,
   * so a restart does not forget today's or this month's spend. An index
   * scan of the window's traces, never of older ones.
   */
  spendSince(accountId: string | null, since: number): Promise<SpendSince>;

  /**
   * All or nothing, in one transaction: adds `amountMicros` to every cap's
   * row, or to none when any would pass its limit (spent + amount > limit; a
   * row that has expired counts as 0). Safe across processes: rows are
   * locked in id order (PostgreSQL `SELECT … FOR UPDATE`; SQLite takes the
   * write lock first), so concurrent reservations never both fit where only
   * one does. The caps' ids are distinct.
   */
  reserveSpend(caps: readonly SpendCap[], amountMicros: number): Promise<SpendReservation>;
  /** Applies each change (see `SpendChange`); each row's spend after, or null where nothing changed. */
  addSpend(changes: readonly SpendChange[]): Promise<Array<number | null>>;
  /** Each cap's spend, in order: 0 for a row that is missing or has expired. */
  spentOf(capIds: readonly string[]): Promise<number[]>;
  /**
   * Deletes the ledger rows that have expired; returns how many. Expired rows
   * already count as nothing: this only keeps the table small. The store
   * ledger calls it on a timer (hourly, in every process: idempotent).
   */
  deleteExpiredSpend(): Promise<number>;
}
