/**
 * The PostgreSQL Store back end, for a fleet of taskgate processes sharing
 * one database: a pool of `poolSize` connections, every table in `schema`.
 * Each domain lives in a file of its own, as in `sqlite/`; this one opens the
 * pool, composes them and runs the upkeep (migrations, the trace partitions
 * of the days ahead).
 */
import type { Logger } from '../../log/logger.js';
import type { Store } from '../store.js';
import { createPostgresAccounts } from './postgres-accounts.js';
import { createPostgresBudgets } from './postgres-budgets.js';
import { createPostgresChangeFeed } from './postgres-change-feed.js';
import { createPostgresDatabase } from './postgres-database.js';
import { createPostgresKeys } from './postgres-keys.js';
import { createPostgresLeases } from './postgres-leases.js';
import { applyMigrations } from './postgres-migrations.js';
import { createTracePartitions, type TracePartitions } from './postgres-partitions.js';
import { createPostgresProjects } from './postgres-projects.js';
import { createPostgresRetention } from './postgres-retention.js';
import { createPostgresRollups } from './postgres-rollups.js';
import { createPostgresRouterQueue } from './postgres-router-queue.js';
import { createPostgresRouting } from './postgres-routing.js';
import { createPostgresSessions } from './postgres-sessions.js';
import { createPostgresTraces } from './postgres-traces.js';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** Connections in the pool; default 10. The change feed holds one more. */
  poolSize?: number;
  /** Where every table lives (created on migrate); default `public`. Lower-case letters, digits, `_`. */
  schema?: string;
  /** Days of trace partitions made ahead of today; default 7. */
  partitionDaysAhead?: number;
  /** Where lost connections and failed upkeep are reported. */
  logger?: Logger;
}

export interface PostgresStore extends Store {
  /** The daily partitions of the traces (operators, tests). */
  readonly partitions: TracePartitions;
}

/** How often each process makes sure the days ahead have their partitions. */
const partitionUpkeepMs = 3_600_000;

export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const { logger } = options;
  const database = createPostgresDatabase({
    url: options.url,
    poolSize: options.poolSize ?? 10,
    schema: options.schema ?? 'public',
    logger,
  });
  const partitions = createTracePartitions(database, { daysAhead: options.partitionDaysAhead ?? 7 });
  const changes = createPostgresChangeFeed(database, logger);
  let upkeep: NodeJS.Timeout | null = null;
  let closed = false;

  return {
    accounts: { ...createPostgresAccounts(database), ...createPostgresKeys(database) },
    projects: createPostgresProjects(database),
    traces: createPostgresTraces(database),
    routing: { ...createPostgresRouting(database), ...createPostgresRouterQueue(database) },
    rollups: createPostgresRollups(database),
    retention: createPostgresRetention(database, partitions),
    sessions: createPostgresSessions(database),
    budgets: createPostgresBudgets(database),
    leases: createPostgresLeases(database),
    changes,
    partitions,
    async migrate() {
      await applyMigrations(database);
      await partitions.ensure();
      if (upkeep === null && !closed) {
        upkeep = setInterval(() => {
          partitions
            .ensure()
            .catch((error: unknown) =>
              logger?.warn('creating trace partitions failed', { error: error instanceof Error ? error.message : String(error) }),
            );
        }, partitionUpkeepMs);
        upkeep.unref();
      }
      // A store that has migrated hears every change published from then on.
      await changes.listening(5_000);
    },
    async ping() {
      await database.query('SELECT 1');
    },
    async close() {
      closed = true;
      if (upkeep !== null) clearInterval(upkeep);
      upkeep = null;
      await changes.close();
      await database.close();
    },
  };
}
