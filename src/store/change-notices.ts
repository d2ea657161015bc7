/**
 * Publishes on the change feed what other processes cache, right after the
 * write that changed it: routes and pins, contracts, revocations, retention
 * policies, budgets and cache settings, and the router leader's state and
 * sample queue. Applied where a
 * store is opened (`open-store.ts`), so every writer notifies, the CLI
 * included. A notice that cannot be sent is not an error: the write stands,
 * and every cache also re-reads on a slow timer.
 */
import type { Change } from './change-feed.js';
import type { Store } from './store.js';

export function withChangeNotices(store: Store): Store {
  const notify = (change: Change) => void store.changes.publish(change).catch(() => undefined);
  const { routing, accounts, retention, budgets } = store;
  return {
    ...store,
    migrate: () => store.migrate(),
    ping: () => store.ping(),
    close: () => store.close(),
    accounts: {
      ...accounts,
      async revokeKey(accountId, keyId, at) {
        const revoked = await accounts.revokeKey(accountId, keyId, at);
        if (revoked) notify({ kind: 'keys' });
        return revoked;
      },
    },
    retention: {
      ...retention,
      async put(policy) {
        await retention.put(policy);
        notify({ kind: 'retention', accountId: policy.accountId, project: policy.project });
      },
    },
    budgets: {
      ...budgets,
      async putBudget(budget) {
        await budgets.putBudget(budget);
        notify({ kind: 'budget', scope: budget.scope });
      },
      async putCacheSettings(settings) {
        await budgets.putCacheSettings(settings);
        notify({ kind: 'cache_settings', scope: settings.scope });
      },
    },
    routing: {
      ...routing,
      async saveRoute(route, change) {
        await routing.saveRoute(route, change);
        notify({ kind: 'route', scope: route.scope, requestedModel: route.requestedModel });
      },
      async putContract(scope, contract, at, keepEvidence) {
        const stored = await routing.putContract(scope, contract, at, keepEvidence);
        notify({ kind: 'contract', scope });
        return stored;
      },
      async saveRouterStates(states) {
        await routing.saveRouterStates(states);
        if (states.length > 0) notify({ kind: 'router_state' });
      },
      async pushSamples(samples) {
        await routing.pushSamples(samples);
        if (samples.length > 0) notify({ kind: 'router_samples' });
      },
    },
  };
}
