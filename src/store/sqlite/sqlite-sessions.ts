/** Dashboard sessions (`session-store.ts`) on SQLite, keyed by the hash of their id. */
import type { SessionStore, StoredSession } from '../session-store.js';
import { preparedOnFirstUse, type SqliteDatabase } from './sqlite-database.js';

const columns = 'id_hash AS idHash, key_id AS keyId, account_id AS accountId, key_hash AS keyHash, expires_at AS expiresAt';

export function createSqliteSessions(database: SqliteDatabase): SessionStore {
  const prepared = preparedOnFirstUse(() => ({
    insert: database.prepare<[string, string, string, string, number]>(
      'INSERT INTO dashboard_sessions (id_hash, key_id, account_id, key_hash, expires_at) VALUES (?, ?, ?, ?, ?)',
    ),
    get: database.prepare<[string, number], StoredSession>(
      `SELECT ${columns} FROM dashboard_sessions WHERE id_hash = ? AND expires_at > ?`,
    ),
    delete: database.prepare<[string]>('DELETE FROM dashboard_sessions WHERE id_hash = ?'),
    prune: database.prepare<[number]>('DELETE FROM dashboard_sessions WHERE expires_at <= ?'),
  }));
  return {
    async createSession(session) {
      prepared().insert.run(session.idHash, session.keyId, session.accountId, session.keyHash, session.expiresAt);
    },
    async getSession(idHash, now) {
      return prepared().get.get(idHash, now) ?? null;
    },
    async deleteSession(idHash) {
      prepared().delete.run(idHash);
    },
    async pruneSessions(now) {
      return prepared().prune.run(now).changes;
    },
  };
}
