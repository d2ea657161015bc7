import { describe, expect, it } from 'vitest';
import { describeRateLimiterContract } from '../../../test/contracts/rate-limiter-contract.js';
import { createMemoryRateLimiter } from './memory-rate-limiter.js';

describeRateLimiterContract('memory', async () => createMemoryRateLimiter());

describe('memory rate limiter', () => {
  it('refills continuously on its clock: requests and tokens come back one interval at a time', () => {
    let now = 1_000_000;
    const limiter = createMemoryRateLimiter(() => now);
    const limits = { requestsPerMinute: 60, tokensPerMinute: 600 };
    for (let index = 0; index < 60; index++) expect(limiter.admit('k', limits)).toMatchObject({ allowed: true });
    expect(limiter.admit('k', limits)).toMatchObject({ allowed: false, refusedBy: 'requests', retryAfterSeconds: 1 });
    now += 1_000;
    expect(limiter.admit('k', limits)).toMatchObject({ allowed: true, requests: { remaining: 0 } });

    limiter.spendTokens('k', 600, 700);
    expect(limiter.admit('k', limits)).toMatchObject({
      allowed: false,
      refusedBy: 'tokens',
      tokens: { remaining: 0 },
      retryAfterSeconds: 11,
    });
    // 100 ms a token: 10.1 s later one token is left again (and the request budget has refilled too).
    now += 10_100;
    expect(limiter.admit('k', limits)).toMatchObject({ allowed: true, tokens: { remaining: 1 } });
    void limiter.close();
  });

  it('answers synchronously, so the request path costs no extra tick', () => {
    const limiter = createMemoryRateLimiter();
    const admission = limiter.admit('k', { requestsPerMinute: 5, tokensPerMinute: null });
    expect(admission).not.toBeInstanceOf(Promise);
    void limiter.close();
  });
});
