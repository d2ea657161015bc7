/** Accounts (`AccountStore`'s account half, `store.ts`) on PostgreSQL; keys are `postgres-keys.ts`. */
import { accountColumns, newId, readBack } from '../sql-records.js';
import type { Account, AccountStore } from '../store.js';
import type { PostgresDatabase } from './postgres-database.js';

export type AccountPart = Pick<AccountStore, 'ensureAccount' | 'getAccount'>;

export function createPostgresAccounts(database: PostgresDatabase): AccountPart {
  const byColumn = async (column: 'name' | 'id', value: string) =>
    (await database.query<Account>(`SELECT ${accountColumns} FROM accounts WHERE ${column} = $1`, [value]))[0] ?? null;
  return {
    async ensureAccount(name) {
      // Two statements, not one: a row another process inserted after this statement's snapshot is
      // invisible to it, but visible to the next statement once the conflict has waited for its commit.
      await database.execute('INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [
        newId('acct'),
        name,
        Date.now(),
      ]);
      return readBack(await byColumn('name', name), 'postgres');
    },
    async getAccount(id) {
      return byColumn('id', id);
    },
  };
}
