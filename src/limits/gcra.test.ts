import { describe, expect, it } from 'vitest';
import { admissionOf, admitGcra, backlogOf, decisionOf, hasRoom, spendGcra } from './gcra.js';

const requestsOnly = (requestsPerMinute: number) => ({ requestsPerMinute, tokensPerMinute: null });

/** `count` admissions at one instant, from an empty budget. */
function burst(count: number, requestsPerMinute: number) {
  let backlog = 0;
  const admissions = [];
  for (let index = 0; index < count; index++) {
    const result = admitGcra(backlog, 0, requestsOnly(requestsPerMinute));
    backlog = result.requestBacklog;
    admissions.push(result.admission);
  }
  return { admissions, backlog };
}

describe('gcra', () => {
  it('allows a full minute of requests at once, then refuses', () => {
    const { admissions } = burst(61, 60);
    expect(admissions.slice(0, 60).every((admission) => admission.allowed)).toBe(true);
    expect(admissions[0]?.requests).toMatchObject({ limit: 60, remaining: 59, resetSeconds: 1 });
    expect(admissions[59]?.requests).toMatchObject({ remaining: 0, resetSeconds: 60 });
    expect(admissions[60]).toMatchObject({
      allowed: false,
      refusedBy: 'requests',
      retryAfterSeconds: 1,
      requests: { remaining: 0 },
      tokens: null,
    });
  });

  it('refills continuously: one request back per interval', () => {
    const { backlog } = burst(60, 60);
    expect(admitGcra(backlog - 500, 0, requestsOnly(60)).admission.allowed).toBe(false);
    expect(admitGcra(backlog - 1_000, 0, requestsOnly(60)).admission).toMatchObject({ allowed: true, requests: { remaining: 0 } });
  });

  it('a refused request takes nothing from the budget', () => {
    const { backlog } = burst(60, 60);
    expect(admitGcra(backlog, 0, requestsOnly(60)).requestBacklog).toBe(backlog);
  });

  it('reports a full budget for an idle key', () => {
    expect(backlogOf(5_000, 100_000)).toBe(0);
    expect(backlogOf(undefined, 100_000)).toBe(0);
    expect(admitGcra(0, 0, requestsOnly(600)).admission.requests).toMatchObject({ allowed: true, remaining: 599, resetSeconds: 0.1 });
  });

  it('retry-after counts whole seconds until one more request fits', () => {
    const { backlog } = burst(2, 2);
    expect(admitGcra(backlog, 0, requestsOnly(2)).admission.retryAfterSeconds).toBe(30);
  });

  it('admits while one token is left, refuses below that without taking a request', () => {
    const limits = { requestsPerMinute: 60, tokensPerMinute: 600 };
    // 100 ms a token: 599 tokens spent leaves one.
    expect(admitGcra(0, 59_900, limits).admission).toMatchObject({ allowed: true, tokens: { remaining: 1, allowed: true } });
    const refused = admitGcra(0, 59_950, limits);
    expect(refused.admission).toMatchObject({
      allowed: false,
      refusedBy: 'tokens',
      retryAfterSeconds: 1,
      requests: { allowed: true, remaining: 60 },
      tokens: { remaining: 0 },
    });
    expect(refused.requestBacklog).toBe(0);
  });

  it('spends without a cap, so an overspent budget waits until it is back under', () => {
    expect(spendGcra(0, 600, 900)).toBe(90_000);
    expect(hasRoom(90_000, 600)).toBe(false);
    expect(decisionOf(600, 90_000, false)).toMatchObject({ remaining: 0, resetSeconds: 90, retryAfterSeconds: 31 });
    expect(spendGcra(1_000, 600, -3)).toBe(1_000);
  });

  it('a refusal by both budgets waits for the longer', () => {
    const admission = admissionOf({ requestsPerMinute: 1, tokensPerMinute: 60 }, false, 60_000, 100_000);
    expect(admission).toMatchObject({ allowed: false, refusedBy: 'tokens', retryAfterSeconds: 60 });
  });
});
