import { describe, expect, it } from 'vitest';
import {
  alertThresholdMicros,
  capMicros,
  capsFor,
  ceilMicros,
  formatUsd,
  periodOf,
  resetsAt,
  toMicros,
  type CallScope,
} from './budget-caps.js';

const scope: CallScope = { accountId: 'acct_1', environment: 'production', project: 'shop', workload: 'checkout', keyId: 'key_9' };
const none = { account: null, project: null, workload: null, key: null };

describe('periods', () => {
  it('names UTC days and months and resets at the next start', () => {
    const now = Date.UTC(2026, 10, 29, 13, 45);
    expect(periodOf('day', now)).toEqual({ name: '2026-11-29', startsAt: Date.UTC(2026, 10, 29), resetsAt: Date.UTC(2026, 10, 30) });
    expect(periodOf('month', now)).toEqual({ name: '2026-11', startsAt: Date.UTC(2026, 10, 1), resetsAt: Date.UTC(2026, 11, 1) });
  });

  it('a call at 23:59:59.999 UTC is still in its day (and month), one a millisecond later in the next', () => {
    const last = Date.UTC(2026, 11, 31, 23, 59, 59, 999);
    expect(periodOf('day', last).name).toBe('2026-12-31');
    expect(resetsAt('day', last)).toBe(last + 1);
    expect(periodOf('month', last).name).toBe('2026-12');
    expect(resetsAt('month', last)).toBe(Date.UTC(2027, 0, 1));
    expect(periodOf('day', last + 1)).toMatchObject({ name: '2027-01-01', startsAt: last + 1 });
    expect(periodOf('month', last + 1)).toMatchObject({ name: '2027-01', resetsAt: Date.UTC(2027, 1, 1) });
  });

  it('knows month lengths and leap years, whatever the local time zone', () => {
    expect(resetsAt('month', Date.UTC(2028, 1, 15))).toBe(Date.UTC(2028, 2, 1));
    expect(periodOf('day', Date.UTC(2028, 1, 29, 12)).name).toBe('2028-02-29');
    expect(resetsAt('day', Date.UTC(2027, 1, 28, 12))).toBe(Date.UTC(2027, 2, 1));
    expect(periodOf('day', Date.UTC(2026, 3, 30, 23, 59, 59, 999)).resetsAt).toBe(Date.UTC(2026, 4, 1));
    // The first millisecond of a day is in it.
    expect(periodOf('day', Date.UTC(2026, 4, 1)).name).toBe('2026-05-01');
  });
});

describe('micro-dollars', () => {
  it('rounds amounts up and caps down, past the float noise of usd × 1e6', () => {
    expect(4.03 * 1_000_000).toBeGreaterThan(4_030_000);
    expect(toMicros(4.03)).toBe(4_030_000);
    expect(capMicros(4.03)).toBe(4_030_000);
    expect(2.01 * 1_000_000).toBeLessThan(2_010_000);
    expect(capMicros(2.01)).toBe(2_010_000);
    expect(toMicros(2.01)).toBe(2_010_000);
    expect(toMicros(0.000123)).toBe(123);
    expect(toMicros(0.0000001)).toBe(1);
    expect(capMicros(0.0000019)).toBe(1);
    expect(toMicros(0.0000011)).toBe(2);
    expect(toMicros(0)).toBe(0);
    expect(toMicros(5)).toBe(5_000_000);
    expect(capMicros(1_000_000)).toBe(1_000_000_000_000);
  });

  it('rounds a micro quantity up, and refuses nonsense amounts', () => {
    expect(ceilMicros(12.000000000001)).toBe(12);
    expect(ceilMicros(12.01)).toBe(13);
    for (const bad of [Number.NaN, -0.01, Number.POSITIVE_INFINITY]) {
      expect(() => toMicros(bad)).toThrow(RangeError);
      expect(() => capMicros(bad)).toThrow(RangeError);
    }
  });

  it('formats whole cents as cents, smaller amounts to the micro', () => {
    expect(formatUsd(5_000_000)).toBe('$5.00');
    expect(formatUsd(50_000)).toBe('$0.05');
    expect(formatUsd(125)).toBe('$0.000125');
    expect(formatUsd(1_234_500)).toBe('$1.2345');
  });

  it('puts the soft threshold at alertAt of the limit, to the micro', () => {
    expect(alertThresholdMicros({ alertAt: 0.8, limitMicros: 5_000_000 })).toBe(4_000_000);
    expect(alertThresholdMicros({ alertAt: 0.7, limitMicros: 1_000_000 })).toBe(700_000);
    expect(alertThresholdMicros({ alertAt: null, limitMicros: 5_000_000 })).toBeNull();
  });
});

describe('capsFor', () => {
  const now = Date.UTC(2026, 10, 29, 23, 59, 59, 999);

  it('covers a call with no caps when nothing has a budget', () => {
    expect(capsFor(scope, none, now)).toEqual([]);
    expect(capsFor(scope, { ...none, project: { dailyUsd: null, monthlyUsd: null, alertAt: 0.8 } }, now)).toEqual([]);
  });

  it('lists account, project, workload and key caps in that order, day before month, for the period of now', () => {
    const caps = capsFor(
      scope,
      {
        account: { dailyUsd: 100, monthlyUsd: 2_000, alertAt: 0.9 },
        project: { dailyUsd: 5, monthlyUsd: null, alertAt: 0.8 },
        workload: { dailyUsd: null, monthlyUsd: 30.5, alertAt: null },
        key: { dailyUsd: 0.25, monthlyUsd: 3, alertAt: null },
      },
      now,
    );
    const day = Date.UTC(2026, 10, 30);
    const month = Date.UTC(2026, 11, 1);
    expect(caps).toEqual([
      {
        id: 'acct:acct_1:production:day:2026-11-29',
        label: 'account daily budget of $100.00 (production)',
        limitMicros: 100_000_000,
        alertAt: 0.9,
        period: 'day',
        resetsAt: day,
      },
      {
        id: 'acct:acct_1:production:month:2026-11',
        label: 'account monthly budget of $2000.00 (production)',
        limitMicros: 2_000_000_000,
        alertAt: 0.9,
        period: 'month',
        resetsAt: month,
      },
      {
        id: 'proj:acct_1:shop:production:day:2026-11-29',
        label: "project 'shop' daily budget of $5.00 (production)",
        limitMicros: 5_000_000,
        alertAt: 0.8,
        period: 'day',
        resetsAt: day,
      },
      {
        id: 'wl:acct_1:shop:checkout:production:month:2026-11',
        label: "workload 'shop/checkout' monthly budget of $30.50 (production)",
        limitMicros: 30_500_000,
        alertAt: null,
        period: 'month',
        resetsAt: month,
      },
      {
        id: 'key:key_9:day:2026-11-29',
        label: "key 'key_9' daily budget of $0.25",
        limitMicros: 250_000,
        alertAt: null,
        period: 'day',
        resetsAt: day,
      },
      {
        id: 'key:key_9:month:2026-11',
        label: "key 'key_9' monthly budget of $3.00",
        limitMicros: 3_000_000,
        alertAt: null,
        period: 'month',
        resetsAt: month,
      },
    ]);
  });

  it('keeps production and staging apart, and the next day is another cap', () => {
    const budgets = { ...none, project: { dailyUsd: 5, monthlyUsd: null, alertAt: null } };
    const [production] = capsFor(scope, budgets, now);
    const [staging] = capsFor({ ...scope, environment: 'staging' }, budgets, now);
    const [tomorrow] = capsFor(scope, budgets, now + 1);
    expect(production?.id).toBe('proj:acct_1:shop:production:day:2026-11-29');
    expect(staging?.id).toBe('proj:acct_1:shop:staging:day:2026-11-29');
    expect(staging?.label).toBe("project 'shop' daily budget of $5.00 (staging)");
    expect(tomorrow).toMatchObject({ id: 'proj:acct_1:shop:production:day:2026-11-30', resetsAt: Date.UTC(2026, 11, 1) });
  });

  it('gives a call without a workload no workload caps', () => {
    const budgets = { ...none, workload: { dailyUsd: 1, monthlyUsd: 10, alertAt: null } };
    expect(capsFor({ ...scope, workload: null }, budgets, now)).toEqual([]);
    expect(capsFor(scope, budgets, now)).toHaveLength(2);
  });

  it('rounds a cap down to the micro-dollar', () => {
    const [cap] = capsFor(scope, { ...none, key: { dailyUsd: 0.0000019, monthlyUsd: null, alertAt: null } }, now);
    expect(cap).toMatchObject({ limitMicros: 1, label: "key 'key_9' daily budget of $0.000001" });
  });
});
