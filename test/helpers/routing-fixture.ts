/**
 * What unit tests of the routing views share: a catalog of models priced in
 * steps on one engine that is never called, and a fresh in-memory store per
 * test.
 */
import { afterEach, beforeEach } from 'vitest';
import { createCatalog, type Catalog } from '../../src/catalog/catalog.js';
import { parseConfig } from '../../src/config/load-config.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';

/** Models named by USD per million tokens (input and output alike), context 8,192, on an engine nothing listens on. */
export function pricedCatalog(prices: Record<string, number>): Catalog {
  const models = Object.entries(prices).map(
    ([id, price]) => `  - { id: ${id}, served_by: [{ engine: e }], price: { input: ${price}, output: ${price} }, context_window: 8192 }`,
  );
  return createCatalog(
    parseConfig(`engines: [{ id: e, type: openai, base_url: "http://127.0.0.1:1/v1" }]\nmodels:\n${models.join('\n')}\n`, {}).models,
  );
}

/** A migrated in-memory SQLite store for each test of the file: read it through the getter. */
export function useMemoryStore(): () => Store {
  let store: Store | undefined;
  beforeEach(async () => {
    store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
  });
  afterEach(async () => {
    await store?.close();
  });
  return () => {
    if (store === undefined) throw new Error('useMemoryStore: the store exists only inside a test');
    return store;
  };
}
