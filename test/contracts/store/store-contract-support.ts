/**
 * What the Store's domain suites share: how a back end hands them stores,
 * the order ties sort in, and reading every page of a list.
 */
import { afterEach, beforeEach } from 'vitest';
import type { Page, PageRequest, Store } from '../../../src/store/store.js';

/** A store on an empty database; the suite migrates it. */
export type OpenStore = () => Promise<Store>;

/** Two stores on one fresh, migrated database, as two processes would have. */
export type OpenSharedStores = () => Promise<[Store, Store]>;

/** Code-unit order, as JavaScript sorts strings and as the back ends must order ties. */
export function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Follows nextCursor to the end; returns each page's items. */
export async function collectPages<T>(fetch: (page: PageRequest) => Promise<Page<T>>, limit: number): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | null = null;
  do {
    const page: Page<T> = await fetch({ limit, cursor });
    pages.push(page.items);
    cursor = page.nextCursor;
    if (pages.length > 1_000) throw new Error('pagination does not end');
  } while (cursor !== null);
  return pages;
}

/** Gives each test of the suite a store on an empty, migrated database (`use` receives it), closed after the test. */
export function eachTestOnAFreshStore(open: OpenStore, use: (store: Store) => void): void {
  let current: Store | undefined;
  beforeEach(async () => {
    current = await open();
    await current.migrate();
    use(current);
  });
  afterEach(async () => {
    await current?.close();
  });
}

/** Gives each test two stores on one fresh database, as two processes have (`use` receives them), closed after the test. */
export function eachTestOnSharedStores(openShared: OpenSharedStores | undefined, use: (stores: [Store, Store]) => void): void {
  let current: [Store, Store] | undefined;
  beforeEach(async () => {
    if (openShared === undefined) throw new Error('this back end has no shared stores: skip the suite');
    current = await openShared();
    use(current);
  });
  afterEach(async () => {
    await current?.[0].close();
    await current?.[1].close();
  });
}
