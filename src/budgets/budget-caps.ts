/**
 * Which spend caps cover a call, as ledger entries: pure functions of the
 * budget settings and the time, so every process (and every back end) names
 * the same cap the same way.
 *
 * A cap's `id` is its ledger key and holds its period, so a new day or month
 * is a new key that starts at nothing: nothing has to be reset, and spend
 * settled after the reset by a call that began before it lands on the period
 * it was reserved in. Periods are UTC days (from 00:00) and UTC months (from
 * the 1st, 00:00).
 *
 * Money in the ledger is integer micro-dollars (1 USD = 1_000_000), so Redis
 * INCRBY and SQL bigint add it exactly. Conversions round the safe way: an
 * amount up (`toMicros`: a reservation never falls below the cost) and a
 * limit down (`capMicros`: a cap never rises above itself), after snapping
 * away the floating-point noise of `usd * 1e6` (4.03 * 1e6 is
 * 4030000.0000000005 and 2.01 * 1e6 is 2009999.9999999998: both are whole
 * micros).
 */

export type BudgetPeriod = 'day' | 'month';
export type BudgetEnvironment = 'production' | 'staging';

/** One spend cap in one period: what the ledger reserves against. */
export interface Cap {
  /** The ledger key, naming the owner, the environment and the period: `proj:acct_1:shop:production:day:2026-11-29`. */
  id: string;
  /** The budget in words, for the refusal's message: "project 'shop' daily budget of $5.00 (production)". */
  label: string;
  /** The cap in micro-dollars: a reservation that would take the spend above it is refused. */
  limitMicros: number;
  /** The soft threshold as a share of the limit (0 < x < 1), reported once when a reservation crosses it; null for none. */
  alertAt: number | null;
  period: BudgetPeriod;
  /** When the next period starts (epoch ms): the spend starts again at nothing then. */
  resetsAt: number;
}

/** A budget as it is set on an account, project, workload or key: each cap optional. */
export interface BudgetSetting {
  dailyUsd: number | null;
  monthlyUsd: number | null;
  /** 0 < x < 1; null: no soft threshold. */
  alertAt: number | null;
}

/** Who a call is made by and for: what decides which caps cover it. */
export interface CallScope {
  accountId: string;
  environment: BudgetEnvironment;
  project: string;
  /** The workload's name; null when the call names none (only the project's caps then apply). */
  workload: string | null;
  keyId: string;
}

/** The budgets that cover one call, each null when it has none (the account's from the config, the others from the store). */
export interface CoveringBudgets {
  account: BudgetSetting | null;
  project: BudgetSetting | null;
  workload: BudgetSetting | null;
  key: BudgetSetting | null;
}

/** How long a ledger keeps a period after it ended, for settlements of calls that began before the reset (the memory back ends). */
export const memoryGraceMs = 60 * 60 * 1000;
/** The same for the shared back ends (Redis `PEXPIREAT resetsAt + 1 day`), which the dashboard may also read yesterday from. */
export const sharedGraceMs = 24 * 60 * 60 * 1000;

/** The period `now` falls in: its name in cap ids (`2026-11-29`, `2026-11`), its start and the next start (epoch ms, UTC). */
export function periodOf(period: BudgetPeriod, now: number): { name: string; startsAt: number; resetsAt: number } {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const monthName = `${String(year).padStart(4, '0')}-${String(month + 1).padStart(2, '0')}`;
  if (period === 'month') return { name: monthName, startsAt: Date.UTC(year, month, 1), resetsAt: Date.UTC(year, month + 1, 1) };
  const day = date.getUTCDate();
  return {
    name: `${monthName}-${String(day).padStart(2, '0')}`,
    startsAt: Date.UTC(year, month, day),
    resetsAt: Date.UTC(year, month, day + 1),
  };
}

/** When the period `now` falls in ends (epoch ms): the next 00:00 UTC, or the next 1st at 00:00 UTC. */
export function resetsAt(period: BudgetPeriod, now: number): number {
  return periodOf(period, now).resetsAt;
}

/** Micro-dollars of a quantity already in micros (tokens × USD per million tokens), rounded up past float noise. */
export function ceilMicros(micros: number): number {
  return Math.ceil(snapped(micros));
}

/** An amount in USD as micro-dollars, rounded up: a reservation or a cost never falls below itself. */
export function toMicros(usd: number): number {
  if (!Number.isFinite(usd) || usd < 0) throw new RangeError(`an amount in USD must be a finite number of at least 0, got ${usd}`);
  return ceilMicros(usd * 1_000_000);
}

/** A cap in USD as micro-dollars, rounded down: a cap never rises above itself. */
export function capMicros(usd: number): number {
  if (!Number.isFinite(usd) || usd < 0) throw new RangeError(`a cap in USD must be a finite number of at least 0, got ${usd}`);
  return Math.floor(snapped(usd * 1_000_000));
}

/** Micro-dollars in USD, for messages and replies. */
export function fromMicros(micros: number): number {
  return micros / 1_000_000;
}

/** `$5.00`, `$0.000125`: cents when the amount is whole cents, else as many places as it needs (up to micros). */
export function formatUsd(micros: number): string {
  if (micros % 10_000 === 0) return `$${(micros / 1_000_000).toFixed(2)}`;
  return `$${(micros / 1_000_000).toFixed(6).replace(/0+$/, '')}`;
}

/** The spend (micros) at which a cap's soft threshold is crossed; null when it has none. */
export function alertThresholdMicros(cap: Pick<Cap, 'alertAt' | 'limitMicros'>): number | null {
  return cap.alertAt === null ? null : Math.round(cap.alertAt * cap.limitMicros);
}

/**
 * The caps that cover a call made at `now`, in a fixed order (account,
 * project, workload, key; each day before month): the order a refusal
 * names the first cap that would pass. A budget without a workload's caps
 * (`scope.workload` null) covers nothing at the workload level.
 */
export function capsFor(scope: CallScope, budgets: CoveringBudgets, now: number): Cap[] {
  const { accountId, environment, project, workload, keyId } = scope;
  const owners: Array<{ prefix: string; owner: string; suffix: string; setting: BudgetSetting | null }> = [
    { prefix: `acct:${accountId}:${environment}`, owner: 'account', suffix: ` (${environment})`, setting: budgets.account },
    {
      prefix: `proj:${accountId}:${project}:${environment}`,
      owner: `project '${project}'`,
      suffix: ` (${environment})`,
      setting: budgets.project,
    },
    {
      prefix: `wl:${accountId}:${project}:${workload ?? ''}:${environment}`,
      owner: `workload '${project}/${workload ?? ''}'`,
      suffix: ` (${environment})`,
      setting: workload === null ? null : budgets.workload,
    },
    // A key belongs to one environment: its id is enough.
    { prefix: `key:${keyId}`, owner: `key '${keyId}'`, suffix: '', setting: budgets.key },
  ];
  const caps: Cap[] = [];
  for (const { prefix, owner, suffix, setting } of owners) {
    if (setting === null) continue;
    for (const [period, usd] of [
      ['day', setting.dailyUsd],
      ['month', setting.monthlyUsd],
    ] as const) {
      if (usd === null) continue;
      const { name, resetsAt: reset } = periodOf(period, now);
      const limitMicros = capMicros(usd);
      const word = period === 'day' ? 'daily' : 'monthly';
      caps.push({
        id: `${prefix}:${period}:${name}`,
        label: `${owner} ${word} budget of ${formatUsd(limitMicros)}${suffix}`,
        limitMicros,
        alertAt: setting.alertAt,
        period,
        resetsAt: reset,
      });
    }
  }
  return caps;
}

/** `value` rounded to the nearest integer when it is that integer but for float noise (a millionth of a micro, or 1e-13 relative). */
function snapped(value: number): number {
  const nearest = Math.round(value);
  return Math.abs(value - nearest) <= Math.max(1e-6, Math.abs(value) * 1e-13) ? nearest : value;
}
