/**
 * Leases (`lease-store.ts`) on SQLite, judged by this machine's clock: every
 * process sharing the file runs on it. One upsert takes a free, expired or
 * own lease, and changes nothing while another holder's lease still runs.
 */
import type { Lease, LeaseStore } from '../lease-store.js';
import { preparedOnFirstUse, type SqliteDatabase } from './sqlite-database.js';

export function createSqliteLeases(database: SqliteDatabase): LeaseStore {
  const prepared = preparedOnFirstUse(() => ({
    take: database.prepare<[string, string, number, number]>(
      `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE leases.holder = excluded.holder OR leases.expires_at <= ?`,
    ),
    release: database.prepare<[string, string]>('DELETE FROM leases WHERE name = ? AND holder = ?'),
    current: database.prepare<[string, number], Lease>(
      'SELECT name, holder, expires_at AS expiresAt FROM leases WHERE name = ? AND expires_at > ?',
    ),
  }));
  return {
    async acquire(name, holder, ttlMs) {
      const now = Date.now();
      return prepared().take.run(name, holder, now + ttlMs, now).changes === 1;
    },
    async release(name, holder) {
      prepared().release.run(name, holder);
    },
    async current(name) {
      return prepared().current.get(name, Date.now()) ?? null;
    },
  };
}
