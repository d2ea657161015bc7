/**
 * A BudgetLedger over a place shared by several processes (`SharedLedger`:
 * Redis, or the primary process), with the outage rule of
 * `budget-ledger.ts`.
 *
 * While the place answers, every reservation, settlement and read goes
 * there, and this ledger remembers the spend each answer reports (`known`).
 * At the first failure (a rejected command, a lost connection) it logs once,
 * says so in `degraded()`, and from then on never waits on the place:
 *   - 'open': a local spend book, started from `known`, takes the
 *     reservations; caps hold per process.
 *   - 'closed': reservations that name a cap are answered `unavailable`.
 * Either way settlements are applied locally, and everything added locally
 * (reservations, settlements) is kept in `unsynced` per cap. Every
 * `probeIntervalMs`, and when the owner says the place may be back
 * (`probe()`), it pings the place, adds `unsynced` there (creating caps a
 * restarted Redis lost), and only then goes back to it: the money spent
 * during an outage is not forgotten by the fleet.
 */
import { errorFields, type Logger } from '../../log/logger.js';
import { memoryGraceMs } from '../budget-caps.js';
import type { BudgetLedger, CapReservation, OutageRule, ReserveResult } from '../budget-ledger.js';
import { checkReservation, emptyReservation, reserveResultOf, settlementDelta } from '../ledger-rules.js';
import { createSpendBook, type SpendBook } from '../memory/spend-book.js';
import type { SharedLedger, SpendDelta } from './shared-ledger.js';

export interface SharedBudgetLedgerOptions {
  shared: SharedLedger;
  /** `budgets.on_outage`. */
  onOutage: OutageRule;
  logger: Logger;
  /** How often a degraded ledger asks the place again (ms). Default 1000. */
  probeIntervalMs?: number;
  now?: () => number;
}

export interface SharedBudgetLedger extends BudgetLedger {
  /** The place is known to be away (its connection closed): degrade now rather than at the next failed call. */
  lost(problem: unknown): void;
  /** The place may answer again (a connection is ready): try it now rather than at the next interval. */
  probe(): Promise<void>;
}

export function createSharedBudgetLedger(options: SharedBudgetLedgerOptions): SharedBudgetLedger {
  const { shared, onOutage, logger } = options;
  const now = options.now ?? Date.now;
  /** The spend the place last reported for each cap, and the cap's period. */
  const known = createSpendBook({ now, graceMs: memoryGraceMs });
  /** While the place does not answer: when that started, and this process's own book. */
  let fallback: { since: number; book: SpendBook } | null = null;
  /** What was added locally since, per cap, to add to the place once it answers. */
  const unsynced = new Map<string, { deltaMicros: number; resetsAt: number }>();
  let lastProblem = '';
  let probing = false;
  let closed = false;

  /** Degrades (once) and returns the local book. */
  function lost(problem: unknown): SpendBook {
    // Calls after close are not supported; a connection's last events may still come.
    if (closed) return known;
    lastProblem = problem instanceof Error ? problem.message : String(problem);
    if (fallback !== null) return fallback.book;
    const book = createSpendBook({ now, graceMs: memoryGraceMs });
    for (const [capId, entry] of known.entries()) book.set(capId, entry.spentMicros, entry.resetsAt);
    fallback = { since: now(), book };
    const consequence =
      onOutage === 'open'
        ? 'this process now enforces budgets alone, from the spend it last knew (a fleet of N processes may pass a cap by up to N times what was left), until it does'
        : 'calls covered by a budget are refused with 503 budget_unavailable (budgets.on_outage: closed) until it does';
    logger.warn(`budgets: ${shared.where} does not answer; ${consequence}`, { ...errorFields(problem), on_outage: onOutage });
    return book;
  }

  function remember(capId: string, spentMicros: number | null | undefined, resetsAt: number | null): void {
    const period = resetsAt ?? known.entry(capId)?.resetsAt;
    if (typeof spentMicros === 'number' && period !== undefined) known.set(capId, spentMicros, period);
  }

  function addUnsynced(capId: string, deltaMicros: number, resetsAt: number): void {
    const entry = unsynced.get(capId);
    unsynced.set(capId, { deltaMicros: (entry?.deltaMicros ?? 0) + deltaMicros, resetsAt });
  }

  function reserveLocally(request: CapReservation, book: SpendBook): ReserveResult {
    if (onOutage === 'closed') return { reserved: false, unavailable: true };
    const reply = book.reserve(request.caps, request.amountMicros);
    if (reply.reserved) for (const cap of request.caps) addUnsynced(cap.id, request.amountMicros, cap.resetsAt);
    return reserveResultOf(request, reply);
  }

  function settleLocally(capIds: readonly string[], deltaMicros: number, book: SpendBook): void {
    for (const capId of capIds) {
      // A cap this process never saw the period of has expired (or was never reserved here): nothing to settle.
      const entry = book.entry(capId) ?? known.entry(capId);
      if (entry === null) continue;
      if (book.entry(capId) === null) book.set(capId, entry.spentMicros, entry.resetsAt);
      book.add(capId, deltaMicros, null);
      addUnsynced(capId, deltaMicros, entry.resetsAt);
    }
  }

  async function reserveShared(request: CapReservation): Promise<ReserveResult> {
    try {
      const reply = await shared.reserve(request.caps, request.amountMicros);
      const result = reserveResultOf(request, reply);
      request.caps.forEach((cap, index) => remember(cap.id, reply.spentMicros[index], cap.resetsAt));
      // Reserved there after this process fell back (an answer late, or sent just before): count it here too.
      if (reply.reserved && fallback !== null)
        for (const cap of request.caps) fallback.book.add(cap.id, request.amountMicros, cap.resetsAt);
      return result;
    } catch (error) {
      return reserveLocally(request, lost(error));
    }
  }

  /** Adds one batch of what was spent locally to the place; when the place fails, the batch is kept for the next try. */
  async function syncBatch(): Promise<number> {
    const batch: SpendDelta[] = [...unsynced].map(([capId, entry]) => ({ capId, ...entry }));
    unsynced.clear();
    try {
      const after = await shared.add(batch);
      batch.forEach((delta, index) => remember(delta.capId, after[index], delta.resetsAt));
      return batch.length;
    } catch (error) {
      for (const delta of batch) addUnsynced(delta.capId, delta.deltaMicros, delta.resetsAt as number);
      throw error;
    }
  }

  async function probe(): Promise<void> {
    if (fallback === null || probing || closed || !shared.reachable()) return;
    probing = true;
    try {
      await shared.ping();
      let synced = 0;
      while (unsynced.size > 0) synced += await syncBatch();
      // The loop's last check and the switch below run in one turn: nothing can be added locally in between.
      if (closed || fallback === null) return;
      logger.info(`budgets: ${shared.where} answers again; budgets are shared again`, {
        degraded_seconds: Math.round((now() - fallback.since) / 1000),
        caps_synced: synced,
      });
      fallback.book.close();
      fallback = null;
    } catch (error) {
      lastProblem = error instanceof Error ? error.message : String(error);
    } finally {
      probing = false;
    }
  }
  const prober = setInterval(() => void probe(), options.probeIntervalMs ?? 1_000);
  prober.unref();

  return {
    reserve(request) {
      checkReservation(request);
      if (request.caps.length === 0) return emptyReservation();
      if (fallback !== null) return reserveLocally(request, fallback.book);
      if (!shared.reachable()) return reserveLocally(request, lost(new Error('not connected')));
      return reserveShared(request);
    },
    settle(ticket, actualMicros) {
      const delta = settlementDelta(ticket, actualMicros);
      if (delta === null) return;
      if (fallback !== null) return settleLocally(ticket.capIds, delta, fallback.book);
      if (!shared.reachable()) return settleLocally(ticket.capIds, delta, lost(new Error('not connected')));
      // Sent now, in order with the calls after it (one connection, one IPC link): a read that follows sees it.
      shared.add(ticket.capIds.map((capId) => ({ capId, deltaMicros: delta, resetsAt: null }))).then(
        (after) =>
          ticket.capIds.forEach((capId, index) => {
            remember(capId, after[index], null);
            if (after[index] !== null) fallback?.book.add(capId, delta, null);
          }),
        (error: unknown) => settleLocally(ticket.capIds, delta, lost(error)),
      );
    },
    async spent(capIds) {
      if (capIds.length === 0) return new Map();
      if (fallback === null) {
        try {
          if (!shared.reachable()) throw new Error('not connected');
          const spent = await shared.spent(capIds);
          capIds.forEach((capId, index) => remember(capId, spent[index], null));
          return new Map(capIds.map((capId, index) => [capId, spent[index] ?? 0]));
        } catch (error) {
          lost(error);
        }
      }
      const book = fallback?.book;
      return new Map(capIds.map((capId) => [capId, book?.entry(capId)?.spentMicros ?? known.entry(capId)?.spentMicros ?? 0]));
    },
    degraded() {
      if (fallback === null) return null;
      const seconds = Math.round((now() - fallback.since) / 1000);
      const state =
        onOutage === 'open'
          ? `budgets are enforced per process since ${seconds} s`
          : `calls covered by a budget are refused since ${seconds} s (budgets.on_outage: closed)`;
      return `${state}: ${shared.where} does not answer (${lastProblem})`;
    },
    lost: (problem) => void lost(problem),
    probe,
    async close() {
      closed = true;
      clearInterval(prober);
      await shared.close();
      known.close();
      fallback?.book.close();
    },
  };
}
