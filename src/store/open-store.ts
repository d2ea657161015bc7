/**
 * The store the settings name: SQLite (its folder created if need be), or
 * PostgreSQL; either publishes its changes to the other processes on it
 * (`change-notices.ts`). The PostgreSQL back end (and `pg`) is loaded only
 * when named: on SQLite it would add some 5 MB to every process for nothing.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createSqliteStore } from './sqlite/sqlite-store.js';
import { withChangeNotices } from './change-notices.js';
import type { Store } from './store.js';

/**
 * Where the store lives: a SQLite file (or `:memory:`), or a PostgreSQL URL
 * (`postgres://user:password@host:port/database`) with its pool's size. The
 * config layer makes one from the settings; the store never reads config.
 */
export type StoreLocation = { type: 'sqlite'; path: string } | { type: 'postgres'; url: string; poolSize: number };

export async function openStore(location: StoreLocation): Promise<Store> {
  return withChangeNotices(await openBackEnd(location));
}

async function openBackEnd(location: StoreLocation): Promise<Store> {
  if (location.type === 'postgres') {
    const { createPostgresStore } = await import('./postgres/postgres-store.js');
    return createPostgresStore({ url: location.url, poolSize: location.poolSize });
  }
  if (location.path !== ':memory:') mkdirSync(dirname(location.path), { recursive: true });
  return createSqliteStore({ path: location.path });
}

/** The store for a log line or an error message: the SQLite path, or the PostgreSQL URL without its password. */
export function describeStoreLocation(location: StoreLocation): string {
  return location.type === 'sqlite' ? location.path : location.url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}
