/**
 * Leases (`lease-store.ts`) on PostgreSQL, judged by the server's clock: one
 * upsert takes a free, expired or own lease atomically, and takes nothing
 * (no row returned) when another holder's lease still runs.
 */
import type { Lease, LeaseStore } from '../lease-store.js';
import { storeNowMs, type PostgresDatabase } from './postgres-database.js';

export function createPostgresLeases(database: PostgresDatabase): LeaseStore {
  return {
    async acquire(name, holder, ttlMs) {
      const rows = await database.query<{ holder: string }>(
        `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, ${storeNowMs} + $3)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE leases.holder = excluded.holder OR leases.expires_at <= ${storeNowMs}
         RETURNING holder`,
        [name, holder, Math.max(0, Math.round(ttlMs))],
      );
      return rows.length === 1;
    },
    async release(name, holder) {
      await database.execute('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder]);
    },
    async current(name) {
      const [lease] = await database.query<Lease>(
        `SELECT name, holder, expires_at AS "expiresAt" FROM leases WHERE name = $1 AND expires_at > ${storeNowMs}`,
        [name],
      );
      return lease ?? null;
    },
  };
}
