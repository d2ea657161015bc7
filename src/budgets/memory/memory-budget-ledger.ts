/**
 * One process's budget ledger, over a spend book: every answer synchronous,
 * so a reservation costs the request path no extra tick. Used when one
 * process serves (no Redis, no shared store), seeded at start with what each
 * cap already spent this period (`seed`), so a restart does not forget the
 * day's spend. Periods are dropped an hour after they end.
 */
import { memoryGraceMs } from '../budget-caps.js';
import type { BudgetLedger, CapReservation, ReserveResult } from '../budget-ledger.js';
import { checkReservation, emptyReservation, reserveResultOf, settlementDelta } from '../ledger-rules.js';
import { createSpendBook } from './spend-book.js';

export interface MemoryBudgetLedger extends BudgetLedger {
  /** Answers synchronously. */
  reserve(request: CapReservation): ReserveResult;
  /** Sets each cap's spend so far (from the store's traces at start); entries of periods that ended are ignored. */
  seed(entries: Iterable<{ capId: string; spentMicros: number; resetsAt: number }>): void;
}

export function createMemoryBudgetLedger(options: { now?: () => number } = {}): MemoryBudgetLedger {
  const book = createSpendBook({ now: options.now, graceMs: memoryGraceMs });
  return {
    reserve(request) {
      checkReservation(request);
      if (request.caps.length === 0) return emptyReservation();
      return reserveResultOf(request, book.reserve(request.caps, request.amountMicros));
    },
    settle(ticket, actualMicros) {
      const delta = settlementDelta(ticket, actualMicros);
      if (delta === null) return;
      for (const capId of ticket.capIds) book.add(capId, delta, null);
    },
    async spent(capIds) {
      return new Map(capIds.map((capId) => [capId, book.entry(capId)?.spentMicros ?? 0]));
    },
    seed(entries) {
      for (const { capId, spentMicros, resetsAt } of entries) book.set(capId, spentMicros, resetsAt);
    },
    degraded: () => null,
    async close() {
      book.close();
    },
  };
}
