import { describe, expect, it } from 'vitest';
import { createRefreshingCache } from './refreshing-cache.js';

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('createRefreshingCache', () => {
  it('answers the fallback until the first read lands, then the stored value, re-read once stale', async () => {
    let clock = 0;
    const stored = new Map<string, number>([['a', 1]]);
    const reads: string[] = [];
    const cache = createRefreshingCache<string, number>({
      keyOf: (key) => key,
      read: async (key) => {
        reads.push(key);
        return stored.get(key) ?? null;
      },
      fallback: 0,
      ttlMs: 1_000,
      onError: () => {},
      now: () => clock,
    });
    expect(cache.get('a')).toBe(0);
    await settled();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('b')).toBe(0);
    expect(reads).toEqual(['a', 'b']);

    stored.set('a', 2);
    clock = 500;
    expect(cache.get('a')).toBe(1); // still fresh: not read again
    clock = 1_600;
    expect(cache.get('a')).toBe(1); // stale: answered, and read again in the background
    await settled();
    expect(cache.get('a')).toBe(2);

    cache.set('c', 7);
    expect(cache.get('c')).toBe(7);
    expect(reads.filter((key) => key === 'c')).toEqual([]);
  });
});
