/**
 * Spend per cap id in one process, with the ledger's rules applied
 * synchronously: the memory ledger's whole state, the primary's under
 * `serve --workers N`, and a shared ledger's local stand-in while its back
 * end is away. Every operation is one synchronous step, so reservations from
 * concurrent calls (or workers, answered in turn) are serialised for free.
 *
 * An entry lives until its period's `resetsAt` plus `graceMs`; expired
 * entries read as absent and a sweep once a minute drops them, so the Map
 * holds only live periods.
 */
import type { Cap } from '../budget-caps.js';
import type { SpendReply } from '../ledger-rules.js';

export interface SpendEntry {
  spentMicros: number;
  resetsAt: number;
}

export interface SpendBook {
  /** Checks every cap, then adds `amountMicros` to all of them or to none (spent + amount > limit refuses). */
  reserve(caps: readonly Cap[], amountMicros: number): SpendReply;
  /**
   * Adds `deltaMicros` (may be negative; the spend never goes below 0) to a
   * cap. With `resetsAt` null only to a cap the book holds (a settlement:
   * an expired or unknown cap is left alone); with a `resetsAt` a cap it
   * does not hold starts from nothing (spend made elsewhere, added later).
   * Returns the spend after, or null when nothing was changed.
   */
  add(capId: string, deltaMicros: number, resetsAt: number | null): number | null;
  /** A cap's live entry, or null. */
  entry(capId: string): SpendEntry | null;
  /** Sets a cap's spend (starting from a spend known elsewhere); ignored when its period has expired. */
  set(capId: string, spentMicros: number, resetsAt: number): void;
  /** Every live entry. */
  entries(): Array<[string, SpendEntry]>;
  /** Stops the sweep and forgets everything. */
  close(): void;
}

export interface SpendBookOptions {
  now?: () => number;
  /** How long after its period ends an entry is kept (ms). */
  graceMs: number;
}

export function createSpendBook(options: SpendBookOptions): SpendBook {
  const now = options.now ?? Date.now;
  const book = new Map<string, SpendEntry>();
  const isLive = (entry: SpendEntry, time: number) => entry.resetsAt + options.graceMs > time;
  const live = (capId: string, time: number): SpendEntry | null => {
    const entry = book.get(capId);
    return entry !== undefined && isLive(entry, time) ? entry : null;
  };
  const sweeper = setInterval(() => {
    const time = now();
    for (const [capId, entry] of book) if (!isLive(entry, time)) book.delete(capId);
  }, 60_000);
  sweeper.unref();

  function set(capId: string, spentMicros: number, resetsAt: number): void {
    if (isLive({ spentMicros, resetsAt }, now())) book.set(capId, { spentMicros: Math.max(0, spentMicros), resetsAt });
    else book.delete(capId);
  }

  return {
    reserve(caps, amountMicros) {
      const time = now();
      const spent = caps.map((cap) => live(cap.id, time)?.spentMicros ?? 0);
      const refusedIndex = caps.findIndex((cap, index) => (spent[index] as number) + amountMicros > cap.limitMicros);
      if (refusedIndex !== -1) return { reserved: false, refusedIndex, spentMicros: spent };
      const after = spent.map((value) => value + amountMicros);
      caps.forEach((cap, index) => set(cap.id, after[index] as number, cap.resetsAt));
      return { reserved: true, refusedIndex: -1, spentMicros: after };
    },
    add(capId, deltaMicros, resetsAt) {
      const entry = live(capId, now());
      if (entry === null && resetsAt === null) return null;
      const after = Math.max(0, (entry?.spentMicros ?? 0) + deltaMicros);
      set(capId, after, entry?.resetsAt ?? (resetsAt as number));
      return after;
    },
    entry: (capId) => live(capId, now()),
    set,
    entries() {
      const time = now();
      return [...book].filter(([, entry]) => isLive(entry, time));
    },
    close() {
      clearInterval(sweeper);
      book.clear();
    },
  };
}
