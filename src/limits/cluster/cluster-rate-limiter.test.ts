import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { capturingLogger } from '../../../test/helpers/capturing-logger.js';
import type { MessageChannel } from '../../ipc/message-channel.js';
import { silentLogger } from '../../log/logger.js';
import { describeRateLimiterContract } from '../../../test/contracts/rate-limiter-contract.js';
import type { RateLimiter } from '../rate-limiter.js';
import { createClusterLimitsHost, type ClusterLimitsHost } from './cluster-limits-host.js';
import { createClusterRateLimiter } from './cluster-rate-limiter.js';

/**
 * Two ends of an in-process link standing in for the cluster IPC: messages
 * are cloned and delivered on a later turn, as over IPC. `state` 'silent'
 * drops what the worker sends (a primary that does not answer); 'closed'
 * refuses to send (a primary that is gone).
 */
function link(): { worker: MessageChannel; primary: MessageChannel; state: 'open' | 'silent' | 'closed' } {
  const listeners = { worker: new Set<(message: unknown) => void>(), primary: new Set<(message: unknown) => void>() };
  const control = { state: 'open' as 'open' | 'silent' | 'closed', worker: end('primary'), primary: end('worker') };
  function end(to: 'worker' | 'primary'): MessageChannel {
    const from = to === 'worker' ? 'primary' : 'worker';
    return {
      send(message) {
        if (control.state === 'closed') return false;
        if (control.state === 'silent' && to === 'primary') return true;
        const copy = structuredClone(message);
        setImmediate(() => listeners[to].forEach((listener) => listener(copy)));
        return true;
      },
      subscribe(listener) {
        listeners[from].add(listener);
        return () => void listeners[from].delete(listener);
      },
    };
  }
  return control;
}

/** A worker's limiter linked to a host; `close` closes both. */
function clusterLimiter(
  host: ClusterLimitsHost,
  options: { answerTimeoutMs?: number; probeIntervalMs?: number } = {},
  logger = silentLogger,
) {
  const channels = link();
  const detach = host.attach(channels.primary);
  const limiter = createClusterRateLimiter({ channel: channels.worker, logger, ...options });
  return { limiter, channels, detach };
}

describeRateLimiterContract('cluster (worker asking the primary over IPC)', async () => {
  const host = createClusterLimitsHost();
  const { limiter, detach } = clusterLimiter(host);
  return {
    ...limiter,
    async close() {
      await limiter.close();
      detach();
      await host.close();
    },
  } satisfies RateLimiter;
});

const requestsOnly = (requestsPerMinute: number) => ({ requestsPerMinute, tokensPerMinute: null });

describe('cluster rate limiter', () => {
  it('gives a key one budget across every worker, not one per worker', async () => {
    const host = createClusterLimitsHost();
    const workers = [clusterLimiter(host), clusterLimiter(host), clusterLimiter(host)];
    const key = `key_${randomUUID()}`;
    const admissions = await Promise.all(
      Array.from({ length: 30 }, (_, index) => (workers[index % 3]?.limiter as RateLimiter).admit(key, requestsOnly(10))),
    );
    const admitted = admissions.filter((admission) => admission.allowed);
    expect(admitted).toHaveLength(10);
    expect(admitted.map((admission) => admission.requests.remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Tokens one worker spends count in the others.
    const tokenKey = `key_${randomUUID()}`;
    const limits = { requestsPerMinute: 100, tokensPerMinute: 10 };
    const [first, second] = workers as [(typeof workers)[0], (typeof workers)[0]];
    await first.limiter.admit(tokenKey, limits);
    first.limiter.spendTokens(tokenKey, 10, 7);
    expect((await second.limiter.admit(tokenKey, limits)).tokens?.remaining).toBe(3);
    for (const worker of workers) await worker.limiter.close();
    await host.close();
  });

  it('falls back to its own budgets when the primary does not answer, says so once, and comes back when it answers', async () => {
    const host = createClusterLimitsHost();
    const { logger, lines } = capturingLogger();
    const { limiter, channels } = clusterLimiter(host, { answerTimeoutMs: 50, probeIntervalMs: 20 }, logger);
    const key = `key_${randomUUID()}`;
    expect((await limiter.admit(key, requestsOnly(2))).requests.remaining).toBe(1);

    channels.state = 'silent';
    const started = Date.now();
    const fallback = await limiter.admit(key, requestsOnly(2));
    expect(Date.now() - started).toBeLessThan(1_000);
    // Memory's own budget: full, whatever the primary counted.
    expect(fallback).toMatchObject({ allowed: true, requests: { remaining: 1 } });
    expect(limiter.degraded()).toMatch(/per worker .*primary process .*does not answer/);
    // Degraded, it no longer waits on the primary.
    const quick = Date.now();
    expect(await limiter.admit(key, requestsOnly(2))).toMatchObject({ allowed: true, requests: { remaining: 0 } });
    expect(await limiter.admit(key, requestsOnly(2))).toMatchObject({ allowed: false });
    expect(Date.now() - quick).toBeLessThan(40);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);

    channels.state = 'open';
    for (let attempt = 0; attempt < 100 && limiter.degraded() !== null; attempt++) await sleep(10);
    expect(limiter.degraded()).toBeNull();
    expect(lines.some((line) => line.msg.includes('answers again'))).toBe(true);
    // Back on the primary's budget: one request left there.
    expect(await limiter.admit(key, requestsOnly(2))).toMatchObject({ allowed: true, requests: { remaining: 0 } });
    expect(await limiter.admit(key, requestsOnly(2))).toMatchObject({ allowed: false });
    await limiter.close();
    await host.close();
  });

  it('falls back at once when the link to the primary is closed', async () => {
    const host = createClusterLimitsHost();
    const { limiter, channels } = clusterLimiter(host, { answerTimeoutMs: 10_000 });
    channels.state = 'closed';
    const started = Date.now();
    expect(await limiter.admit(`key_${randomUUID()}`, requestsOnly(1))).toMatchObject({ allowed: true });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(limiter.degraded()).not.toBeNull();
    await limiter.close();
    await host.close();
  });
});
