/**
 * Where a ledger shared by several processes keeps its spend: Redis (one Lua
 * script), or the primary process of `serve --workers N` (its spend book,
 * asked over IPC). Only the primitives live here; what to do when the place
 * does not answer (the outage rule) is `shared-budget-ledger.ts`, the same
 * for both.
 *
 * Every method may reject (the place is away, or too slow): the caller
 * falls back. None of them retries; a command that timed out may still have
 * happened there (counted twice at worst, never lost: a reservation's
 * fallback is conservative).
 */
import type { Cap } from '../budget-caps.js';
import type { SpendReply } from '../ledger-rules.js';

/** One cap's change: a settlement (`resetsAt` null: only to a cap the place holds) or spend made while it was away (created if absent). */
export interface SpendDelta {
  capId: string;
  deltaMicros: number;
  resetsAt: number | null;
}

export interface SharedLedger {
  /** The place in words, for logs and `degraded()`: "Redis at redis://127.0.0.1:6379/", "the primary process". */
  readonly where: string;
  /** False while the place is known not to answer (its connection is down): the ledger then does not ask it. */
  reachable(): boolean;
  /** Checks every cap and adds the amount to all of them or to none, atomically there (as `SpendBook.reserve`). */
  reserve(caps: readonly Cap[], amountMicros: number): Promise<SpendReply>;
  /** Adds each delta (never below 0); resolves with each cap's spend after, or null where nothing was changed. */
  add(deltas: readonly SpendDelta[]): Promise<Array<number | null>>;
  /** Each cap's spend there (0 when absent), in order. */
  spent(capIds: readonly string[]): Promise<number[]>;
  /** Resolves once the place answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
