/**
 * The BudgetLedger contract: spend caps enforced before a call, by reserving
 * the call's worst case against every cap that covers it (`budget-caps.ts`
 * makes the caps, `worst-case.ts` the amount) and settling at the actual
 * cost when the call ends.
 *
 * Back ends, each running one suite (`test/contracts/budget-ledger-contract.ts`):
 *   - `memory/`: this process's ledger, in a Map; synchronous answers.
 *   - `redis/`: one Lua script per reservation, shared by every process that
 *     names the same Redis.
 *   - `cluster/`: the workers of `serve --workers N` ask the primary, which
 *     holds a memory ledger.
 *   - `store/`: PostgreSQL (or SQLite) rows, locked per reservation.
 * The shared ones (Redis, cluster) keep the outage rule in `shared/`.
 *
 * Rules every back end keeps:
 *   - Atomic, all or nothing: a reservation checks every cap and adds its
 *     amount to all of them, or to none, as one step however many processes
 *     reserve at once (with Redis, across processes: one script). Two
 *     reservations never both fit where only one does, so the spend never
 *     passes a cap through reservations (only a settlement above its
 *     reservation can take it past: see `settle`).
 *   - A cap refuses when spent + amount > limit: a reservation that ends
 *     exactly at the limit fits.
 *   - Integer micro-dollars everywhere (no float sums drifting between
 *     processes); amounts are safe integers of at least 0, and the cap ids of
 *     one reservation are distinct (else `reserve` throws a RangeError: a
 *     caller's bug, not an outage).
 *   - Periods expire: a cap's spend is kept until its period has ended
 *     (`resetsAt`) plus a grace for late settlements (memory 1 h, Redis 1 day),
 *     then dropped; the next period is another cap id, starting at nothing.
 *   - Nothing rejects or throws because a back end is away. Outage rule
 *     (config `budgets.on_outage`, for the shared back ends): 'open' goes on
 *     from a local memory ledger that starts from the last spend this process
 *     knew of each cap (caps still hold per process: a fleet of N may pass a
 *     cap by up to N times what was left), and adds what it spent meanwhile to
 *     the shared ledger once that answers again; 'closed' answers every
 *     reservation that names a cap with `{ reserved: false, unavailable: true }`
 *     (the caller's 503 `budget_unavailable`) until it answers. Either way
 *     `degraded()` says so.
 */
import type { Cap } from './budget-caps.js';

/** One reservation: `amountMicros` on every cap of `caps`. */
export interface CapReservation {
  /** The caps that cover the call, in the order a refusal should name them; empty: nothing to reserve (reserved at once, no I/O). */
  caps: readonly Cap[];
  /** The call's worst case in micro-dollars (a safe integer, at least 0). */
  amountMicros: number;
}

export type ReserveResult =
  /** Reserved on every cap. `crossed`: the caps whose soft threshold (`alertAt`) this reservation crossed, each reported once per crossing. */
  | { reserved: true; ticket: Ticket; crossed: Cap[] }
  /** Reserved on none: `refusedBy` is the first cap, in the request's order, that this amount would take past its limit; `spentMicros` its spend now. */
  | { reserved: false; refusedBy: Cap; spentMicros: number }
  /** Reserved on none because the shared ledger does not answer and `budgets.on_outage` is 'closed' (the caller's 503 `budget_unavailable`). */
  | { reserved: false; unavailable: true };

/** What a reservation holds, to settle it: plain data (it crosses the cluster IPC). */
export interface Ticket {
  capIds: readonly string[];
  amountMicros: number;
}

export interface BudgetLedger {
  /**
   * All or nothing: reserves `amountMicros` on every cap, or on none when
   * any cap would pass its limit (spent + amount > limit). A soft threshold
   * is crossed when the spend before is under `alertAt × limit` and the spend
   * after is at or above it: only a reservation reports it, once (a
   * settlement that brings the spend back under it lets a later reservation
   * cross it again). The memory back end answers synchronously (no extra
   * tick on the request path); the shared ones with a promise that never
   * rejects: see `degraded()`.
   */
  reserve(request: CapReservation): ReserveResult | Promise<ReserveResult>;

  /**
   * Replaces a ticket's reservation by the call's actual cost, in micros:
   * adds (actual − reserved) to each of its caps. Actual may be more than
   * reserved (the estimate was short): it is added all the same, settlement
   * is never refused, and the cap refuses the next reservations. A cap whose
   * period has expired, or that the ledger never held, is left alone (never
   * recreated, never below zero). Fire and forget: it never throws, and a
   * read (`spent`, `reserve`) that follows it on the same ledger sees it. An
   * actual that is not a safe integer of at least 0 (a caller's bug) keeps
   * the reservation as it is.
   */
  settle(ticket: Ticket, actualMicros: number): void;

  /**
   * What each cap has spent in its period, settled plus reserved: 0 for a
   * cap id the ledger does not hold (unknown, or its period expired). While
   * degraded, the spend this process knows (never rejects).
   */
  spent(capIds: readonly string[]): Promise<Map<string, number>>;

  /** Null while the ledger is where the config put it; else why not (for /readyz `degraded: ["budgets"]` and /metrics). */
  degraded(): string | null;

  /** Stops timers and closes connections; calls after it are not supported. */
  close(): Promise<void>;
}

/** What `budgets.on_outage` says to do while a shared ledger does not answer (see the file's comment). */
export type OutageRule = 'open' | 'closed';
