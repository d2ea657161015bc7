/**
 * The RateLimiter contract as a test suite. Every back end runs it unchanged
 * (`describeRateLimiterContract('memory', …)`, `('redis', …)`), so it uses only
 * the RateLimiter interface. Each test uses keys of its own, so runs against a
 * shared Redis never collide. Rates are chosen so that nothing refills while a
 * test runs (a request or token every 6 s or more): the assertions hold
 * whatever the machine's speed, and no test waits for time to pass.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Admission, BudgetLimits, RateLimiter } from '../../src/limits/rate-limiter.js';

export function describeRateLimiterContract(backendName: string, open: () => Promise<RateLimiter>): void {
  describe(`RateLimiter contract: ${backendName}`, () => {
    let limiter: RateLimiter;
    const freshKey = () => `key_test_${randomUUID()}`;
    const admit = async (key: string, limits: BudgetLimits): Promise<Admission> => limiter.admit(key, limits);
    const requestsOnly = (requestsPerMinute: number): BudgetLimits => ({ requestsPerMinute, tokensPerMinute: null });

    beforeEach(async () => {
      limiter = await open();
    });
    afterEach(async () => {
      await limiter.close();
    });

    it('admits a burst of the whole budget with falling remaining counts, then refuses with retry-after', async () => {
      const key = freshKey();
      const admitted = [await admit(key, requestsOnly(3)), await admit(key, requestsOnly(3)), await admit(key, requestsOnly(3))];
      expect(admitted.map((admission) => admission.allowed)).toEqual([true, true, true]);
      expect(admitted.map((admission) => admission.requests.remaining)).toEqual([2, 1, 0]);
      for (const admission of admitted)
        expect(admission).toMatchObject({ refusedBy: null, retryAfterSeconds: 0, tokens: null, requests: { limit: 3, allowed: true } });
      // 20 s a request: the budget is full again 20, 40, 60 s after the first.
      expect(admitted[0]?.requests.resetSeconds).toBeGreaterThan(15);
      expect(admitted[0]?.requests.resetSeconds).toBeLessThanOrEqual(20);
      expect(admitted[2]?.requests.resetSeconds).toBeGreaterThan(55);
      expect(admitted[2]?.requests.resetSeconds).toBeLessThanOrEqual(60);

      const refused = await admit(key, requestsOnly(3));
      expect(refused).toMatchObject({
        allowed: false,
        refusedBy: 'requests',
        tokens: null,
        requests: { allowed: false, limit: 3, remaining: 0 },
      });
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(20);
      expect(refused.requests.retryAfterSeconds).toBe(refused.retryAfterSeconds);
    });

    it('a refused call takes nothing: the budget is still full again within one window', async () => {
      const key = freshKey();
      await admit(key, requestsOnly(1));
      for (let attempt = 0; attempt < 5; attempt++) {
        const refused = await admit(key, requestsOnly(1));
        expect(refused.allowed).toBe(false);
        expect(refused.requests.resetSeconds).toBeLessThanOrEqual(60);
      }
    });

    it('keeps every key apart', async () => {
      const [first, second] = [freshKey(), freshKey()];
      expect((await admit(first, requestsOnly(1))).allowed).toBe(true);
      expect((await admit(first, requestsOnly(1))).allowed).toBe(false);
      expect(await admit(second, requestsOnly(1))).toMatchObject({ allowed: true, requests: { remaining: 0 } });
    });

    it('serialises concurrent admissions: exactly the budget succeeds and no remaining count repeats', async () => {
      const key = freshKey();
      const admissions = await Promise.all(Array.from({ length: 30 }, () => admit(key, requestsOnly(10))));
      const admitted = admissions.filter((admission) => admission.allowed);
      expect(admitted).toHaveLength(10);
      expect(admitted.map((admission) => admission.requests.remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      for (const refused of admissions.filter((admission) => !admission.allowed))
        expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    });

    it('reports a full token budget, then takes off the tokens spent', async () => {
      const key = freshKey();
      const limits = { requestsPerMinute: 10, tokensPerMinute: 10 };
      const first = await admit(key, limits);
      expect(first).toMatchObject({
        allowed: true,
        requests: { remaining: 9 },
        tokens: { allowed: true, limit: 10, remaining: 10, resetSeconds: 0, retryAfterSeconds: 0 },
      });
      limiter.spendTokens(key, 10, 4);
      const second = await admit(key, limits);
      expect(second).toMatchObject({ allowed: true, requests: { remaining: 8 }, tokens: { remaining: 6 } });
      // 4 tokens at 6 s each: full again in at most 24 s.
      expect(second.tokens?.resetSeconds).toBeGreaterThan(20);
      expect(second.tokens?.resetSeconds).toBeLessThanOrEqual(24);
    });

    it('refuses a call once the token budget is overspent, with retry-after, taking no request', async () => {
      const key = freshKey();
      const limits = { requestsPerMinute: 10, tokensPerMinute: 10 };
      expect((await admit(key, limits)).allowed).toBe(true);
      // 14 tokens of a 10-token budget: 4 below zero, 84 s of backlog.
      limiter.spendTokens(key, 10, 14);
      const refused = await admit(key, limits);
      expect(refused).toMatchObject({
        allowed: false,
        refusedBy: 'tokens',
        requests: { allowed: true, remaining: 9 },
        tokens: { allowed: false, limit: 10, remaining: 0 },
      });
      // One token fits again once the backlog is under 54 s: about 30 s from now.
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(25);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(30);
      expect(refused.tokens?.resetSeconds).toBeGreaterThan(80);
      expect(refused.tokens?.resetSeconds).toBeLessThanOrEqual(84);
      const again = await admit(key, limits);
      expect(again).toMatchObject({ allowed: false, requests: { remaining: 9 } });
    });

    it('a call refused for requests still reports the token budget, untouched', async () => {
      const key = freshKey();
      const limits = { requestsPerMinute: 1, tokensPerMinute: 10 };
      expect((await admit(key, limits)).allowed).toBe(true);
      const refused = await admit(key, limits);
      expect(refused).toMatchObject({ allowed: false, refusedBy: 'requests', tokens: { allowed: true, remaining: 10 } });
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(55);
    });

    it('spending nothing (or less) changes nothing, and one key spends only its own budget', async () => {
      const [spender, other] = [freshKey(), freshKey()];
      const limits = { requestsPerMinute: 10, tokensPerMinute: 10 };
      limiter.spendTokens(spender, 10, 0);
      limiter.spendTokens(spender, 10, -5);
      expect((await admit(spender, limits)).tokens?.remaining).toBe(10);
      limiter.spendTokens(spender, 10, 10);
      expect((await admit(other, limits)).tokens?.remaining).toBe(10);
      expect(await admit(spender, limits)).toMatchObject({ allowed: false, refusedBy: 'tokens' });
    });

    it('is not degraded while its back end answers', async () => {
      await admit(freshKey(), requestsOnly(5));
      expect(limiter.degraded()).toBeNull();
    });
  });
}
