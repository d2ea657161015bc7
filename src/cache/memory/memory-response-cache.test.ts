import { describe, expect, it } from 'vitest';
import { describeResponseCacheContract, fullReply } from '../../../test/contracts/response-cache-contract.js';
import type { CachedReply } from '../response-cache.js';
import { createMemoryResponseCache } from './memory-response-cache.js';

describeResponseCacheContract('memory', async () => createMemoryResponseCache());

/** What an entry of this reply under this key weighs: its JSON text in UTF-8, plus the key. */
const weightOf = (key: string, reply: CachedReply) => Buffer.byteLength(JSON.stringify(reply)) + Buffer.byteLength(key);

/** A reply whose entry under `key` weighs exactly `bytes`. */
function replyWeighing(bytes: number, key: string): CachedReply {
  const empty = fullReply('');
  const padding = bytes - weightOf(key, empty);
  if (padding < 0) throw new Error(`a reply weighs at least ${weightOf(key, empty)} bytes`);
  return fullReply('x'.repeat(padding));
}

describe('memory response cache', () => {
  it('answers a hit synchronously, with no promise to wait for', () => {
    const cache = createMemoryResponseCache();
    cache.set('key', fullReply(), 60);
    const found = cache.get('key');
    expect(found).not.toBeInstanceOf(Promise);
    expect(found).toEqual(fullReply());
    expect(cache.get('other')).toBeNull();
  });

  it('hands out a frozen copy: neither the stored object nor a caller can change what the next caller gets', () => {
    const cache = createMemoryResponseCache();
    const reply = fullReply();
    cache.set('key', reply, 60);
    reply.message.content = 'changed after set';
    const found = cache.get('key') as CachedReply;
    expect(found.message.content).toBe(fullReply().message.content);
    expect(() => {
      found.message.content = 'changed by a caller';
    }).toThrow(TypeError);
    expect(() => found.message.tool_calls?.push({ id: 'x', type: 'function', function: { name: 'n', arguments: '{}' } })).toThrow(
      TypeError,
    );
    expect(cache.get('key')).toEqual(fullReply());
  });

  it('counts the bytes of each entry (its JSON text in UTF-8 plus its key) and frees them when it goes', () => {
    const cache = createMemoryResponseCache();
    const [first, second] = [fullReply('plain'), fullReply('naïve – ünïcödé 😀')];
    cache.set('a', first, 60);
    cache.set('bb', second, 60);
    expect(cache.stats()).toEqual({ entries: 2, bytes: weightOf('a', first) + weightOf('bb', second), hits: 0, misses: 0, evictions: 0 });
    // UTF-8, not UTF-16 code units.
    expect(weightOf('bb', second)).toBeGreaterThan(JSON.stringify(second).length + 2);
    cache.set('a', second, 60);
    expect(cache.stats().bytes).toBe(weightOf('a', second) + weightOf('bb', second));
    cache.delete('bb');
    expect(cache.stats()).toMatchObject({ entries: 1, bytes: weightOf('a', second) });
  });

  it('stays within its bound in bytes, dropping the least recently used entries first and counting them', () => {
    const cache = createMemoryResponseCache({ maxBytes: 8_000 });
    // Five entries of 1,900 bytes: four fit in 8,000.
    for (const key of ['k1', 'k2', 'k3', 'k4']) cache.set(key, replyWeighing(1_900, key), 60);
    expect(cache.stats()).toMatchObject({ entries: 4, bytes: 7_600, evictions: 0 });
    // k1 is used again: k2 is now the least recently used.
    expect(cache.get('k1')).not.toBeNull();
    cache.set('k5', replyWeighing(1_900, 'k5'), 60);
    expect(cache.stats()).toMatchObject({ entries: 4, bytes: 7_600, evictions: 1 });
    expect(cache.get('k2')).toBeNull();
    for (const key of ['k1', 'k3', 'k4', 'k5']) expect(cache.get(key), key).not.toBeNull();
    // An entry pushes out the least recently used (k1 again, after the lookups above).
    cache.set('k6', replyWeighing(2_000, 'k6'), 60);
    expect(cache.stats()).toMatchObject({ entries: 4, bytes: 7_700, evictions: 2 });
    expect(cache.get('k1')).toBeNull();
    expect(cache.get('k3')).not.toBeNull();
  });

  it('keeps no entry heavier than a quarter of its bound, and then holds nothing under that key', () => {
    const cache = createMemoryResponseCache({ maxBytes: 8_000 });
    cache.set('fits', replyWeighing(2_000, 'fits'), 60);
    expect(cache.get('fits')).not.toBeNull();
    cache.set('fits', replyWeighing(2_001, 'fits'), 60);
    expect(cache.get('fits')).toBeNull();
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0, evictions: 0 });
  });

  it('expires entries by its clock', () => {
    let now = 1_000_000;
    const cache = createMemoryResponseCache({ now: () => now });
    cache.set('short', fullReply(), 10);
    cache.set('long', fullReply(), 100);
    now += 9_999;
    expect(cache.get('short')).not.toBeNull();
    now += 1;
    expect(cache.get('short')).toBeNull();
    expect(cache.get('long')).not.toBeNull();
    expect(cache.stats()).toMatchObject({ entries: 1, hits: 2, misses: 1 });
  });

  it('drops an expired entry first when room is needed, without counting it as an eviction', () => {
    let now = 1_000_000;
    const cache = createMemoryResponseCache({ maxBytes: 4_000, now: () => now });
    cache.set('soon', replyWeighing(1_000, 'soon'), 1);
    for (const key of ['a', 'b', 'c']) cache.set(key, replyWeighing(1_000, key), 100);
    now += 1_000;
    cache.set('d', replyWeighing(1_000, 'd'), 100);
    expect(cache.stats()).toMatchObject({ entries: 4, bytes: 4_000, evictions: 0 });
    cache.set('e', replyWeighing(1_000, 'e'), 100);
    expect(cache.stats()).toMatchObject({ entries: 4, bytes: 4_000, evictions: 1 });
    expect(cache.get('a')).toBeNull();
  });

  it('sweeps out expired entries nobody looks up, at most once a minute, when entries are stored', () => {
    let now = 1_000_000;
    const cache = createMemoryResponseCache({ now: () => now });
    for (let index = 0; index < 10; index++) cache.set(`old-${index}`, fullReply(), 30);
    now += 59_000;
    cache.set('fresh', fullReply(), 600);
    expect(cache.stats().entries).toBe(11);
    now += 1_000;
    cache.set('fresher', fullReply(), 600);
    expect(cache.stats()).toMatchObject({ entries: 2, evictions: 0, misses: 0 });
  });
});
