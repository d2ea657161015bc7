import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyMigrations, migrations } from './sqlite-migrations.js';
import { spendSinceSql } from './sqlite-budgets.js';
import { createSqliteStore } from './sqlite-store.js';
import type { RouteRecord } from '../routing-store.js';
import { describeStoreContracts } from '../../../test/contracts/store/store-contracts.js';
import { temporaryDirectory } from '../../../test/helpers/temporary-directory.js';
import { expectUpgradedRoutingRows } from '../../../test/helpers/upgraded-routing-rows.js';
import { expectUpgradedBudgetRows, oldBudgetRows } from '../../../test/helpers/upgraded-budget-rows.js';

const directory = temporaryDirectory('taskgate-sqlite-store-');
let files = 0;
const freshPath = (): string => join(directory, `store-${(files += 1)}.db`);

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

describeStoreContracts(
  'sqlite',
  async () => createSqliteStore({ path: freshPath() }),
  async () => {
    const path = freshPath();
    const first = createSqliteStore({ path });
    await first.migrate();
    return [first, createSqliteStore({ path })];
  },
);

describeStoreContracts('sqlite :memory:', async () => createSqliteStore({ path: ':memory:' }));

describe('sqlite store', () => {
  it('puts a file database in WAL mode and creates its parent directory', async () => {
    const path = join(directory, 'nested', 'deeper', 'taskgate.db');
    const store = createSqliteStore({ path });
    await store.migrate();
    await store.close();
    // journal_mode=WAL is recorded in the file, so a plain connection sees it.
    const database = new Database(path, { readonly: true });
    expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    database.close();
  });

  it('migrates once however often migrate() runs', async () => {
    const path = freshPath();
    const first = createSqliteStore({ path });
    const second = createSqliteStore({ path });
    await first.migrate();
    await first.migrate();
    await second.migrate();
    await Promise.all([first.migrate(), second.migrate()]);
    await first.close();
    await second.close();

    const database = new Database(path);
    const applied = database.prepare<[], string>('SELECT id FROM schema_migrations ORDER BY id').pluck().all();
    expect(applied).toEqual(migrations.map((migration) => migration.id));
    expect(applyMigrations(database)).toEqual([]);
    database.close();
  });

  it('applies only the migrations not yet recorded', () => {
    const database = new Database(':memory:');
    const extra = { id: '9999_test_extra', sql: 'CREATE TABLE test_extra (id INTEGER PRIMARY KEY);' };
    expect(applyMigrations(database)).toEqual(migrations.map((migration) => migration.id));
    expect(applyMigrations(database, [...migrations, extra])).toEqual([extra.id]);
    expect(applyMigrations(database, [...migrations, extra])).toEqual([]);
    database.close();
  });

  it('gives the routes stored before revisions existed one each, and every later write a higher one', async () => {
    const path = freshPath();
    const database = new Database(path);
    const before = migrations.filter((migration) => migration.id < '0012_revisions');
    applyMigrations(database, before);
    const insert = database.prepare(
      `INSERT INTO routes (account_id, project, workload, requested_model, served_model, pinned_model, certificate, cooldowns, updated_at)
       VALUES ('acct-1', 'shop', 'main', ?, ?, NULL, NULL, '{}', ?)`,
    );
    insert.run('big', 'small', 9_000);
    insert.run('large', 'large', 1_000);
    expect(applyMigrations(database)).toContain('0012_revisions');
    database.close();

    const store = createSqliteStore({ path });
    await store.migrate();
    const stored = await store.routing.listRoutesChangedAfter(0);
    expect(stored.map((revised) => revised.record.requestedModel)).toEqual(['big', 'large']);
    const highest = stored.at(-1)?.revision ?? 0;
    await store.routing.saveRoute({ ...(stored[0]?.record as RouteRecord), pinnedModel: 'big', updatedAt: 1 }, null);
    expect(await store.routing.listRoutesChangedAfter(highest)).toEqual([
      { record: { ...(stored[0]?.record as RouteRecord), pinnedModel: 'big', updatedAt: 1 }, revision: highest + 1 },
    ]);
    await store.close();
  });

  it('reads the evidence, routes and traces of a database of the release before as having no paired counts, split or route reason', async () => {
    const path = freshPath();
    const database = new Database(path);
    applyMigrations(
      database,
      migrations.filter((migration) => migration.id < '0014_paired_evidence_route_splits'),
    );
    const release = migrations.filter((migration) => migration.id <= '0014_paired_evidence_route_splits');
    database.exec(`
      INSERT INTO route_evidence (account_id, project, workload, requested_model, candidate_model, contract_version,
        evaluated, passed, errors, prompt_tokens, completion_tokens, cost_usd, latency_ms_total, updated_at)
      VALUES ('acct-1', 'shop', 'main', 'big', 'small', 1, 40, 38, 1, 4000, 800, 0.04, 9000, 1000);
      INSERT INTO routes (account_id, project, workload, requested_model, served_model, pinned_model, certificate, cooldowns, updated_at)
      VALUES ('acct-1', 'shop', 'main', 'big', 'small', NULL, NULL, '{}', 1000);
      INSERT INTO traces (request_id, account_id, key_id, environment, status, http_status, prompt_tokens, completion_tokens, cost_usd, latency_ms, stream, started_at)
      VALUES ('req-old', 'acct-1', 'key-1', 'production', 'ok', 200, 1, 1, 0, 5, 0, 1000);
    `);
    expect(applyMigrations(database, release)).toEqual(['0014_paired_evidence_route_splits']);
    database.close();

    const store = createSqliteStore({ path });
    await store.migrate();
    await expectUpgradedRoutingRows(store);
    expect(await store.traces.get('acct-1', 'req-old')).toMatchObject({ servedModel: null });
    await store.close();
  });

  it('reads the keys, traces and rollups of a database of the release before as without spend caps or cache hits, and gains the budget tables', async () => {
    const path = freshPath();
    const database = new Database(path);
    applyMigrations(
      database,
      migrations.filter((migration) => migration.id < '0015_budgets_cache'),
    );
    const startedAt = Date.UTC(2024, 0, 10, 12, 30, 15);
    for (const statement of oldBudgetRows(startedAt, '0')) database.exec(statement);
    expect(applyMigrations(database)).toEqual(['0015_budgets_cache']);
    database.close();

    const store = createSqliteStore({ path });
    await store.migrate();
    await expectUpgradedBudgetRows(store, startedAt);
    await store.close();
  });

  it('sums the spend since a time through the traces index, of one account or of all, never by a scan of the table', () => {
    const database = new Database(':memory:');
    applyMigrations(database);
    const plan = (sql: string, ...values: unknown[]) =>
      database
        .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...values)
        .map((row) => row.detail);
    for (const details of [plan(spendSinceSql.ofAccount, 'acct-1', 0), plan(spendSinceSql.ofEveryAccount, 0)]) {
      expect(
        details.some((detail) => /^SEARCH traces USING INDEX traces_account_started \(account_id=\? AND started_at>\?\)/.test(detail)),
        details.join('\n'),
      ).toBe(true);
      expect(
        details.filter((detail) => /^SCAN traces\b/.test(detail)),
        details.join('\n'),
      ).toEqual([]);
    }
    database.close();
  });

  it('rolls back a failing migration entirely', () => {
    const database = new Database(':memory:');
    const broken = { id: '9999_broken', sql: 'CREATE TABLE half_done (id INTEGER); SELECT * FROM no_such_table;' };
    expect(() => applyMigrations(database, [...migrations, broken])).toThrow(/no_such_table/);
    const tables = database.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    expect(tables).not.toContain('half_done');
    expect(tables).not.toContain('accounts');
    database.close();
  });

  it('a second store on the same file sees what the first one wrote', async () => {
    const path = freshPath();
    const writer = createSqliteStore({ path });
    await writer.migrate();
    const account = await writer.accounts.ensureAccount('acme');
    const scope = await writer.projects.ensureScope({ accountId: account.id, project: 'shop', workload: 'main' });

    const reader = createSqliteStore({ path });
    await reader.migrate();
    expect(await reader.accounts.ensureAccount('acme')).toEqual(account);
    expect(await reader.projects.ensureScope({ accountId: account.id, project: 'shop', workload: 'main' })).toEqual(scope);
    await writer.close();
    await reader.close();
  });

  it('ping fails once the store is closed', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.ping();
    await store.close();
    await expect(store.ping()).rejects.toThrow();
    await store.close();
  });
});
