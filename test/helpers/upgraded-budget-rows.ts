/**
 * What a database written before migration 0015 (SQLite) / 0010 (PostgreSQL)
 * reads as once migrated: its key `hash-old` without spend caps, its trace
 * `req-old` (project `shop`, workload `main`, $0.25, at `startedAt`) not
 * cached and saving nothing, its rollup row of that minute without cache
 * hits (and counting them from now on), and the new budget tables working.
 * The back ends' upgrade tests write those rows (`oldBudgetRows`), migrate,
 * then call this.
 */
import { expect } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { traceFixture } from '../contracts/store/trace-fixture.js';

/** The rows of the release before, in SQL both back ends take (`stream` as their boolean literal). */
export function oldBudgetRows(startedAt: number, falseLiteral: string): string[] {
  const minute = Math.floor(startedAt / 60_000) * 60_000;
  return [
    "INSERT INTO accounts (id, name, created_at) VALUES ('acct-1', 'acme', 1000)",
    `INSERT INTO api_keys (id, account_id, name, display_prefix, hash, environment, role, requests_per_minute, tokens_per_minute, created_at)
     VALUES ('key-old', 'acct-1', NULL, 'tg_live_AbCd', 'hash-old', 'production', 'inference', NULL, NULL, 1000)`,
    `INSERT INTO traces (request_id, account_id, key_id, environment, project, workload, served_model, status, http_status, prompt_tokens, completion_tokens,
       cost_usd, latency_ms, stream, started_at)
     VALUES ('req-old', 'acct-1', 'key-old', 'production', 'shop', 'main', 'small', 'ok', 200, 1, 1, 0.25, 5, ${falseLiteral}, ${startedAt})`,
    `INSERT INTO rollups (account_id, project, workload, environment, model, minute, calls, errors, error_classes, prompt_tokens, completion_tokens, cost_usd)
     VALUES ('acct-1', 'shop', 'main', 'production', 'small', ${minute}, 1, 0, '{}', 1, 1, 0.25)`,
  ];
}

export async function expectUpgradedBudgetRows(store: Store, startedAt: number): Promise<void> {
  const minute = Math.floor(startedAt / 60_000) * 60_000;
  const window = { since: minute, until: minute + 60_000 };
  expect(await store.accounts.findKeyByHash('hash-old')).toMatchObject({ id: 'key-old', dailyBudgetUsd: null, monthlyBudgetUsd: null });
  expect(await store.traces.get('acct-1', 'req-old')).toMatchObject({ costUsd: 0.25, cached: false, costSavedUsd: null });
  expect(await store.rollups.query('acct-1', window)).toEqual([expect.objectContaining({ calls: 1, cachedCalls: 0, costSavedUsd: 0 })]);

  const hit = traceFixture({
    requestId: 'req-hit',
    accountId: 'acct-1',
    keyId: 'key-old',
    servedModel: 'small',
    startedAt: startedAt + 1,
    cached: true,
    costUsd: 0,
    costSavedUsd: 0.25,
  });
  expect(await store.traces.insertBatch([hit])).toBe(1);
  expect(await store.traces.get('acct-1', 'req-hit')).toEqual(hit);
  expect(await store.rollups.query('acct-1', window)).toEqual([expect.objectContaining({ calls: 2, cachedCalls: 1, costSavedUsd: 0.25 })]);

  const scope = { accountId: 'acct-1', project: 'shop', workload: '' };
  await store.budgets.putBudget({ scope, environment: 'production', dailyUsd: 1, monthlyUsd: null, alertAt: 0.8, updatedAt: 2_000 });
  expect(await store.budgets.getBudget(scope, 'production')).toMatchObject({ dailyUsd: 1 });
  expect((await store.budgets.spendSince('acct-1', startedAt)).projects).toEqual([
    { scope: { accountId: 'acct-1', project: 'shop' }, environment: 'production', costUsd: 0.25 },
  ]);
  const cap = { id: 'proj:acct-1:shop:production:day:upgrade', limitMicros: 1_000_000, expiresAt: Date.now() + 86_400_000 };
  expect(await store.budgets.reserveSpend([cap], 250_000)).toMatchObject({ reserved: true, spentMicros: [250_000] });
  const key = await store.accounts.createKey({
    accountId: 'acct-1',
    name: null,
    displayPrefix: 'tg_live_EfGh',
    hash: 'hash-new',
    environment: 'production',
    role: 'inference',
    requestsPerMinute: null,
    dailyBudgetUsd: 3,
  });
  expect(await store.accounts.findKeyByHash('hash-new')).toEqual({ ...key, dailyBudgetUsd: 3, monthlyBudgetUsd: null });
}
