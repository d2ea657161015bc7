/**
 * The generic cell rate algorithm, as pure functions. A budget's whole state
 * is one number, its theoretical arrival time (TAT): the moment at which the
 * budget would be full again. Here it is handled as the backlog, TAT minus
 * now (0 for a full budget). Each request pushes the backlog one emission
 * interval (60 s / rate) further; a request is refused when that would put it
 * more than a full window ahead. Refill is continuous, not per minute.
 *
 * Tokens use the same clock: a token costs 60 s / tokens-per-minute. A call is
 * admitted while at least one token is left, and spends what it used once it
 * ends, with no cap, so a key that overspent waits until it is back under.
 *
 * The Redis back end runs the same arithmetic in Lua (redis/gcra-script.ts)
 * and hands its backlogs to `admissionOf`, so both back ends report the same
 * headers for the same state.
 */
import type { Admission, BudgetLimits, RateDecision } from './rate-limiter.js';

export const windowMs = 60_000;
/** Floating-point slack, so a budget of exactly the window is not refused by a rounding error. */
const epsilon = 1e-9;

/** Milliseconds until a budget with this TAT is full again (0 when it already is). */
export function backlogOf(theoreticalArrival: number | undefined, now: number): number {
  return theoreticalArrival === undefined || theoreticalArrival < now ? 0 : theoreticalArrival - now;
}

/** Whether one more unit (a request, a token) fits in a budget with this backlog. */
export function hasRoom(backlog: number, perMinute: number): boolean {
  return backlog + windowMs / perMinute <= windowMs + epsilon;
}

/** What a budget with this backlog reports: the `x-ratelimit-*` values and, when `allowed` is false, the wait. */
export function decisionOf(perMinute: number, backlog: number, allowed: boolean): RateDecision {
  const interval = windowMs / perMinute;
  return {
    allowed,
    limit: perMinute,
    remaining: Math.max(0, Math.floor((windowMs - backlog) / interval + epsilon)),
    resetSeconds: Math.round(backlog) / 1000,
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((backlog + interval - windowMs) / 1000)),
  };
}

/**
 * Admission of one call against a key's request budget and, when it has one,
 * its token budget. The call takes one request when the token budget has room
 * and the request budget fits one more; otherwise it takes nothing.
 * Returns the request backlog to store (unchanged when nothing was taken).
 */
export function admitGcra(
  requestBacklog: number,
  tokenBacklog: number,
  limits: BudgetLimits,
): { admission: Admission; requestBacklog: number } {
  const tokensFit = limits.tokensPerMinute === null || hasRoom(tokenBacklog, limits.tokensPerMinute);
  const taken = tokensFit && hasRoom(requestBacklog, limits.requestsPerMinute);
  const backlog = taken ? requestBacklog + windowMs / limits.requestsPerMinute : requestBacklog;
  return { admission: admissionOf(limits, taken, backlog, tokenBacklog), requestBacklog: backlog };
}

/**
 * The admission a back end reports, from what it decided (`taken`) and the
 * backlogs after the decision. Pure, so Redis's answer and memory's agree.
 */
export function admissionOf(limits: BudgetLimits, taken: boolean, requestBacklog: number, tokenBacklog: number): Admission {
  if (limits.tokensPerMinute === null) {
    const requests = decisionOf(limits.requestsPerMinute, requestBacklog, taken);
    return { allowed: taken, refusedBy: taken ? null : 'requests', retryAfterSeconds: requests.retryAfterSeconds, requests, tokens: null };
  }
  // Refused: say which budgets lack room; the wait is the longer of theirs.
  const requests = decisionOf(limits.requestsPerMinute, requestBacklog, taken || hasRoom(requestBacklog, limits.requestsPerMinute));
  const tokens = decisionOf(limits.tokensPerMinute, tokenBacklog, hasRoom(tokenBacklog, limits.tokensPerMinute));
  const refusedBy = taken ? null : tokens.allowed ? 'requests' : 'tokens';
  return { allowed: taken, refusedBy, retryAfterSeconds: Math.max(requests.retryAfterSeconds, tokens.retryAfterSeconds), requests, tokens };
}

/** The token backlog after spending `tokens`: no cap, so it may exceed the window (the budget below zero). */
export function spendGcra(tokenBacklog: number, tokensPerMinute: number, tokens: number): number {
  return tokenBacklog + (Math.max(0, tokens) * windowMs) / tokensPerMinute;
}
