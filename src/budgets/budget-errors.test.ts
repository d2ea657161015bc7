import { describe, expect, it } from 'vitest';
import { toErrorBody } from '../api/errors.js';
import { capsFor } from './budget-caps.js';
import { BudgetExceededError, BudgetUnavailableError } from './budget-errors.js';

describe('budget errors', () => {
  const now = Date.UTC(2026, 10, 29, 23, 0, 0, 1);
  const scope = { accountId: 'acct_1', environment: 'production', project: 'shop', workload: null, keyId: 'key_1' } as const;
  const [cap] = capsFor(scope, { account: null, project: { dailyUsd: 5, monthlyUsd: null, alertAt: 0.8 }, workload: null, key: null }, now);
  if (cap === undefined) throw new Error('no cap');

  it('429 budget_exceeded names the budget, its limit and its reset in UTC, with retry-after to the reset', () => {
    const error = new BudgetExceededError(cap, now, { spentMicros: 4_880_000, amountMicros: 300_000 });
    expect(error.status).toBe(429);
    expect(error.headers).toEqual({ 'retry-after': '3600' });
    expect(toErrorBody(error)).toEqual({
      error: {
        message:
          "Budget exceeded: this call would pass the project 'shop' daily budget of $5.00 (production). $0.12 of it is left, less than this call's worst case of $0.30. It resets at 2026-11-30T00:00:00.000Z.",
        type: 'rate_limit_error',
        param: null,
        code: 'budget_exceeded',
      },
    });
    expect(error.cap).toBe(cap);
  });

  it('waits at least a second, and says no more than it knows', () => {
    const error = new BudgetExceededError(cap, cap.resetsAt + 5);
    expect(error.headers).toEqual({ 'retry-after': '1' });
    expect(error.message).toBe(
      "Budget exceeded: this call would pass the project 'shop' daily budget of $5.00 (production). It resets at 2026-11-30T00:00:00.000Z.",
    );
  });

  it('503 budget_unavailable asks to retry in 5 s', () => {
    const error = new BudgetUnavailableError(new Error('Redis does not answer'));
    expect(error).toMatchObject({ status: 503, code: 'budget_unavailable', type: 'server_error', headers: { 'retry-after': '5' } });
    expect(error.message).toContain('budgets.on_outage');
  });
});
