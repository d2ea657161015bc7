/** Accounts (`AccountStore`'s account half, `store.ts`) on SQLite; keys are `sqlite-keys.ts`. */
import { accountColumns, newId, readBack } from '../sql-records.js';
import type { Account, AccountStore } from '../store.js';
import { preparedOnFirstUse, type SqliteDatabase } from './sqlite-database.js';

export type AccountPart = Pick<AccountStore, 'ensureAccount' | 'getAccount'>;

export function createSqliteAccounts(database: SqliteDatabase): AccountPart {
  const prepared = preparedOnFirstUse(() => ({
    insert: database.prepare<[string, string, number]>(
      'INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
    ),
    byName: database.prepare<[string], Account>(`SELECT ${accountColumns} FROM accounts WHERE name = ?`),
    byId: database.prepare<[string], Account>(`SELECT ${accountColumns} FROM accounts WHERE id = ?`),
  }));
  return {
    async ensureAccount(name) {
      const statements = prepared();
      statements.insert.run(newId('acct'), name, Date.now());
      return readBack(statements.byName.get(name), 'sqlite');
    },
    async getAccount(id) {
      return prepared().byId.get(id) ?? null;
    },
  };
}
