/**
 * What a database written before migration 0014 (SQLite) / 0009 (PostgreSQL)
 * reads as once migrated: its evidence row for `small` (40 evaluations)
 * without paired or constraint counts that new counts add onto, its route
 * (served by `small`) without a split, its trace `req-old` without a route
 * reason. The back ends' upgrade tests write those rows, then call this.
 */
import { expect } from 'vitest';
import type { Store } from '../../src/store/store.js';

export async function expectUpgradedRoutingRows(store: Store): Promise<void> {
  const scope = { accountId: 'acct-1', project: 'shop', workload: 'main' };
  const none = { right: 0, wrong: 0, ungraded: 0 };
  const [old] = await store.routing.listEvidence(scope, 'big', 1);
  expect(old).toMatchObject({
    evaluated: 40,
    paired: { same: none, win: none, loss: none, tie: none },
    constraintsEvaluated: 0,
    constraintsPassed: 0,
  });
  await store.routing.addEvidence(
    scope,
    'big',
    'small',
    1,
    {
      evaluated: 1,
      passed: 1,
      errors: 0,
      promptTokens: 0,
      completionTokens: 0,
      costUsd: 0,
      latencyMsTotal: 0,
      paired: { outcome: 'same', grade: 'right' },
      constraintsEvaluated: 1,
      constraintsPassed: 1,
    },
    2000,
  );
  expect((await store.routing.listEvidence(scope, 'big', 1))[0]).toMatchObject({
    evaluated: 41,
    paired: { same: { right: 1 } },
    constraintsEvaluated: 1,
    constraintsPassed: 1,
  });
  expect((await store.routing.listRoutes(scope))[0]).toMatchObject({ servedModel: 'small', split: null });
  expect(await store.traces.get('acct-1', 'req-old')).toMatchObject({ routeReason: null, routeShare: null });
}
