/**
 * The route table against a real SQLite store: which write wins is the
 * store's order (revisions), never a process's clock, also when a write of
 * this process and a read of the store cross.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log/logger.js';
import type { RouteRecord, RoutingStore } from '../store/routing-store.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import { drawRoute } from './route-reason.js';
import { createRouteTable, type RouteTable } from './route-table.js';

const scope = { accountId: 'acct-1', project: 'shop', workload: 'sums' };

function route(fields: Partial<RouteRecord>, updatedAt: number): RouteRecord {
  return {
    scope,
    requestedModel: 'big',
    servedModel: 'big',
    pinnedModel: null,
    certificate: null,
    cooldowns: {},
    fallbacks: [],
    split: null,
    ...fields,
    updatedAt,
  };
}

/**
 * The store's routing, but a read holds its answer (read from the store when
 * asked, as a query's snapshot is) until the test lets it go, or fails once.
 */
function heldReads(routing: RoutingStore) {
  let hold: Promise<void> | null = null;
  let release: () => void = () => undefined;
  let failNext = false;
  const held: RoutingStore = {
    ...routing,
    async listRoutesChangedAfter(revision) {
      if (failNext) {
        failNext = false;
        throw new Error('store away');
      }
      const rows = await routing.listRoutesChangedAfter(revision);
      if (hold !== null) await hold;
      return rows;
    },
  };
  return {
    routing: held,
    holdNextReads() {
      hold = new Promise<void>((resolve) => (release = resolve));
    },
    releaseReads() {
      hold = null;
      release();
    },
    failNextRead() {
      failNext = true;
    },
  };
}

let store: Store;
let reads: ReturnType<typeof heldReads>;
let table: RouteTable;
const now = Date.now();

beforeEach(async () => {
  store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  reads = heldReads(store.routing);
  table = createRouteTable({ routing: reads.routing, logger: silentLogger, pollIntervalMs: 3_600_000 });
  await store.routing.saveRoute(route({}, now), null);
  await table.load();
});

afterEach(async () => {
  await table.close();
  await store.close();
});

/**
 * The model a call asking for `big` goes to: the table's route, drawn as the
 * chat handler draws it (route-reason.ts `drawRoute`), on a fixed `draw` in
 * [0, 1) in place of `Math.random()` (a route without a split ignores it).
 */
function servedModel(draw = 0.5): string {
  return drawRoute(table.route(scope, 'big'), 'big', () => draw).model;
}

/** What this process does on a change it makes (routing-handlers.ts, route-changes.ts): store, then apply. */
async function writeHere(written: RouteRecord): Promise<void> {
  await store.routing.saveRoute(written, null);
  table.apply(written);
}

describe('route table', () => {
  it('takes a write of a process whose clock is 5 s ahead, then one 5 s behind, then its own', async () => {
    await store.routing.saveRoute(route({ pinnedModel: 'mid' }, now + 5_000), null);
    await table.refresh();
    expect(servedModel()).toBe('mid');
    await store.routing.saveRoute(route({ pinnedModel: null, servedModel: 'small' }, now - 5_000), null);
    await table.refresh();
    expect(servedModel()).toBe('small');
    // Its own write, on a clock between the two: applied at once, and the next read keeps it.
    await writeHere(route({ servedModel: 'big', cooldowns: { small: now + 60_000 } }, now));
    expect(servedModel()).toBe('big');
    await table.refresh();
    expect(table.route(scope, 'big')).toEqual(route({ servedModel: 'big', cooldowns: { small: now + 60_000 } }, now));
  });

  it('a read that began before a write of this process does not undo it', async () => {
    await store.routing.saveRoute(route({ servedModel: 'small' }, now + 1), null); // another process
    reads.holdNextReads();
    const reading = table.refresh(); // its answer (small) is read now and held
    await writeHere(route({ pinnedModel: 'mid', servedModel: 'small' }, now + 2)); // a person pins here meanwhile
    reads.releaseReads();
    await reading;
    expect(servedModel()).toBe('mid');
    expect(table.route(scope, 'big')?.pinnedModel).toBe('mid');
  });

  it('a write of this process applied after a read that already brought a later write of another is read again', async () => {
    // This process stores a pin; another process unpins right after; a read brings the unpin
    // before this process gets to apply its pin (its commit's answer came in after the read's).
    await store.routing.saveRoute(route({ pinnedModel: 'mid' }, now + 1), null);
    await store.routing.saveRoute(route({ pinnedModel: null }, now - 4_000), null);
    await table.refresh();
    expect(servedModel()).toBe('big');
    table.apply(route({ pinnedModel: 'mid' }, now + 1));
    expect(servedModel()).toBe('mid');
    await table.refresh();
    // The store's order says the unpin came last.
    expect(servedModel()).toBe('big');
  });

  it('keeps an edit of the route it holds (same updatedAt) until a later write is read', async () => {
    await store.routing.saveRoute(route({ servedModel: 'small' }, now + 1), null);
    await table.refresh();
    const held = table.route(scope, 'big') as RouteRecord;
    table.apply({ ...held, cooldowns: { small: now + 60_000 } });
    await store.routing.saveRoute({ ...route({}, now), requestedModel: 'other' }, null); // an unrelated write
    await table.refresh();
    expect(table.route(scope, 'big')?.cooldowns).toEqual({ small: now + 60_000 });
    await store.routing.saveRoute(route({ servedModel: 'big' }, now - 9_000), null);
    await table.refresh();
    expect(table.route(scope, 'big')).toEqual(route({ servedModel: 'big' }, now - 9_000));
  });

  it('a split read from the store is drawn call by call, and a pin over it serves every call', async () => {
    const split = {
      shares: [{ model: 'small', share: 0.3, diffLower: -0.01, samples: 200 }],
      requestedLower: 0.8,
      qualityBar: 0.95,
      confidence: 0.95,
      contractVersion: 1,
      at: now,
    };
    await store.routing.saveRoute(route({ split }, now + 1), null);
    await table.refresh();
    expect(table.route(scope, 'big')?.split).toEqual(split);
    // 30% of the calls to small (draws below 0.3), the rest to the serving model.
    expect(servedModel(0)).toBe('small');
    expect(servedModel(0.29)).toBe('small');
    expect(servedModel(0.3)).toBe('big');
    expect(servedModel(0.99)).toBe('big');
    await writeHere(route({ split, pinnedModel: 'mid' }, now + 2));
    for (const draw of [0, 0.29, 0.99]) expect(servedModel(draw)).toBe('mid');
  });

  it('a read that fails is made again from where the last one stopped', async () => {
    await store.routing.saveRoute(route({ pinnedModel: 'mid' }, now - 5_000), null);
    reads.failNextRead();
    await table.refresh();
    expect(servedModel()).toBe('big');
    await table.refresh();
    expect(servedModel()).toBe('mid');
  });
});
