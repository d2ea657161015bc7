/**
 * The Store contract, the change feed (`src/store/change-feed.ts`): every
 * back end runs it unchanged, through the Store interface alone. The test of
 * two processes on one database runs when the back end can open them
 * (`openShared`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import type { Change } from '../../../src/store/change-feed.js';
import type { Scope } from '../../../src/api/scope.js';
import type { Store } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, eachTestOnSharedStores, type OpenSharedStores, type OpenStore } from './store-contract-support.js';

const scope: Scope = { accountId: 'acct-1', project: 'shop', workload: 'summarise' };

export function describeChangeFeedContract(open: OpenStore, openShared?: OpenSharedStores): void {
  describe('change feed', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    it('delivers published changes to subscribers, its own included, until they stop', async () => {
      const heard: Change[] = [];
      const stop = store.changes.subscribe((change) => heard.push(change));
      const route: Change = { kind: 'route', scope, requestedModel: 'big' };
      const revoked: Change = { kind: 'keys' };
      await store.changes.publish(route);
      await store.changes.publish(revoked);
      await vi.waitFor(() => expect(heard).toEqual([route, revoked]), { timeout: 2_000 });
      stop();
      await store.changes.publish({ kind: 'router_state' });
      await sleep(400);
      expect(heard).toHaveLength(2);
    });
  });

  describe.skipIf(openShared === undefined)('change feed: two processes on one database', () => {
    let first: Store;
    let second: Store;
    eachTestOnSharedStores(openShared, (stores) => ([first, second] = stores));

    it('a change published by one process reaches the other within a second', async () => {
      const heard: Change[] = [];
      const stop = second.changes.subscribe((change) => heard.push(change));
      const change: Change = { kind: 'contract', scope };
      await first.changes.publish(change);
      await vi.waitFor(() => expect(heard).toEqual([change]), { timeout: 1_000 });
      stop();
    });
  });
}
