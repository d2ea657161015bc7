/** Dashboard sessions (`session-store.ts`) on PostgreSQL, keyed by the hash of their id. */
import type { SessionStore, StoredSession } from '../session-store.js';
import type { PostgresDatabase } from './postgres-database.js';

const columns = 'id_hash AS "idHash", key_id AS "keyId", account_id AS "accountId", key_hash AS "keyHash", expires_at AS "expiresAt"';

export function createPostgresSessions(database: PostgresDatabase): SessionStore {
  return {
    async createSession(session) {
      await database.execute(
        'INSERT INTO dashboard_sessions (id_hash, key_id, account_id, key_hash, expires_at) VALUES ($1, $2, $3, $4, $5)',
        [session.idHash, session.keyId, session.accountId, session.keyHash, session.expiresAt],
      );
    },
    async getSession(idHash, now) {
      const [row] = await database.query<StoredSession>(
        `SELECT ${columns} FROM dashboard_sessions WHERE id_hash = $1 AND expires_at > $2`,
        [idHash, now],
      );
      return row ?? null;
    },
    async deleteSession(idHash) {
      await database.execute('DELETE FROM dashboard_sessions WHERE id_hash = $1', [idHash]);
    },
    async pruneSessions(now) {
      return database.execute('DELETE FROM dashboard_sessions WHERE expires_at <= $1', [now]);
    },
  };
}
