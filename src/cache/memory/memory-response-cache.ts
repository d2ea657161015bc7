/**
 * Replies in this process's memory, bounded in bytes: a Map in order of last
 * use, so the least recently used entry is the first one out when a new one
 * needs room. An entry weighs its JSON text in UTF-8 plus its key; one
 * heavier than a quarter of the bound is not kept (it would push out many
 * others for one reply).
 *
 * An entry is kept as a frozen copy parsed back from its text, made when it
 * is stored (after the call has answered): `get` hands that copy out as it
 * is, no parse and no tick on a hit, and no caller can change what the next
 * one gets. Expired entries go when they are looked up, when room is needed,
 * and in a sweep at most once a minute when entries are stored.
 */
import { parseCachedReply } from '../parse-cached-reply.js';
import type { CachedReply, CacheStats, ResponseCache } from '../response-cache.js';

export interface MemoryResponseCacheOptions {
  /** The bound on what the entries weigh (`cache.max_bytes`). Default 64 MiB. */
  maxBytes?: number;
  /** The clock, in epoch ms (tests pass their own). */
  now?: () => number;
}

interface Entry {
  reply: CachedReply;
  bytes: number;
  expiresAt: number;
}

export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
const SWEEP_INTERVAL_MS = 60_000;

export function createMemoryResponseCache(options: MemoryResponseCacheOptions = {}): ResponseCache {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxEntryBytes = Math.floor(maxBytes / 4);
  const now = options.now ?? Date.now;
  /** In order of last use: the first entry is the least recently used. */
  const entries = new Map<string, Entry>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;
  let evictions = 0;
  let nextSweepAt = now() + SWEEP_INTERVAL_MS;
  let closed = false;

  function remove(key: string, entry: Entry): void {
    entries.delete(key);
    bytes -= entry.bytes;
  }

  function sweep(at: number): void {
    nextSweepAt = at + SWEEP_INTERVAL_MS;
    for (const [key, entry] of entries) if (entry.expiresAt <= at) remove(key, entry);
  }

  /** Drops the least recently used entries until the entries weigh at most `maxBytes`. */
  function makeRoom(at: number): void {
    for (const [key, entry] of entries) {
      if (bytes <= maxBytes) return;
      remove(key, entry);
      if (entry.expiresAt > at) evictions++;
    }
  }

  function store(key: string, reply: CachedReply, ttlSeconds: number): void {
    const old = entries.get(key);
    if (old !== undefined) remove(key, old);
    if (closed || !(ttlSeconds > 0) || !Number.isFinite(ttlSeconds)) return;
    const text = JSON.stringify(reply);
    const weight = Buffer.byteLength(text) + Buffer.byteLength(key);
    if (weight > maxEntryBytes) return;
    const copy = parseCachedReply(text);
    if (copy === null) return;
    const at = now();
    if (at >= nextSweepAt) sweep(at);
    entries.set(key, { reply: deepFreeze(copy), bytes: weight, expiresAt: at + ttlSeconds * 1000 });
    bytes += weight;
    makeRoom(at);
  }

  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) {
        misses++;
        return null;
      }
      if (entry.expiresAt <= now()) {
        remove(key, entry);
        misses++;
        return null;
      }
      // To the end of the Map: the most recently used.
      entries.delete(key);
      entries.set(key, entry);
      hits++;
      return entry.reply;
    },
    set(key, reply, ttlSeconds) {
      try {
        store(key, reply, ttlSeconds);
      } catch {
        // A reply JSON cannot write (it never is one taskgate makes): not kept, and the call is not affected.
      }
    },
    delete(key) {
      const entry = entries.get(key);
      if (entry !== undefined) remove(key, entry);
    },
    stats(): CacheStats {
      return { entries: entries.size, bytes, hits, misses, evictions };
    },
    degraded: () => null,
    async close() {
      closed = true;
      entries.clear();
      bytes = 0;
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
