/** API keys (`AccountStore`'s key half, `store.ts`) on SQLite. */
import { keyColumns, newId, readBack } from '../sql-records.js';
import type { AccountStore, ApiKey } from '../store.js';
import { preparedOnFirstUse, type SqliteDatabase } from './sqlite-database.js';
import { paginate } from './sqlite-pagination.js';

export type KeyPart = Omit<AccountStore, 'ensureAccount' | 'getAccount'>;

export function createSqliteKeys(database: SqliteDatabase): KeyPart {
  const prepared = preparedOnFirstUse(() => {
    const statements = {
      insert: database.prepare<
        [string, string, string | null, string, string, string, string, number | null, number | null, number | null, number | null, number]
      >(
        'INSERT INTO api_keys (id, account_id, name, display_prefix, hash, environment, role, requests_per_minute, tokens_per_minute, ' +
          'daily_budget_usd, monthly_budget_usd, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      byHash: database.prepare<[string], ApiKey>(`SELECT ${keyColumns} FROM api_keys WHERE hash = ?`),
      byId: database.prepare<[string], ApiKey>(`SELECT ${keyColumns} FROM api_keys WHERE id = ?`),
      first: database.prepare<[string, number], ApiKey>(
        `SELECT ${keyColumns} FROM api_keys WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
      ),
      after: database.prepare<[string, number, string, number], ApiKey>(
        `SELECT ${keyColumns} FROM api_keys WHERE account_id = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?`,
      ),
      revoke: database.prepare<[number, string, string]>(
        'UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND id = ? AND revoked_at IS NULL',
      ),
      hashesRevokedSince: database.prepare<[number], string>('SELECT hash FROM api_keys WHERE revoked_at >= ?').pluck(),
      touch: database.prepare<[number, string, number]>(
        'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
      ),
    };
    // Built once too; each call is then one BEGIN/COMMIT.
    const touchAll = database.transaction((uses: ReadonlyArray<{ keyId: string; usedAt: number }>) => {
      for (const use of uses) statements.touch.run(use.usedAt, use.keyId, use.usedAt);
    });
    return { ...statements, touchAll };
  });

  return {
    async createKey(key) {
      const statements = prepared();
      const id = newId('key');
      statements.insert.run(
        id,
        key.accountId,
        key.name,
        key.displayPrefix,
        key.hash,
        key.environment,
        key.role,
        key.requestsPerMinute,
        key.tokensPerMinute ?? null,
        key.dailyBudgetUsd ?? null,
        key.monthlyBudgetUsd ?? null,
        key.createdAt ?? Date.now(),
      );
      return readBack(statements.byId.get(id), 'sqlite');
    },
    async findKeyByHash(hash) {
      return prepared().byHash.get(hash) ?? null;
    },
    async listKeys(accountId, page) {
      const statements = prepared();
      return paginate(
        page,
        (row) => [row.createdAt, row.id],
        (limit, after) =>
          after === null ? statements.first.all(accountId, limit) : statements.after.all(accountId, after[0], after[1], limit),
      );
    },
    async revokeKey(accountId, keyId, at) {
      return prepared().revoke.run(at, accountId, keyId).changes === 1;
    },
    async listKeysRevokedSince(since) {
      return prepared().hashesRevokedSince.all(since);
    },
    async touchKeys(uses) {
      if (uses.length > 0) prepared().touchAll(uses);
    },
  };
}
