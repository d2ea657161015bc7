/**
 * The ResponseCache contract as a test suite. Every back end runs it
 * unchanged (`describeResponseCacheContract('memory', …)`, `('redis', …)`), so
 * it uses only the ResponseCache interface, and awaits every `get` (memory
 * answers synchronously, Redis with a promise). Each test uses keys of its
 * own, so runs against a shared Redis never collide. Entries that must
 * outlive a test get a minute; the expiry test waits a few hundred ms.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CachedReply, ResponseCache } from '../../src/cache/response-cache.js';

/** A reply with every optional part a kept reply can hold. */
export function fullReply(text = 'The answer is 42.'): CachedReply {
  return {
    model: 'qwen2.5-0.5b-instruct',
    message: {
      role: 'assistant',
      content: text,
      refusal: null,
      reasoning_content: 'Six times seven.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"answer"}' } }],
    },
    finishReason: 'tool_calls',
    logprobs: { content: [{ token: 'The', logprob: -0.1, bytes: [84, 104, 101], top_logprobs: [] }], refusal: null },
    usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, completion_tokens_details: { reasoning_tokens: 3 } },
    costUsd: 0.000123,
    createdAt: 1_780_000_000_000,
    systemFingerprint: 'fp_test',
    contentPieces: ['The answer ', 'is 42.'],
  };
}

export function describeResponseCacheContract(backendName: string, open: () => Promise<ResponseCache>): void {
  describe(`ResponseCache contract: ${backendName}`, () => {
    let cache: ResponseCache;
    const freshKey = () => `test-${randomUUID()}`;
    const MINUTE = 60;

    beforeEach(async () => {
      cache = await open();
    });
    afterEach(async () => {
      await cache.close();
    });

    it('misses a key it never stored, and counts the miss', async () => {
      const before = cache.stats();
      expect(await cache.get(freshKey())).toBeNull();
      const after = cache.stats();
      expect(after.misses).toBe(before.misses + 1);
      expect(after.hits).toBe(before.hits);
    });

    it('gives back what was stored, every part of it, and counts the hit', async () => {
      const key = freshKey();
      const reply = fullReply();
      cache.set(key, reply, MINUTE);
      const before = cache.stats();
      expect(await cache.get(key)).toEqual(reply);
      expect(await cache.get(key)).toEqual(reply);
      expect(cache.stats().hits).toBe(before.hits + 2);
      expect(cache.stats().misses).toBe(before.misses);
    });

    it('gives back a reply without its optional parts as it was, and members set to undefined as absent', async () => {
      const key = freshKey();
      const reply: CachedReply = {
        model: 'm',
        message: { role: 'assistant', content: null, tool_calls: undefined },
        finishReason: null,
        usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 },
        costUsd: 0,
        createdAt: 1,
      };
      cache.set(key, reply, MINUTE);
      const found = await cache.get(key);
      expect(found).toEqual({ ...reply, message: { role: 'assistant', content: null } });
      expect(found !== null && 'tool_calls' in found.message).toBe(false);
    });

    it('keeps every key apart', async () => {
      const [first, second] = [freshKey(), freshKey()];
      cache.set(first, fullReply('first'), MINUTE);
      cache.set(second, fullReply('second'), MINUTE);
      expect((await cache.get(first))?.message.content).toBe('first');
      expect((await cache.get(second))?.message.content).toBe('second');
    });

    it('replaces an entry with a newer reply under the same key', async () => {
      const key = freshKey();
      cache.set(key, fullReply('old'), MINUTE);
      cache.set(key, fullReply('new'), MINUTE);
      expect((await cache.get(key))?.message.content).toBe('new');
    });

    it('forgets a deleted entry, and a delete of a key it never held changes nothing', async () => {
      const [kept, deleted] = [freshKey(), freshKey()];
      cache.set(kept, fullReply(), MINUTE);
      cache.set(deleted, fullReply(), MINUTE);
      cache.delete(deleted);
      cache.delete(freshKey());
      expect(await cache.get(deleted)).toBeNull();
      expect(await cache.get(kept)).toEqual(fullReply());
    });

    it('lets an entry go once its time to live has passed', async () => {
      const [short, long] = [freshKey(), freshKey()];
      cache.set(short, fullReply(), 0.2);
      cache.set(long, fullReply(), MINUTE);
      expect(await cache.get(short)).toEqual(fullReply());
      await sleep(400);
      expect(await cache.get(short)).toBeNull();
      expect(await cache.get(long)).toEqual(fullReply());
    });

    it('keeps nothing for a time to live that is not positive, and the key then holds nothing', async () => {
      const key = freshKey();
      cache.set(key, fullReply(), MINUTE);
      cache.set(key, fullReply('never kept'), 0);
      expect(await cache.get(key)).toBeNull();
      for (const ttl of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
        const other = freshKey();
        expect(() => cache.set(other, fullReply(), ttl)).not.toThrow();
        expect(await cache.get(other)).toBeNull();
      }
    });

    it('answers writes at once, without a promise, and is not degraded while it works', () => {
      const key = freshKey();
      expect(cache.set(key, fullReply(), MINUTE)).toBeUndefined();
      expect(cache.delete(key)).toBeUndefined();
      expect(cache.degraded()).toBeNull();
    });

    it('answers lookups after close as misses, and ignores writes', async () => {
      const key = freshKey();
      cache.set(key, fullReply(), MINUTE);
      await cache.close();
      expect(() => cache.set(freshKey(), fullReply(), MINUTE)).not.toThrow();
      expect(await cache.get(key)).toBeNull();
      cache = await open();
    });
  });
}
