import { describe, expect, it } from 'vitest';
import { ClientAbortError, EngineOverloadedError } from '../../api/errors.js';
import { createLeasePool } from './lease-pool.js';

const never = new AbortController().signal;

describe('createLeasePool', () => {
  it('lends free resources at once, then queues, then refuses with a 503 and retry-after', async () => {
    const pool = createLeasePool({ resources: ['a', 'b'], maxWaiting: 1, name: 'tiny', retryAfterSeconds: 2 });
    const first = await pool.acquire(never);
    const second = await pool.acquire(never);
    expect(new Set([first, second])).toEqual(new Set(['a', 'b']));

    const queued = pool.acquire(never);
    expect(pool.waiting).toBe(1);
    const refused = await pool.acquire(never).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EngineOverloadedError);
    expect((refused as EngineOverloadedError).status).toBe(503);
    expect((refused as EngineOverloadedError).headers).toEqual({ 'retry-after': '2' });
    expect((refused as EngineOverloadedError).message).toContain("'tiny' is busy");

    pool.release(first);
    await expect(queued).resolves.toBe(first);
    expect(pool.inUse).toBe(2);
    expect(pool.waiting).toBe(0);
  });

  it('serves waiters in arrival order', async () => {
    const pool = createLeasePool({ resources: [1], maxWaiting: 5, name: 'm' });
    const held = await pool.acquire(never);
    const order: string[] = [];
    const early = pool.acquire(never).then((resource) => {
      order.push('early');
      return resource;
    });
    const late = pool.acquire(never).then((resource) => {
      order.push('late');
      return resource;
    });
    pool.release(held);
    pool.release(await early);
    await late;
    expect(order).toEqual(['early', 'late']);
  });

  it('drops a waiter whose caller went away, and does not hand it a resource', async () => {
    const pool = createLeasePool({ resources: ['only'], maxWaiting: 5, name: 'm' });
    const held = await pool.acquire(never);
    const controller = new AbortController();
    const abandoned = pool.acquire(controller.signal);
    const next = pool.acquire(never);
    controller.abort();
    await expect(abandoned).rejects.toBeInstanceOf(ClientAbortError);
    expect(pool.waiting).toBe(1);
    pool.release(held);
    await expect(next).resolves.toBe('only');
  });

  it('refuses an already aborted caller without taking a resource', async () => {
    const pool = createLeasePool({ resources: ['x'], maxWaiting: 0, name: 'm' });
    const controller = new AbortController();
    controller.abort();
    await expect(pool.acquire(controller.signal)).rejects.toBeInstanceOf(ClientAbortError);
    expect(pool.inUse).toBe(0);
  });
});
