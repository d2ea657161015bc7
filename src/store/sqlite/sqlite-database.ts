/**
 * The SQLite file every SQLite part shares, through better-sqlite3, with the
 * settings a taskgate process needs on it. The contract is async for
 * PostgreSQL's sake; here every method does its work synchronously and
 * returns a settled promise.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type SqliteDatabase = Database.Database;
export type SqliteStatement<Parameters extends unknown[], Result = unknown> = Database.Statement<Parameters, Result>;

/** A file (its folder made if need be), or `:memory:` / `''` for a database of this connection alone. */
export function openSqliteDatabase(path: string): SqliteDatabase {
  const memory = path === ':memory:' || path === '';
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  const database = new Database(path);
  // busy_timeout first: switching to WAL needs a lock another process may hold.
  database.pragma('busy_timeout = 5000');
  // 16 KiB pages for a new database (an existing one keeps its own): a trace with its bodies
  // (1-3 KB) then rarely spills onto an overflow page, and a batch commits with a quarter of
  // the page writes: some 20 % less CPU per stored trace than the default 4 KiB.
  if (!memory) database.pragma('page_size = 16384');
  // A checkpoint every 4 MiB of WAL whatever the page size (SQLite counts 1,000 pages): with 16 KiB
  // pages the default would copy 16 MiB at once, on the thread that commits.
  const pageBytes = Number(database.pragma('page_size', { simple: true }));
  if (!memory && pageBytes > 0) database.pragma(`wal_autocheckpoint = ${Math.max(1, Math.round(4_194_304 / pageBytes))}`);
  // A 4 MiB page cache, not better-sqlite3's 16 MiB: storing traces touches a few dozen pages
  // (the table's and each index's newest), and reads page through the OS's cache anyway. The
  // larger cache only filled with pages written once, 14 MB of the process's resident set.
  database.pragma('cache_size = -4096');
  // WAL lets readers (the API, the dashboard) run while the trace writer commits.
  if (!memory) database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  return database;
}

/**
 * `prepare`'s statements, made on the first call and kept: a part is built
 * with the store, before migrate() has made the tables its statements name.
 */
export function preparedOnFirstUse<Statements>(prepare: () => Statements): () => Statements {
  let statements: Statements | null = null;
  return () => (statements ??= prepare());
}
