/**
 * Settings the hot path reads on every call but the store holds (eval
 * contracts, retention policies): answered from memory, never awaited. A key
 * seen for the first time answers `fallback` while its value is read; a value
 * older than `ttlMs` keeps answering while it is read again in the
 * background, so a change made by another process shows within `ttlMs`, or
 * at once when the change feed says so (`refresh`). A change made in this
 * process is `set` at once.
 */
export interface RefreshingCache<Key, Value> {
  get(key: Key): Value;
  set(key: Key, value: Value): void;
  /** Reads a cached key again now (another process changed it); a key never asked for is left alone. */
  refresh(key: Key): void;
}

export interface RefreshingCacheOptions<Key, Value> {
  /** The map key of a key (keys are compared by it). */
  keyOf(key: Key): string;
  /** Reads the stored value; null means "none stored": the fallback applies. */
  read(key: Key): Promise<Value | null>;
  fallback: Value;
  ttlMs: number;
  onError(error: unknown): void;
  now?: () => number;
}

export function createRefreshingCache<Key, Value>(options: RefreshingCacheOptions<Key, Value>): RefreshingCache<Key, Value> {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { value: Value; readAt: number; reading: boolean }>();

  function refresh(key: Key, entry: { value: Value; readAt: number; reading: boolean }): void {
    entry.reading = true;
    options
      .read(key)
      .then((stored) => {
        entry.value = stored ?? options.fallback;
        entry.readAt = now();
      })
      .catch(options.onError)
      .finally(() => (entry.reading = false));
  }

  return {
    get(key) {
      const mapKey = options.keyOf(key);
      let entry = entries.get(mapKey);
      if (entry === undefined) entries.set(mapKey, (entry = { value: options.fallback, readAt: -Infinity, reading: false }));
      if (!entry.reading && now() - entry.readAt > options.ttlMs) refresh(key, entry);
      return entry.value;
    },
    set(key, value) {
      entries.set(options.keyOf(key), { value, readAt: now(), reading: false });
    },
    refresh(key) {
      const entry = entries.get(options.keyOf(key));
      if (entry !== undefined && !entry.reading) refresh(key, entry);
    },
  };
}
