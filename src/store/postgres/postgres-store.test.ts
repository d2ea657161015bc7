import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { capturingLogger } from '../../../test/helpers/capturing-logger.js';
import { postgres, requireServiceOrSkip } from '../../../test/helpers/machine-requirements.js';
import { postgresSchemas } from '../../../test/helpers/postgres-schemas.js';
import { startTcpProxy, type TcpProxy } from '../../../test/helpers/tcp-proxy.js';
import type { Change } from '../change-feed.js';
import type { Trace } from '../store.js';
import { describeStoreContracts } from '../../../test/contracts/store/store-contracts.js';
import { isStoreUnavailable } from '../store-errors.js';
import { traceFixture } from '../../../test/contracts/store/trace-fixture.js';
import { createTraceWriter } from '../trace-writer.js';
import type { RouteRecord } from '../routing-store.js';
import { createPostgresDatabase } from './postgres-database.js';
import { applyMigrations, migrations } from './postgres-migrations.js';
import { DAY_MS, partitionName } from './postgres-partitions.js';
import { createPostgresStore, type PostgresStore } from './postgres-store.js';
import { expectUpgradedRoutingRows } from '../../../test/helpers/upgraded-routing-rows.js';
import { expectUpgradedBudgetRows, oldBudgetRows } from '../../../test/helpers/upgraded-budget-rows.js';

const found = await requireServiceOrSkip(postgres, 'src/store/postgres/postgres-store.test.ts');
/** Only used when PostgreSQL was found: the suite below is skipped otherwise. */
const url = found ?? '';

describe.skipIf(found === null)('PostgreSQL back end', () => {
  const schemas = postgresSchemas(url, 'tg_contract');
  const open = (schema = schemas.fresh(), storeUrl = url) => createPostgresStore({ url: storeUrl, schema, poolSize: 4 });

  describeStoreContracts(
    'postgres',
    async () => open(),
    async () => {
      const schema = schemas.fresh();
      const first = open(schema);
      const second = open(schema);
      // Every process migrates as it starts; migrating is also when a store starts hearing changes.
      await Promise.all([first.migrate(), second.migrate()]);
      return [first, second];
    },
  );

  describe('postgres store', () => {
    it('migrates once when several processes start at once', async () => {
      const schema = schemas.fresh();
      const stores = Array.from({ length: 4 }, () => open(schema));
      await Promise.all(stores.map((store) => store.migrate()));
      await Promise.all(stores.map((store) => store.migrate()));
      await Promise.all(stores.map((store) => store.close()));
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const applied = await client.query<{ id: string }>(`SELECT id FROM ${schema}.schema_migrations ORDER BY id`);
      await client.end();
      expect(applied.rows.map((row) => row.id)).toEqual(migrations.map((migration) => migration.id));
    });

    it('gives the routes stored before revisions existed one each, and every later write a higher one', async () => {
      const schema = schemas.fresh();
      const store = open(schema);
      // A database of the release before: routes, no revisions.
      const earlier = createPostgresDatabase({ url, schema, poolSize: 1 });
      await applyMigrations(
        earlier,
        migrations.filter((migration) => migration.id < '0007_revisions'),
      );
      await earlier.execute(
        `INSERT INTO routes (account_id, project, workload, requested_model, served_model, pinned_model, certificate, cooldowns, updated_at)
         VALUES ('acct-1', 'shop', 'main', 'big', 'small', NULL, NULL, '{}', 9000), ('acct-1', 'shop', 'main', 'large', 'large', NULL, NULL, '{}', 1000)`,
      );
      await earlier.close();
      await store.migrate();
      const stored = await store.routing.listRoutesChangedAfter(0);
      expect(stored.map((revised) => revised.record.requestedModel).sort()).toEqual(['big', 'large']);
      expect(new Set(stored.map((revised) => revised.revision)).size).toBe(2);
      const highest = stored.at(-1)?.revision ?? 0;
      const big = stored.find((revised) => revised.record.requestedModel === 'big')?.record as RouteRecord;
      await store.routing.saveRoute({ ...big, pinnedModel: 'big', updatedAt: 1 }, null);
      const [after, ...more] = await store.routing.listRoutesChangedAfter(highest);
      expect(more).toEqual([]);
      expect(after?.record).toEqual({ ...big, pinnedModel: 'big', updatedAt: 1 });
      expect(after?.revision).toBeGreaterThan(highest);
      await store.close();
    });

    it('reads the evidence, routes and traces of a database of the release before as having no paired counts, split or route reason', async () => {
      const schema = schemas.fresh();
      const store = open(schema);
      // A database of the release before, its call of today still in traces_default: the first
      // migrate makes today's partition and moves it there, the new columns with it.
      const earlier = createPostgresDatabase({ url, schema, poolSize: 1 });
      expect(
        await applyMigrations(
          earlier,
          migrations.filter((migration) => migration.id < '0009_paired_evidence_route_splits'),
        ),
      ).not.toContain('0009_paired_evidence_route_splits');
      const now = Date.now();
      await earlier.execute(
        `INSERT INTO route_evidence (account_id, project, workload, requested_model, candidate_model, contract_version,
           evaluated, passed, errors, prompt_tokens, completion_tokens, cost_usd, latency_ms_total, updated_at)
         VALUES ('acct-1', 'shop', 'main', 'big', 'small', 1, 40, 38, 1, 4000, 800, 0.04, 9000, 1000)`,
      );
      await earlier.execute(
        `INSERT INTO routes (account_id, project, workload, requested_model, served_model, pinned_model, certificate, cooldowns, updated_at)
         VALUES ('acct-1', 'shop', 'main', 'big', 'small', NULL, NULL, '{}', 1000)`,
      );
      await earlier.execute(
        `INSERT INTO traces (request_id, account_id, key_id, environment, status, http_status, prompt_tokens, completion_tokens, cost_usd, latency_ms, stream, started_at, attempts)
         VALUES ('req-old', 'acct-1', 'key-1', 'production', 'ok', 200, 1, 1, 0, 5, false, $1, '[]')`,
        [now],
      );
      await earlier.close();
      await store.migrate();

      await expectUpgradedRoutingRows(store);
      expect(await store.traces.get('acct-1', 'req-old')).toMatchObject({ attempts: [] });
      const routed = traceFixture({ requestId: 'req-new', accountId: 'acct-1', startedAt: now, routeReason: 'split', routeShare: 0.25 });
      expect(await store.traces.insertBatch([routed])).toBe(1);
      expect(await store.traces.get('acct-1', 'req-new')).toEqual(routed);
      // Both in today's partition, none left in the default one.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const homes = await client.query<{ home: string; request_id: string }>(
        `SELECT tableoid::regclass::text AS home, request_id FROM ${schema}.traces ORDER BY request_id`,
      );
      await client.end();
      const today = partitionName(Math.floor(now / DAY_MS) * DAY_MS);
      expect(homes.rows.map((row) => [row.request_id, row.home.replace(`${schema}.`, '')])).toEqual([
        ['req-new', today],
        ['req-old', today],
      ]);
      await store.close();
    });

    it('reads the keys, traces and rollups of a database of the release before as without spend caps or cache hits, and gains the budget tables', async () => {
      const schema = schemas.fresh();
      const earlier = createPostgresDatabase({ url, schema, poolSize: 1 });
      expect(
        await applyMigrations(
          earlier,
          migrations.filter((migration) => migration.id < '0010_budgets_cache'),
        ),
      ).not.toContain('0010_budgets_cache');
      const startedAt = Date.UTC(2024, 0, 10, 12, 30, 15);
      for (const statement of oldBudgetRows(startedAt, 'false')) await earlier.execute(statement);
      expect(await applyMigrations(earlier)).toEqual(['0010_budgets_cache']);
      await earlier.close();

      const store = open(schema);
      await store.migrate();
      await expectUpgradedBudgetRows(store, startedAt);
      await store.close();
    });

    it('a route write that commits late is not passed over by a reader that polled meanwhile', async () => {
      const schema = schemas.fresh();
      const [writer, reader] = [open(schema), open(schema)];
      await Promise.all([writer.migrate(), reader.migrate()]);
      const scope = { accountId: 'acct-1', project: 'shop', workload: 'main' };
      const route = (requestedModel: string, servedModel: string) => ({
        scope,
        requestedModel,
        servedModel,
        pinnedModel: null,
        certificate: null,
        cooldowns: {},
        fallbacks: [],
        split: null,
        updatedAt: 1_000,
      });
      await writer.routing.saveRoute(route('a', 'a'), null);
      const last = (await reader.routing.listRoutesChangedAfter(0)).at(-1)?.revision ?? 0;

      // A slow writer (another process, an operator's psql) writes route a and holds its commit…
      const slow = new pg.Client({ connectionString: url });
      await slow.connect();
      await slow.query(`SET search_path = ${schema}`);
      await slow.query('BEGIN');
      await slow.query("UPDATE routes SET served_model = 'slow' WHERE requested_model = 'a'");
      // …while another writes route b, and a reader polls. Had b taken a revision above a's and
      // committed first, the reader would move past a's revision before a commits, and never see a.
      const fast = writer.routing.saveRoute(route('b', 'fast'), null);
      await sleep(200);
      const during = await reader.routing.listRoutesChangedAfter(last);
      await slow.query('COMMIT');
      await slow.end();
      await fast;
      const after = await reader.routing.listRoutesChangedAfter(during.at(-1)?.revision ?? last);
      expect([...during, ...after].map((revised) => [revised.record.requestedModel, revised.record.servedModel])).toEqual([
        ['a', 'slow'],
        ['b', 'fast'],
      ]);
      await Promise.all([writer.close(), reader.close()]);
    });

    it('ping fails once the store is closed', async () => {
      const store = open();
      await store.migrate();
      await store.ping();
      await store.close();
      await expect(store.ping()).rejects.toThrow();
    });
  });

  describe('postgres retention: whole days', () => {
    let store: PostgresStore;
    beforeEach(async () => {
      store = open();
      await store.migrate();
    });
    afterEach(async () => {
      await store.close();
    });

    it('drops the partitions of expired days, but not a day that still holds calls kept longer', async () => {
      const days = Array.from({ length: 5 }, (_, index) => Date.UTC(2024, 2, 1) + index * DAY_MS);
      const [day0, day1, day2, day3, day4] = days as [number, number, number, number, number];
      for (const day of days) expect(await store.partitions.create(day)).toBe(true);
      const cutoff = day3 + DAY_MS / 2;
      const shop = (name: string, startedAt: number) => traceAt(name, startedAt);
      const traces = [
        ...[day0, day1, day2].flatMap((day) => [1, 2, 3].map((hour) => shop(`shop-${day}-${hour}`, day + hour * 3_600_000))),
        shop('shop-day3-early', day3 + 3_600_000),
        shop('shop-day3-before-cutoff', cutoff - 1),
        shop('shop-day3-at-cutoff', cutoff),
        shop('shop-day3-late', cutoff + 3_600_000),
        shop('shop-today', Date.now()),
        traceAt('keep-day1', day1 + 10 * 3_600_000, { project: 'keep' }),
        ...[1, 2].map((hour) => traceAt(`blog-day4-${hour}`, day4 + hour * 3_600_000, { accountId: 'acct-2', project: 'blog' })),
      ];
      expect(await store.traces.insertBatch(traces)).toBe(traces.length);
      const policy = { bodies: 'all' as const, sampleRate: 1, bodiesTtlDays: null, updatedAt: 1 };
      await store.retention.put({ ...policy, accountId: 'acct-1', project: 'shop', tracesTtlDays: 7 });
      await store.retention.put({ ...policy, accountId: 'acct-1', project: 'keep', tracesTtlDays: 400 });
      const window = { since: day0, until: Date.now() + DAY_MS };
      const rollupsBefore = await Promise.all(['acct-1', 'acct-2'].map((account) => store.rollups.query(account, window)));
      const names = async () => (await store.partitions.list()).map((partition) => partition.name);

      // Days 0 and 2 hold only the project's calls: dropped at the first call, whatever the batch size.
      const first = await store.retention.pruneTraces({ accountId: 'acct-1', project: 'shop' }, cutoff, 2);
      expect(first).toBe(3 + 3 + 2);
      expect(await names()).not.toContain(partitionName(day0));
      expect(await names()).not.toContain(partitionName(day2));
      let total = first;
      for (let deleted = -1; deleted !== 0; total += deleted)
        deleted = await store.retention.pruneTraces({ accountId: 'acct-1', project: 'shop' }, cutoff, 2);
      expect(total).toBe(9 + 2);
      // Day 1 still holds the call of the project kept longer; day 3 straddles the cutoff.
      expect(await names()).toEqual(expect.arrayContaining([partitionName(day1), partitionName(day3), partitionName(day4)]));
      const remaining = async (accountId: string) =>
        (await store.traces.list(accountId, {}, { limit: 100 })).items.map((trace) => trace.requestId);
      expect(await remaining('acct-1')).toEqual(['shop-today', 'shop-day3-late', 'shop-day3-at-cutoff', 'keep-day1']);

      // Projects without a policy: day 4 is only theirs; days 1 and 3 hold calls of projects with one.
      expect(await store.retention.pruneTraces(null, day4 + DAY_MS, 100)).toBe(2);
      expect(await names()).not.toContain(partitionName(day4));
      expect(await names()).toEqual(expect.arrayContaining([partitionName(day1), partitionName(day3)]));
      expect(await remaining('acct-2')).toEqual([]);
      expect(await remaining('acct-1')).toEqual(['shop-today', 'shop-day3-late', 'shop-day3-at-cutoff', 'keep-day1']);

      // Once the longer-lived project's own time comes, its day goes too.
      expect(await store.retention.pruneTraces({ accountId: 'acct-1', project: 'keep' }, day1 + DAY_MS, 100)).toBe(1);
      expect(await names()).not.toContain(partitionName(day1));
      expect(await names()).toContain('traces_default');
      expect(await Promise.all(['acct-1', 'acct-2'].map((account) => store.rollups.query(account, window)))).toEqual(rollupsBefore);
    });
  });

  describe('postgres retention: a fleet pruning at once', () => {
    /** What the pruner's later passes delete (at most three): nothing once a pass has done it all. */
    async function nextPasses(store: PostgresStore, before: number): Promise<number> {
      let deleted = 0;
      for (let pass = 0; pass < 3; pass++) deleted += await store.retention.pruneTraces(null, before, 100);
      return deleted;
    }

    let first: PostgresStore;
    let second: PostgresStore;
    beforeEach(async () => {
      const schema = schemas.fresh();
      [first, second] = [open(schema), open(schema)];
      await Promise.all([first.migrate(), second.migrate()]);
    });
    afterEach(async () => {
      await Promise.all([first.close(), second.close()]);
    });

    it('two processes pruning the same days: one drops each day, the other finds it gone, neither fails', async () => {
      // Every process runs the pruner on the same timer: both list a day before either drops it.
      for (const [index, day] of [Date.UTC(2024, 2, 1), Date.UTC(2024, 2, 2), Date.UTC(2024, 2, 3)].entries()) {
        await first.partitions.create(day);
        const traces = Array.from({ length: 20 }, (_, call) => traceAt(`day-${index}-${call}`, day + call * 60_000));
        await first.traces.insertBatch(traces);
        const pruned = await Promise.all([
          first.retention.pruneTraces(null, day + DAY_MS, 5),
          second.retention.pruneTraces(null, day + DAY_MS, 5),
        ]);
        // A drop that lost a deadlock to the other process is left for the next pass, as the pruner's timer would.
        expect(pruned.reduce((sum, count) => sum + count, 0) + (await nextPasses(first, day + DAY_MS))).toBe(20);
        expect((await first.partitions.list()).map((partition) => partition.name)).not.toContain(partitionName(day));
        expect(await first.traces.count('acct-1', {})).toBe(0);
      }
      // Bodies pruned by one process while the other drops the day: whichever comes first, neither fails.
      const day = Date.UTC(2024, 2, 4);
      await first.partitions.create(day);
      await first.traces.insertBatch(Array.from({ length: 20 }, (_, call) => traceAt(`bodies-${call}`, day + call * 60_000)));
      const [bodies, deleted] = await Promise.all([
        second.retention.pruneBodies(null, day + DAY_MS, 100),
        first.retention.pruneTraces(null, day + DAY_MS, 100),
      ]);
      expect(deleted + (await nextPasses(first, day + DAY_MS))).toBe(20);
      expect([0, 20]).toContain(bodies);
      expect(await first.traces.count('acct-1', {})).toBe(0);
    });
  });

  describe('postgres going away', () => {
    let proxy: TcpProxy;
    let direct: PostgresStore;
    let proxied: PostgresStore;
    beforeEach(async () => {
      const target = new URL(url);
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const through = new URL(url);
      through.hostname = '127.0.0.1';
      through.port = String(proxy.port);
      const schema = schemas.fresh();
      direct = open(schema);
      await direct.migrate();
      proxied = open(schema, through.toString());
      await proxied.migrate();
    });
    afterEach(async () => {
      await proxied.close();
      await direct.close();
      await proxy.close();
    });

    it('fails fast with store-unavailable errors while cut off, and works again once back, change feed included', async () => {
      const heard: Change[] = [];
      proxied.changes.subscribe((change) => heard.push(change));
      expect(await proxied.traces.insertBatch([traceAt('before-cut', 1_000)])).toBe(1);

      await proxy.cut();
      expect(isStoreUnavailable(await rejectionWithin(proxied.ping()))).toBe(true);
      expect(isStoreUnavailable(await rejectionWithin(proxied.traces.insertBatch([traceAt('during-cut', 2_000)])))).toBe(true);
      expect(isStoreUnavailable(await rejectionWithin(proxied.traces.count('acct-1', {})))).toBe(true);

      await proxy.restore();
      // The same store, not reopened: its pool connects again on the next query.
      // The pool dropped its dead connections during the cut, so the very first query after it succeeds.
      await expect(proxied.ping()).resolves.toBeUndefined();
      expect(await proxied.traces.insertBatch([traceAt('after-cut', 3_000)])).toBe(1);
      expect((await direct.traces.list('acct-1', {}, { limit: 10 })).items.map((trace) => trace.requestId)).toEqual([
        'after-cut',
        'before-cut',
      ]);

      // Its change feed listens again after its backoff; what was published before that is missed (at most once).
      const change: Change = { kind: 'keys' };
      await vi.waitFor(
        async () => {
          await direct.changes.publish(change);
          expect(heard).toContainEqual(change);
        },
        { timeout: 5_000, interval: 250 },
      );
    });

    it('a trace writer keeps the traces of a cut and writes each of them once PostgreSQL is back', async () => {
      const { logger } = capturingLogger();
      const writer = createTraceWriter({ traces: proxied.traces, logger, batchSize: 8, flushIntervalMs: 10, maxRetryMs: 200 });
      const traces = Array.from({ length: 50 }, (_, index) => traceAt(`writer-${String(index).padStart(2, '0')}`, 10_000 + index));
      for (const trace of traces.slice(0, 20)) writer.enqueue(trace);
      await writer.flush();

      await proxy.cut();
      for (const trace of traces.slice(20)) writer.enqueue(trace);
      await vi.waitFor(() => expect(writer.stats().failedWrites).toBeGreaterThan(1), { timeout: 5_000, interval: 50 });
      expect(writer.stats()).toMatchObject({ written: 20, dropped: 0, queued: 30, failingSince: expect.any(Number) });

      await proxy.restore();
      await vi.waitFor(() => expect(writer.stats().queued).toBe(0), { timeout: 5_000, interval: 50 });
      await writer.close();
      expect(writer.stats()).toMatchObject({ enqueued: 50, written: 50, dropped: 0, queued: 0, failingSince: null });
      const stored = (await direct.traces.list('acct-1', {}, { limit: 100 })).items;
      expect(stored.map((trace) => trace.requestId).sort()).toEqual(traces.map((trace) => trace.requestId));
      const rollups = await direct.rollups.query('acct-1', { since: 0, until: 60_000 });
      expect(rollups.reduce((sum, row) => sum + row.calls, 0)).toBe(50);
    });
  });
});

/** How long a query may take to fail once PostgreSQL is unreachable: the pool's connection timeout (5 s) and a margin. */
const failFastMs = 7_000;

/** The promise's rejection; fails the test if it resolves, or is still pending after `failFastMs` (a hang). */
async function rejectionWithin(promise: Promise<unknown>): Promise<unknown> {
  const pending = Symbol('pending');
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof pending>((resolve) => {
    timer = setTimeout(() => resolve(pending), failFastMs);
  });
  try {
    const outcome = await Promise.race([promise.then(() => 'resolved' as const), deadline]);
    throw new Error(outcome === pending ? `still pending after ${failFastMs} ms` : 'resolved although PostgreSQL was unreachable');
  } catch (error) {
    if (error instanceof Error && /^(still pending|resolved although)/.test(error.message)) throw error;
    return error;
  } finally {
    clearTimeout(timer);
  }
}

function traceAt(requestId: string, startedAt: number, overrides: Partial<Trace> = {}): Trace {
  return traceFixture({ requestId, startedAt, ...overrides });
}
