import { randomBytes } from 'node:crypto';

/** Random hex for this many ids is drawn at once (one `randomBytes` call, 4 KiB). */
const idsPerDraw = 256;
const randomHexPerId = 16;

/** Where ids come from; tests give their own (the defaults: node:crypto and `Date.now`). */
export interface RequestIdSources {
  randomBytes(size: number): Buffer;
  now(): number;
}

const systemSources: RequestIdSources = { randomBytes, now: Date.now };

/**
 * `req_`, the time in milliseconds (base 36, so ids sort by time), then 64
 * random bits. Time-ordered ids append to the traces' primary-key index
 * instead of landing at random pages of it.
 *
 * Made for every call before anything else, so it is cheap: the random part
 * is a 16-character slice of hex drawn 256 ids at a time (V8 slices without
 * copying), and the time part is made once per millisecond. Measured:
 * docs/benchmarks.md.
 *
 * Invariant: the ids are those of the plain version, `req_` +
 * `now().toString(36).padStart(9, '0')` + `randomBytes(8).toString('hex')`
 * per id, given the same clock and the same random bytes
 * (`request-id.test.ts`).
 */
export function createRequestIds(sources: RequestIdSources = systemSources): () => string {
  let randomHex = '';
  let offset = 0;
  let lastMillisecond = -1;
  let timePart = '';
  return function newRequestId(): string {
    if (offset === randomHex.length) {
      randomHex = sources.randomBytes((idsPerDraw * randomHexPerId) / 2).toString('hex');
      offset = 0;
    }
    const random = randomHex.slice(offset, offset + randomHexPerId);
    offset += randomHexPerId;
    const now = sources.now();
    if (now !== lastMillisecond) {
      lastMillisecond = now;
      timePart = now.toString(36).padStart(9, '0');
    }
    return `req_${timePart}${random}`;
  };
}

/** The process's ids (one generator: its draws are shared by every caller). */
export const newRequestId = createRequestIds();
