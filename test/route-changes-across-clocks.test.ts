/**
 * Route changes reach every process whatever the writers' clocks: three
 * processes on one store (one SQLite file; one PostgreSQL schema), two that
 * write routes with clocks 5 s ahead and 5 s behind, one that only serves and
 * follows the change feed as `follow-changes.ts` makes it. Every pin, unpin,
 * certification and demotion must reach the follower's route table, in the
 * order the store committed them.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../src/log/logger.js';
import { drawRoute } from '../src/routing/route-reason.js';
import { createRouteTable, type RouteTable } from '../src/routing/route-table.js';
import { withChangeNotices } from '../src/store/change-notices.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import type { RouteChange, RouteRecord } from '../src/store/routing-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { postgres, requireServiceOrSkip } from './helpers/machine-requirements.js';
import { postgresSchemas } from './helpers/postgres-schemas.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

const postgresUrl = await requireServiceOrSkip(postgres, 'test/route-changes-across-clocks.test.ts', 'Its PostgreSQL tests are skipped.');
const schemas = postgresUrl === null ? null : postgresSchemas(postgresUrl, 'tg_clocks');
const directory = temporaryDirectory('taskgate-clocks-');
let files = 0;

/** Three stores on one fresh database, as three processes open it (`open-store.ts`: with change notices). */
const backEnds: Array<{ name: string; skip: boolean; open: () => Array<() => Store> }> = [
  {
    name: 'SQLite file',
    skip: false,
    open() {
      const path = join(directory, `store-${(files += 1)}.db`);
      return [1, 2, 3].map(() => () => withChangeNotices(createSqliteStore({ path })));
    },
  },
  {
    name: 'PostgreSQL',
    skip: postgresUrl === null,
    open() {
      const schema = schemas?.fresh() ?? '';
      return [1, 2, 3].map(() => () => withChangeNotices(createPostgresStore({ url: postgresUrl ?? '', schema, poolSize: 2 })));
    },
  },
];

const scope = { accountId: 'acct-1', project: 'shop', workload: 'summarise' };

/**
 * The model a call asking for `big` goes to in a process: its table's route,
 * drawn as the chat handler draws it (route-reason.ts `drawRoute`; these
 * routes have no split, so the draw does not matter).
 */
function servedModel(process: Process): string {
  return drawRoute(process.routes.route(scope, 'big'), 'big', () => 0.5).model;
}

/** A process: its store, its route table, and its clock. */
interface Process {
  store: Store;
  routes: RouteTable;
  now: () => number;
}

describe.each(backEnds)('route changes across processes whose clocks disagree: $name', ({ skip, open }) => {
  let ahead: Process;
  let behind: Process;
  let follower: Process;
  let stops: Array<() => void> = [];

  beforeEach(async () => {
    if (skip) return;
    const openers = open();
    const processes: Process[] = [];
    for (const [index, offset] of [+5_000, -5_000, 0].entries()) {
      const store = (openers[index] as () => Store)();
      await store.migrate();
      const now = () => Date.now() + offset;
      const routes = createRouteTable({ routing: store.routing, logger: silentLogger, now, pollIntervalMs: 3_600_000 });
      await routes.load();
      // As follow-changes.ts: a route notice from any process makes the table read what changed.
      stops.push(store.changes.subscribe((change) => void (change.kind === 'route' ? routes.refresh() : undefined)));
      processes.push({ store, routes, now });
    }
    [ahead, behind, follower] = processes as [Process, Process, Process];
  });

  afterEach(async () => {
    for (const stop of stops) stop();
    stops = [];
    for (const process of [ahead, behind, follower]) {
      await process?.routes.close();
      await process?.store.close();
    }
  });

  /** How a process changes a route (routing-handlers.ts, route-changes.ts): the current route, changed, stamped with its clock, stored with its history, applied. */
  async function change(process: Process, fields: Partial<RouteRecord>, reason: RouteChange['reason']): Promise<RouteRecord> {
    const current = process.routes.route(scope, 'big') ?? {
      scope,
      requestedModel: 'big',
      servedModel: 'big',
      pinnedModel: null,
      certificate: null,
      cooldowns: {},
      fallbacks: [],
      split: null,
      updatedAt: 0,
    };
    const next = { ...current, ...fields, updatedAt: process.now() };
    const from = current.pinnedModel ?? current.servedModel;
    const to = next.pinnedModel ?? next.servedModel;
    await process.store.routing.saveRoute(next, {
      requestedModel: 'big',
      fromModel: from,
      toModel: to,
      reason,
      certificate: next.certificate,
      detail: null,
      at: next.updatedAt,
    });
    process.routes.apply(next);
    return next;
  }

  /** Every process serves `expected` for the route within a few seconds (the change feed, then one read). */
  async function everyoneServes(expected: string, written: RouteRecord): Promise<void> {
    await vi.waitFor(
      () => {
        for (const process of [ahead, behind, follower]) {
          expect(servedModel(process)).toBe(expected);
          expect(process.routes.route(scope, 'big')).toEqual(written);
        }
      },
      { timeout: 5_000, interval: 50 },
    );
  }

  it.skipIf(skip)('every pin, unpin, certification and demotion reaches every process, the follower included', async () => {
    const certificate = {
      model: 'small',
      evaluated: 200,
      passed: 198,
      lower: 0.96,
      passRate: 0.95,
      confidence: 0.95,
      contractVersion: 1,
      at: 0,
    };
    // The process ahead certifies a cheaper model; the one behind (by its clock, 10 s earlier) pins the requested one.
    await everyoneServes('small', await change(ahead, { servedModel: 'small', certificate }, 'certified'));
    await everyoneServes('big', await change(behind, { pinnedModel: 'big' }, 'pinned'));
    // The process ahead unpins; the one behind demotes the cheaper model: each later than the last, earlier by the other's clock.
    await everyoneServes('small', await change(ahead, { pinnedModel: null }, 'unpinned'));
    await everyoneServes(
      'big',
      await change(behind, { servedModel: 'big', certificate: null, cooldowns: { small: Date.now() + 60_000 } }, 'demoted'),
    );
    // A pin and an unpin in quick succession, from both: the last committed wins everywhere.
    await change(ahead, { pinnedModel: 'mid' }, 'pinned');
    await everyoneServes('big', await change(behind, { pinnedModel: null }, 'unpinned'));
    const history = await follower.store.routing.listRouteChanges(scope, 10);
    expect(history.map((entry) => entry.reason)).toEqual(['unpinned', 'pinned', 'demoted', 'unpinned', 'pinned', 'certified']);
  });

  it.skipIf(skip)('a follower that was away reads every change it missed, once back', async () => {
    await everyoneServes('mid', await change(ahead, { pinnedModel: 'mid' }, 'pinned'));
    // The follower hears nothing meanwhile (its notices stopped): the next read catches up, though
    // every write it missed is stamped 10 s before the one it holds.
    stops[2]?.();
    await change(behind, { servedModel: 'small' }, 'certified');
    const last = await change(behind, { pinnedModel: null }, 'unpinned');
    expect(servedModel(follower)).toBe('mid');
    await follower.routes.refresh();
    expect(follower.routes.route(scope, 'big')).toEqual(last);
    expect(servedModel(follower)).toBe('small');
  });
});
