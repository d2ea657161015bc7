/** The store the settings name (SQLite for now), its folder created if need be. */
import { mkdirSync } from 'node:fs';
import type { Settings } from '../config/load-config.js';
import { createSqliteStore } from './sqlite-store.js';
import type { Store } from './store.js';

export function openStore(settings: Settings): Store {
  if (settings.sqlitePath !== ':memory:') mkdirSync(settings.dataDirectory, { recursive: true });
  return createSqliteStore({ path: settings.sqlitePath });
}
