/**
 * The change feed (`change-feed.ts`) on LISTEN/NOTIFY: one channel per
 * schema, a JSON payload per change. `publish` is a pg_notify on a pooled
 * connection; hearing takes a dedicated connection outside the pool, opened
 * as the store is made (LISTEN must be in place before a change is published
 * for it to be heard, and `subscribe` cannot wait), which reconnects with
 * backoff and LISTENs again whenever PostgreSQL goes away (restart,
 * failover). Changes published while it is disconnected are missed (the
 * contract's delivery is at most once): once it listens again it tells its
 * listeners so (`missed`), and they re-read what they cache.
 *
 * A connection that died without a word (a cut network) is found by a
 * heartbeat query every 15 s that must answer within 5 s.
 */
import pg from 'pg';
import type { Logger } from '../../log/logger.js';
import type { Change, ChangeFeed } from '../change-feed.js';
import { quoteIdentifier, type PostgresDatabase } from './postgres-database.js';

export interface PostgresChangeFeed extends ChangeFeed {
  /** Resolves true once LISTEN is in place, false if it is not within `timeoutMs`. */
  listening(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

const firstRetryMs = 100;
const maxRetryMs = 2_000;
const heartbeatMs = 15_000;
const heartbeatTimeoutMs = 5_000;

export function changeChannel(schema: string): string {
  return schema === 'public' ? 'taskgate_changes' : `taskgate_changes_${schema}`;
}

export function createPostgresChangeFeed(database: PostgresDatabase, logger?: Logger): PostgresChangeFeed {
  const channel = changeChannel(database.schema);
  const listeners = new Set<(change: Change) => void>();
  let waiters: Array<() => void> = [];
  let client: pg.Client | null = null;
  let ready = false;
  let closed = false;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | null = null;
  let heartbeatTimer: NodeJS.Timeout | null = null;

  function deliver(payload: string | undefined): void {
    let change: Change;
    try {
      change = JSON.parse(payload ?? '') as Change;
    } catch {
      return;
    }
    if (typeof change !== 'object' || change === null || typeof change.kind !== 'string') return;
    for (const listener of [...listeners]) {
      try {
        listener(change);
      } catch {
        // The caller's wrapper logs its listener's errors; one listener's throw must not stop the others.
      }
    }
  }

  function connect(): void {
    retryTimer = null;
    if (closed) return;
    const connection = new pg.Client(database.clientConfig);
    client = connection;
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (client === connection) {
        client = null;
        ready = false;
      }
      if (heartbeatTimer !== null) clearInterval(heartbeatTimer);
      heartbeatTimer = null;
      // With a query in flight end() destroys the socket at once; a dead connection never answers a Terminate.
      void connection.end().catch(() => undefined);
      if (closed) return;
      if (failures === 0) logger?.warn('postgres change feed disconnected; reconnecting', { error: error?.message ?? 'connection ended' });
      const delay = Math.min(maxRetryMs, firstRetryMs * 2 ** failures);
      failures += 1;
      retryTimer = setTimeout(connect, delay);
      retryTimer.unref();
    };
    connection.on('error', onLost);
    connection.on('end', () => onLost());
    connection.on('notification', (message) => {
      if (message.channel === channel) deliver(message.payload);
    });
    connection
      .connect()
      .then(() => connection.query(`LISTEN ${quoteIdentifier(channel)}`))
      .then(() => {
        if (lost || closed) return;
        const reconnected = failures > 0;
        if (reconnected) logger?.info('postgres change feed listening again', {});
        ready = true;
        failures = 0;
        if (reconnected) deliver(JSON.stringify({ kind: 'missed' } satisfies Change));
        for (const wake of waiters) wake();
        waiters = [];
        heartbeatTimer = setInterval(() => heartbeat(connection, onLost), heartbeatMs);
        heartbeatTimer.unref();
      })
      .catch((error: unknown) => onLost(error instanceof Error ? error : new Error(String(error))));
  }

  connect();

  return {
    async publish(change) {
      await database.query('SELECT pg_notify($1, $2)', [channel, JSON.stringify(change)]);
    },
    subscribe(listener) {
      // A listener added twice is called twice, as with SQLite's feed.
      const wrapper = (change: Change) => listener(change);
      listeners.add(wrapper);
      return () => {
        listeners.delete(wrapper);
      };
    },
    listening(timeoutMs) {
      if (ready) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        timer.unref();
        waiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
    async close() {
      closed = true;
      ready = false;
      listeners.clear();
      if (retryTimer !== null) clearTimeout(retryTimer);
      if (heartbeatTimer !== null) clearInterval(heartbeatTimer);
      const connection = client;
      client = null;
      if (connection !== null)
        await Promise.race([connection.end().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
    },
  };
}

function heartbeat(connection: pg.Client, onLost: (error: Error) => void): void {
  const timer = setTimeout(() => onLost(new Error('the change feed connection did not answer its heartbeat')), heartbeatTimeoutMs);
  timer.unref();
  connection
    .query('SELECT 1')
    .then(() => clearTimeout(timer))
    .catch((error: unknown) => {
      clearTimeout(timer);
      onLost(error instanceof Error ? error : new Error(String(error)));
    });
}
