/**
 * What each change another process makes means to this one's caches: the one
 * place the change feed (`store/change-feed.ts`) meets them. Every cache also
 * re-reads on a slow timer, so a missed notice costs seconds, never staleness.
 */
import type { Authenticator } from '../auth/authenticator.js';
import { errorFields, type Logger } from '../log/logger.js';
import type { FleetRouter } from '../routing/fleet-router.js';
import type { RouteTable } from '../routing/route-table.js';
import type { ChangeFeed } from '../store/change-feed.js';
import type { Retention } from '../tracking/retention.js';

export interface Followers {
  routes: RouteTable;
  authenticator: Authenticator;
  retention: Retention;
  router: FleetRouter;
}

/** Subscribes; returns the function that stops following. */
export function followChanges(changes: ChangeFeed, followers: Followers, logger: Logger): () => void {
  const { routes, authenticator, retention, router } = followers;
  return changes.subscribe((change) => {
    try {
      switch (change.kind) {
        case 'route':
          void routes.refresh();
          break;
        case 'contract':
          routes.refreshContract(change.scope);
          break;
        case 'keys':
          authenticator.refreshRevocations();
          break;
        case 'retention':
          retention.refreshPolicy(change.accountId, change.project);
          break;
        case 'router_state':
          router.refreshStates();
          break;
        case 'router_samples':
          router.takeSamples();
          break;
        case 'missed':
          // Contracts and retention policies re-read on their own timers within seconds.
          void routes.refresh();
          authenticator.refreshRevocations();
          router.refreshStates();
          router.takeSamples();
          break;
      }
    } catch (error) {
      logger.warn('a change from another process could not be applied', { kind: change.kind, ...errorFields(error) });
    }
  });
}
