import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { temporaryDirectory } from '../../test/helpers/temporary-directory.js';
import { createLogger } from '../log/logger.js';
import type { LeaseStore } from '../store/lease-store.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import { createLeadership, type Leadership } from './router-leadership.js';

const logger = createLogger({ level: 'silent' });
const open: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const part of open.splice(0).reverse()) await part.close();
});

/** Two processes' stores on one SQLite file. */
async function twoStores(): Promise<[Store, Store]> {
  const path = join(temporaryDirectory('taskgate-leadership-'), 'taskgate.db');
  const first = createSqliteStore({ path });
  await first.migrate();
  const second = createSqliteStore({ path });
  await second.migrate();
  open.push(first, second);
  return [first, second];
}

/** Leases that fail (as a store that is away) or hang (one that never answers) while told to. */
function switchableLeases(leases: LeaseStore): { leases: LeaseStore; mode: { value: 'ok' | 'failing' | 'hanging' } } {
  const mode = { value: 'ok' as 'ok' | 'failing' | 'hanging' };
  return {
    mode,
    leases: {
      ...leases,
      acquire(name, holder, ttlMs) {
        if (mode.value === 'failing') return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
        if (mode.value === 'hanging') return new Promise(() => undefined);
        return leases.acquire(name, holder, ttlMs);
      },
    },
  };
}

function lead(leases: LeaseStore): Leadership {
  const leadership = createLeadership({ leases, logger, ttlMs: 600, renewMs: 100 });
  open.push(leadership);
  return leadership;
}

/** Watches two leaderships until stopped; true if they ever both led at once. */
function watchForTwoLeaders(first: Leadership, second: Leadership): () => boolean {
  let both = false;
  const timer = setInterval(() => (both ||= first.isLeader() && second.isLeader()), 5);
  return () => {
    clearInterval(timer);
    return both;
  };
}

describe('router leadership', () => {
  it('one of two processes leads; when it stops, the other leads', async () => {
    const [first, second] = await twoStores();
    const a = lead(first.leases);
    const b = lead(second.leases);
    await Promise.all([a.start(), b.start()]);
    expect([a.isLeader(), b.isLeader()].filter(Boolean)).toHaveLength(1);
    const [leader, follower] = a.isLeader() ? [a, b] : [b, a];
    await leader.close();
    await vi.waitFor(() => expect(follower.isLeader()).toBe(true), { timeout: 2_000 });
  });

  it.each(['failing', 'hanging'] as const)(
    'a leader whose renewals are %s steps down before another can take over, so two never lead at once',
    async (trouble) => {
      const [first, second] = await twoStores();
      const troubled = switchableLeases(first.leases);
      const a = lead(troubled.leases);
      await a.start();
      expect(a.isLeader()).toBe(true);
      const b = lead(second.leases);
      await b.start();
      expect(b.isLeader()).toBe(false);

      const stop = watchForTwoLeaders(a, b);
      troubled.mode.value = trouble;
      await vi.waitFor(() => expect(a.isLeader()).toBe(false), { timeout: 2_000 });
      await vi.waitFor(() => expect(b.isLeader()).toBe(true), { timeout: 3_000 });
      expect(stop()).toBe(false);
    },
  );
});
