/** API keys (`AccountStore`'s key half, `store.ts`) on PostgreSQL. */
import { keyColumns, newId, readBack } from '../sql-records.js';
import type { AccountStore, ApiKey } from '../store.js';
import type { PostgresDatabase } from './postgres-database.js';
import { paginate } from './postgres-pagination.js';

export type KeyPart = Omit<AccountStore, 'ensureAccount' | 'getAccount'>;

export function createPostgresKeys(database: PostgresDatabase): KeyPart {
  return {
    async createKey(key) {
      const rows = await database.query<ApiKey>(
        `INSERT INTO api_keys (id, account_id, name, display_prefix, hash, environment, role, requests_per_minute, tokens_per_minute,
           daily_budget_usd, monthly_budget_usd, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${keyColumns}`,
        [
          newId('key'),
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
        ],
      );
      return readBack(rows[0], 'postgres');
    },
    async findKeyByHash(hash) {
      return (await database.query<ApiKey>(`SELECT ${keyColumns} FROM api_keys WHERE hash = $1`, [hash]))[0] ?? null;
    },
    async listKeys(accountId, page) {
      return paginate(
        page,
        (row: ApiKey) => [row.createdAt, row.id],
        (limit, after) =>
          after === null
            ? database.query<ApiKey>(
                `SELECT ${keyColumns} FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
                [accountId, limit],
              )
            : database.query<ApiKey>(
                `SELECT ${keyColumns} FROM api_keys WHERE account_id = $1 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT $4`,
                [accountId, after[0], after[1], limit],
              ),
      );
    },
    async revokeKey(accountId, keyId, at) {
      return (
        (await database.execute('UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND id = $3 AND revoked_at IS NULL', [
          at,
          accountId,
          keyId,
        ])) === 1
      );
    },
    async listKeysRevokedSince(since) {
      return (await database.query<{ hash: string }>('SELECT hash FROM api_keys WHERE revoked_at >= $1', [since])).map((row) => row.hash);
    },
    async touchKeys(uses) {
      if (uses.length === 0) return;
      // The rows are locked in id order first, so two processes touching the same keys never deadlock.
      await database.execute(
        `WITH used AS (SELECT id, max(used_at) AS used_at FROM unnest($1::text[], $2::bigint[]) AS u (id, used_at) GROUP BY id),
              locked AS MATERIALIZED (SELECT k.id FROM api_keys k JOIN used USING (id) ORDER BY k.id FOR UPDATE OF k)
         UPDATE api_keys k SET last_used_at = used.used_at FROM used, locked
         WHERE k.id = used.id AND locked.id = used.id AND (k.last_used_at IS NULL OR k.last_used_at < used.used_at)`,
        [uses.map((use) => use.keyId), uses.map((use) => use.usedAt)],
      );
    },
  };
}
