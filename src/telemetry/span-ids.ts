/**
 * Trace and span ids: random, lowercase hex, cut from a pool of random bytes
 * refilled 4 KiB at a time (a call takes 16 to 32 bytes: a trace id unless
 * the caller sent one, and a span id for the call and each engine call; one
 * refill serves over a hundred calls).
 */
import { randomFillSync } from 'node:crypto';

export interface SpanIds {
  traceId(): string;
  spanId(): string;
}

const POOL_BYTES = 4096;

export function createSpanIds(): SpanIds {
  const pool = Buffer.allocUnsafe(POOL_BYTES);
  let used = POOL_BYTES;
  const take = (bytes: number) => {
    if (used + bytes > POOL_BYTES) {
      randomFillSync(pool);
      used = 0;
    }
    used += bytes;
    return pool.toString('hex', used - bytes, used);
  };
  return {
    // All zeros is not a valid id (W3C Trace Context); at 2^-64 and below, drawing again costs nothing.
    traceId: () => nonZero(take, 16, ZERO_TRACE_ID),
    spanId: () => nonZero(take, 8, ZERO_SPAN_ID),
  };
}

const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

function nonZero(take: (bytes: number) => string, bytes: number, zero: string): string {
  let id = take(bytes);
  while (id === zero) id = take(bytes);
  return id;
}
