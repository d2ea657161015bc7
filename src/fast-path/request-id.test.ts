import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRequestIds } from './request-id.js';

describe('request ids', () => {
  it('are distinct across draws of random hex, shaped req_ + 9 base-36 time characters + 16 hex, and sort by time', () => {
    const newRequestId = createRequestIds();
    const ids = Array.from({ length: 1_000 }, () => newRequestId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-z]{9}[0-9a-f]{16}$/);
    const times = ids.map((id) => id.slice(4, 13));
    expect([...times].sort()).toEqual(times);
    expect(Number.parseInt(times[0] as string, 36)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('differ between generators (processes)', () => {
    const first = createRequestIds();
    const second = createRequestIds();
    expect(first().slice(13)).not.toBe(second().slice(13));
  });
});

/** Random bytes read in order from one seeded stream, whatever the size of each draw. */
function byteStream(seed: number): (size: number) => Buffer {
  let state = seed >>> 0 || 1;
  return (size) => {
    const bytes = Buffer.alloc(size);
    for (let index = 0; index < size; index++) {
      // xorshift32: the same bytes in the same order for both versions.
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      bytes[index] = state & 0xff;
    }
    return bytes;
  };
}

describe('request ids against the plain version (differential)', () => {
  it('are, id for id, what one randomBytes(8) and one toString(36) per id give from the same bytes and clock', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 700 }),
        fc.integer({ min: 0, max: 2 ** 41 }),
        (seed, steps, start) => {
          // The clock moves on by 0-5 ms between ids: repeated milliseconds, and more than one draw of 256 ids.
          const times = steps.map((_step, index) => start + steps.slice(0, index + 1).reduce((sum, step) => sum + step, 0));
          let at = 0;
          const batched = createRequestIds({ randomBytes: byteStream(seed), now: () => times[at] as number });
          const plainBytes = byteStream(seed);
          for (at = 0; at < times.length; at++) {
            const time = times[at] as number;
            expect(batched()).toBe(`req_${time.toString(36).padStart(9, '0')}${plainBytes(8).toString('hex')}`);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
