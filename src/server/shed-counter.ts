/**
 * What the slow-connection guard closed (`slow-connections.ts`): counted for
 * `/metrics`, and said in the log at most once every 30 s, with how many since
 * the last line, so a flood of slow sockets writes a line, not thousands.
 */
import type { Logger } from '../log/logger.js';

const logEveryMs = 30_000;

export interface ShedCounter {
  /** Connections closed since start, by the cap that closed them. */
  readonly counts: { address: number; total: number };
  count(cap: 'address' | 'total'): void;
}

export function createShedCounter(logger: Logger, now: () => number = Date.now): ShedCounter {
  const counts = { address: 0, total: 0 };
  let loggedAt = -Infinity;
  let sinceLog = 0;
  return {
    counts,
    count(cap) {
      counts[cap] += 1;
      sinceLog += 1;
      if (now() - loggedAt < logEveryMs) return;
      logger.warn(
        'slow connections closed: over a second without a whole request, past server.max_slow_connections_per_address or server.max_slow_connections',
        { closed: sinceLog, by_address_cap: counts.address, by_total_cap: counts.total },
      );
      loggedAt = now();
      sinceLog = 0;
    },
  };
}
