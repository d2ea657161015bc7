/**
 * The rules of `budget-ledger.ts` that every back end applies the same way,
 * as pure functions: what a valid reservation is, what a settlement changes,
 * and how a back end's raw answer (`SpendReply`: the decision and each cap's
 * spend) becomes a `ReserveResult` with its soft-threshold crossings. The
 * back ends differ only in where the spend lives (a Map, a Lua script, the
 * primary process).
 */
import { alertThresholdMicros } from './budget-caps.js';
import type { CapReservation, ReserveResult, Ticket } from './budget-ledger.js';

/** A back end's answer to a reservation: plain data, as Redis and the cluster IPC carry it. */
export interface SpendReply {
  reserved: boolean;
  /** The index in the request's caps of the first cap that refused; -1 when reserved. */
  refusedIndex: number;
  /** Each cap's spend, in the request's order: after the reservation when reserved, as it is when refused. */
  spentMicros: readonly number[];
}

/** Throws a RangeError for a reservation no back end should see (a caller's bug, not an outage). */
export function checkReservation(request: CapReservation): void {
  if (!Number.isSafeInteger(request.amountMicros) || request.amountMicros < 0) {
    throw new RangeError(`a reservation's amountMicros must be a safe integer of at least 0, got ${request.amountMicros}`);
  }
  const ids = new Set<string>();
  for (const cap of request.caps) {
    if (ids.has(cap.id)) throw new RangeError(`cap ${cap.id} appears twice in one reservation`);
    ids.add(cap.id);
    if (!Number.isSafeInteger(cap.limitMicros) || cap.limitMicros < 0) {
      throw new RangeError(`cap ${cap.id} has a limit that is not a safe integer of at least 0: ${cap.limitMicros}`);
    }
  }
}

/** The change a settlement makes to each of its caps; null when there is none (equal, or an actual that is not a safe integer ≥ 0). */
export function settlementDelta(ticket: Ticket, actualMicros: number): number | null {
  if (!Number.isSafeInteger(actualMicros) || actualMicros < 0 || ticket.capIds.length === 0) return null;
  const delta = actualMicros - ticket.amountMicros;
  return delta === 0 ? null : delta;
}

/** The result of a reservation that reserves nothing because no cap covers the call. */
export function emptyReservation(): ReserveResult {
  return { reserved: true, ticket: { capIds: [], amountMicros: 0 }, crossed: [] };
}

/**
 * The ReserveResult a back end's reply means. A cap's threshold is crossed
 * when the spend before (after − amount: the reservation was one atomic
 * step) was under it and the spend after is at or above it.
 */
export function reserveResultOf(request: CapReservation, reply: SpendReply): ReserveResult {
  const { caps, amountMicros } = request;
  if (!reply.reserved) {
    const refusedBy = caps[reply.refusedIndex];
    if (refusedBy === undefined) throw new Error(`a ledger refused by cap ${reply.refusedIndex} of ${caps.length}`);
    return { reserved: false, refusedBy, spentMicros: reply.spentMicros[reply.refusedIndex] ?? 0 };
  }
  const crossed = caps.filter((cap, index) => {
    const threshold = alertThresholdMicros(cap);
    const after = reply.spentMicros[index] ?? 0;
    return threshold !== null && after - amountMicros < threshold && after >= threshold;
  });
  return { reserved: true, ticket: { capIds: caps.map((cap) => cap.id), amountMicros }, crossed };
}
