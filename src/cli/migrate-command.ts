/**
 * `taskgate migrate`: brings the store's schema up to date and exits, so a
 * deployment can migrate before it starts (or rolls) its servers. Every
 * `serve` migrates as it starts too; this is the same work, reported. Safe to
 * run again (nothing left to apply) and at once from several places: SQLite
 * takes its write lock and PostgreSQL an advisory lock before reading what is
 * applied, so each migration is applied once.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { loadSettings } from '../config/load-config.js';
import { describeStoreLocation, openStore, type StoreLocation } from '../store/open-store.js';
import { createPostgresDatabase } from '../store/postgres/postgres-database.js';
import { applyMigrations as applyPostgresMigrations } from '../store/postgres/postgres-migrations.js';
import { applyMigrations as applySqliteMigrations } from '../store/sqlite/sqlite-migrations.js';
import { CliError } from './cli-error.js';
import { openDataDirectory } from './data-directory.js';
import { parseCommand } from './parse-command.js';

export const migrateUsage = `Usage: taskgate migrate [--config FILE] [--data-dir DIR]

Applies the store's schema migrations, says how many it applied, and exits.
"serve" also migrates as it starts; run this to migrate before the servers
start. Safe to run again, and from several places at once.

Options:
  --config FILE    YAML config whose "store:" names the store (env TASKGATE_CONFIG)
  --data-dir DIR   the SQLite store's directory (env TASKGATE_DATA_DIR; default ./.taskgate)
  -h, --help       show this help

Environment:
  TASKGATE_DATABASE_URL   a postgres:// URL: migrate that PostgreSQL database (no config needed)`;

export async function migrateCommand(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const { values, help } = parseCommand(argv, { config: { type: 'string' }, 'data-dir': { type: 'string' } }, migrateUsage);
  if (help) {
    process.stdout.write(`${migrateUsage}\n`);
    return;
  }
  const settings = loadSettings({ configPath: values.config, dataDirectory: values['data-dir'] }, environment);
  if (settings.store.type === 'sqlite') openDataDirectory(settings);
  const where = describeStoreLocation(settings.store);
  let applied: string[];
  try {
    applied = await applyMigrations(settings.store);
    // The store's own start-up work beyond the schema (PostgreSQL's trace partitions of the days ahead), as `serve` does it.
    const store = await openStore(settings.store);
    try {
      await store.migrate();
    } finally {
      await store.close();
    }
  } catch (error) {
    throw new CliError(`cannot migrate the store ${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const count = `${applied.length} migration${applied.length === 1 ? '' : 's'}`;
  process.stdout.write(
    applied.length === 0
      ? `applied 0 migrations to ${where}: it was up to date\n`
      : `applied ${count} to ${where} (${applied.join(', ')})\n`,
  );
}

/** The ids of the migrations this run applied (none when another run or a start had applied them). */
async function applyMigrations(location: StoreLocation): Promise<string[]> {
  if (location.type === 'postgres') {
    const database = createPostgresDatabase({ url: location.url, poolSize: 1, schema: 'public' });
    try {
      return await applyPostgresMigrations(database);
    } finally {
      await database.close();
    }
  }
  if (location.path !== ':memory:') mkdirSync(dirname(location.path), { recursive: true });
  const database = new Database(location.path);
  try {
    // As the store opens it: another process migrating holds the write lock for a moment.
    database.pragma('busy_timeout = 5000');
    return applySqliteMigrations(database);
  } finally {
    database.close();
  }
}
