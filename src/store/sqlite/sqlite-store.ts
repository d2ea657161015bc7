/**
 * The embedded Store back end: one SQLite file through better-sqlite3
 * (`sqlite-database.ts`). Each domain lives in a file of its own, as in
 * `postgres/`; this one opens the file and composes them.
 */
import type { Store } from '../store.js';
import { createSqliteAccounts } from './sqlite-accounts.js';
import { createSqliteBudgets } from './sqlite-budgets.js';
import { createSqliteChangeFeed } from './sqlite-change-feed.js';
import { openSqliteDatabase } from './sqlite-database.js';
import { createSqliteKeys } from './sqlite-keys.js';
import { createSqliteLeases } from './sqlite-leases.js';
import { applyMigrations } from './sqlite-migrations.js';
import { createSqliteProjects } from './sqlite-projects.js';
import { createSqliteRetention } from './sqlite-retention.js';
import { createSqliteRollups } from './sqlite-rollups.js';
import { createSqliteRouterQueue } from './sqlite-router-queue.js';
import { createSqliteRouting } from './sqlite-routing.js';
import { createSqliteSessions } from './sqlite-sessions.js';
import { createSqliteTraces } from './sqlite-traces.js';

export function createSqliteStore(options: { path: string }): Store {
  const database = openSqliteDatabase(options.path);
  const ping = database.prepare('SELECT 1');
  const changes = createSqliteChangeFeed(database);

  return {
    accounts: { ...createSqliteAccounts(database), ...createSqliteKeys(database) },
    projects: createSqliteProjects(database),
    traces: createSqliteTraces(database),
    routing: { ...createSqliteRouting(database), ...createSqliteRouterQueue(database) },
    rollups: createSqliteRollups(database),
    retention: createSqliteRetention(database),
    sessions: createSqliteSessions(database),
    budgets: createSqliteBudgets(database),
    leases: createSqliteLeases(database),
    changes,
    async migrate() {
      applyMigrations(database);
    },
    async ping() {
      ping.get();
    },
    async close() {
      changes.close();
      if (database.open) database.close();
    },
  };
}
