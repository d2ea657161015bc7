/**
 * `taskgate migrate`: applies the store's migrations, says which store (its
 * password hidden) and how many it applied, and exits 0; again, or twice at
 * once, each migration is applied once. A `serve` on the migrated store then
 * has nothing left to apply.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { describeStoreLocation } from '../src/store/open-store.js';
import { migrations as postgresMigrations } from '../src/store/postgres/postgres-migrations.js';
import { migrations as sqliteMigrations } from '../src/store/sqlite/sqlite-migrations.js';
import { postgres, requireServiceOrSkip } from './helpers/machine-requirements.js';
import { postgresDatabases, queryPostgres } from './helpers/postgres-schemas.js';
import { CLI, runTaskgate, serveTaskgate, type CommandResult } from './helpers/taskgate-process.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

const databaseUrl = await requireServiceOrSkip(postgres, 'test/migrate.test.ts', 'Its PostgreSQL tests are skipped.');

/** The built CLI in `cwd`, asynchronously, so two runs can overlap. */
function runInDirectory(args: string[], environment: Record<string, string>, cwd: string): Promise<CommandResult> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
}

/** How many migrations a run says it applied. */
function appliedCount(stdout: string): number {
  const match = /^applied (\d+) migrations? to /m.exec(stdout);
  expect(match, stdout).not.toBeNull();
  return Number(match?.[1]);
}

describe('taskgate migrate on SQLite', () => {
  it('migrates a fresh data directory, says where and how many, and has nothing left to do the second time', () => {
    const directory = join(temporaryDirectory('taskgate-migrate-'), 'data');
    const first = runTaskgate(['migrate', '--data-dir', directory]);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toContain(`taskgate: data directory ${directory} (--data-dir)`);
    const path = join(directory, 'taskgate.db');
    expect(first.stdout).toBe(
      `applied ${sqliteMigrations.length} migrations to ${path} (${sqliteMigrations.map((migration) => migration.id).join(', ')})\n`,
    );

    const database = new Database(path, { readonly: true });
    const recorded = database.prepare<[], string>('SELECT id FROM schema_migrations ORDER BY id').pluck().all();
    database.close();
    expect(recorded).toEqual(sqliteMigrations.map((migration) => migration.id));

    const second = runTaskgate(['migrate', '--data-dir', directory]);
    expect(second.status).toBe(0);
    expect(second.stdout).toBe(`applied 0 migrations to ${path}: it was up to date\n`);
  });

  it("refuses a data directory that is not taskgate's, and shows its help", () => {
    const help = runTaskgate(['migrate', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: taskgate migrate/);
    expect(runTaskgate(['--help']).stdout).toMatch(/migrate +bring the store's schema up to date/);
    const refused = runTaskgate(['migrate', '--data-dir', process.cwd()]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('is not a taskgate data directory');
  });
});

describe.skipIf(databaseUrl === null)('taskgate migrate on PostgreSQL, with only TASKGATE_DATABASE_URL set', () => {
  const databases = postgresDatabases(databaseUrl as string, 'tg_migrate');
  /** A new empty database, dropped after the file's tests; its URL. */
  async function freshDatabase(): Promise<string> {
    const url = new URL(await databases.fresh());
    // A password to hide even where the test database needs none (trust authentication ignores it).
    if (url.password === '') url.password = 'not-for-the-log';
    return url.toString();
  }
  const recordedMigrations = (url: string) =>
    queryPostgres<{ id: string; applied_at: string }>(url, 'SELECT id, applied_at FROM schema_migrations ORDER BY id');

  it('migrates, then has nothing left to do; a serve on it then starts without migrating anything new', async () => {
    const url = await freshDatabase();
    // No config, no data directory: the working directory gets nothing either.
    const cwd = temporaryDirectory('taskgate-migrate-pg-');
    const environment = { TASKGATE_DATABASE_URL: url };
    const first = await runInDirectory(['migrate'], environment, cwd);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain(`to ${describeStoreLocation({ type: 'postgres', url, poolSize: 10 })} (`);
    expect(first.stdout).toContain(':***@');
    expect(first.stdout + first.stderr).not.toContain(new URL(url).password);
    expect(appliedCount(first.stdout)).toBe(postgresMigrations.length);
    expect(existsSync(join(cwd, '.taskgate'))).toBe(false);

    const second = await runInDirectory(['migrate'], environment, cwd);
    expect(second.status).toBe(0);
    expect(appliedCount(second.stdout)).toBe(0);
    const migrated = await recordedMigrations(url);
    expect(migrated.map((row) => row.id)).toEqual(postgresMigrations.map((migration) => migration.id));

    const server = await serveTaskgate(['--data-dir', join(cwd, 'data')], {
      ...environment,
      TASKGATE_ADMIN_KEY: 'tg_live_migrate_test_admin_key_0123456789',
    });
    try {
      expect((await fetch(server.baseUrl.replace(/\/v1$/, '/healthz'))).status).toBe(200);
      // The same migrations, recorded at the same moments: the start applied none.
      expect(await recordedMigrations(url)).toEqual(migrated);
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });

  it('run twice at once, applies each migration once', async () => {
    const url = await freshDatabase();
    const cwd = temporaryDirectory('taskgate-migrate-pg-');
    const runs = await Promise.all([1, 2].map(() => runInDirectory(['migrate'], { TASKGATE_DATABASE_URL: url }, cwd)));
    for (const run of runs) expect(run.status, run.stderr).toBe(0);
    const counts = runs.map((run) => appliedCount(run.stdout)).sort();
    expect(counts).toEqual([0, postgresMigrations.length]);
    expect((await recordedMigrations(url)).map((row) => row.id)).toEqual(postgresMigrations.map((migration) => migration.id));
  });
});
