/**
 * Trace and span ids as numbers: a span id is 64 random bits held as two
 * unsigned 32-bit words (`SpanId`), a trace id 128 bits as four
 * (`TraceId`), most significant first, which is W3C's byte order. Making one
 * reads words from a pool of random bytes refilled 4 KiB at a time, and
 * writing one is a few byte stores: no hex string is made or parsed on the
 * hot path. Hex, the form W3C `traceparent` and OTLP JSON use, is made only
 * when asked for (a call's origin for the router, the JSON encoding, a
 * caller's `traceparent` read once).
 */
import { randomFillSync } from 'node:crypto';

/** A span id: two unsigned 32-bit words, `high` first. */
export interface SpanId {
  readonly high: number;
  readonly low: number;
}

/** A trace id: four unsigned 32-bit words, `w0` first. */
export interface TraceId {
  readonly w0: number;
  readonly w1: number;
  readonly w2: number;
  readonly w3: number;
}

/** Random words for new ids. */
export interface SpanIdSource {
  /** A random unsigned 32-bit word. */
  word(): number;
  /** A random span id, never all zeros (W3C Trace Context: an invalid id). */
  spanId(): SpanId;
  /** A random trace id, never all zeros. */
  traceId(): TraceId;
}

const POOL_WORDS = 1024;

export function createSpanIdSource(): SpanIdSource {
  const pool = new Uint32Array(POOL_WORDS);
  let used = POOL_WORDS;
  const word = () => {
    if (used === POOL_WORDS) {
      randomFillSync(pool);
      used = 0;
    }
    return pool[used++] as number;
  };
  return {
    word,
    spanId() {
      // All zeros comes up once in 2^64 draws; drawing again costs nothing.
      for (;;) {
        const high = word();
        const low = word();
        if ((high | low) !== 0) return { high, low };
      }
    },
    traceId() {
      for (;;) {
        const id = { w0: word(), w1: word(), w2: word(), w3: word() };
        if ((id.w0 | id.w1 | id.w2 | id.w3) !== 0) return id;
      }
    },
  };
}

/** Eight lowercase hex digits of an unsigned 32-bit word. */
function wordHex(word: number): string {
  return (word >>> 0).toString(16).padStart(8, '0');
}

export function spanIdHex(id: SpanId): string {
  return wordHex(id.high) + wordHex(id.low);
}

export function traceIdHex(id: TraceId): string {
  return wordHex(id.w0) + wordHex(id.w1) + wordHex(id.w2) + wordHex(id.w3);
}

/** A span id from 16 hex digits (already validated, as the W3C propagator and the router's origins give them). */
export function parseSpanId(hex: string): SpanId {
  return { high: Number.parseInt(hex.slice(0, 8), 16), low: Number.parseInt(hex.slice(8, 16), 16) };
}

/** A trace id from 32 hex digits (already validated). */
export function parseTraceId(hex: string): TraceId {
  return {
    w0: Number.parseInt(hex.slice(0, 8), 16),
    w1: Number.parseInt(hex.slice(8, 16), 16),
    w2: Number.parseInt(hex.slice(16, 24), 16),
    w3: Number.parseInt(hex.slice(24, 32), 16),
  };
}
