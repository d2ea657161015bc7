/**
 * The change feed (`change-feed.ts`) on SQLite: a `changes` table in the file
 * every process on this machine shares (`serve --workers`), which each
 * subscribed process polls. Rows older than a minute are of no use to anyone
 * and are removed as changes are published.
 */
import type { Change, ChangeFeed } from '../change-feed.js';
import { preparedOnFirstUse, type SqliteDatabase } from './sqlite-database.js';

/** How often a subscribed process reads the changes table. */
const changePollMs = 200;
/** Changes older than this are of no use to anyone (subscribers read every 200 ms) and are removed. */
const changeRetentionMs = 60_000;

export function createSqliteChangeFeed(database: SqliteDatabase): ChangeFeed & { close(): void } {
  const prepared = preparedOnFirstUse(() => ({
    insert: database.prepare<[string, number]>('INSERT INTO changes (body, at) VALUES (?, ?)'),
    prune: database.prepare<[number]>('DELETE FROM changes WHERE at < ?'),
    newest: database.prepare<[], number>('SELECT coalesce(max(id), 0) FROM changes').pluck(),
    after: database.prepare<[number], { id: number; body: string }>('SELECT id, body FROM changes WHERE id > ? ORDER BY id LIMIT 1000'),
  }));
  const listeners = new Set<(change: Change) => void>();
  let lastSeen = 0;
  let lastPruneAt = 0;
  let timer: NodeJS.Timeout | null = null;

  function read(): void {
    if (!database.open) return;
    for (const row of prepared().after.all(lastSeen)) {
      lastSeen = row.id;
      const change = JSON.parse(row.body) as Change;
      for (const listener of listeners) listener(change);
    }
  }

  return {
    async publish(change) {
      const now = Date.now();
      prepared().insert.run(JSON.stringify(change), now);
      if (now - lastPruneAt > changeRetentionMs / 6) {
        lastPruneAt = now;
        prepared().prune.run(now - changeRetentionMs);
      }
    },
    subscribe(listener) {
      if (listeners.size === 0) {
        lastSeen = prepared().newest.get() ?? 0;
        timer = setInterval(read, changePollMs);
        timer.unref();
      }
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && timer !== null) {
          clearInterval(timer);
          timer = null;
        }
      };
    },
    close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      listeners.clear();
    },
  };
}
