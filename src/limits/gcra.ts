/**
 * The generic cell rate algorithm, as a pure function. A key's whole state is
 * one number, its theoretical arrival time (TAT): the moment at which its
 * budget would be full again. Each request pushes TAT one emission interval
 * (60 s / rate) into the future; a request is refused when that would put TAT
 * more than a full window ahead of now. Refill is continuous, not per minute.
 */
import type { RateDecision } from './rate-limiter.js';

const windowMs = 60_000;

export function takeGcra(
  theoreticalArrival: number | undefined,
  requestsPerMinute: number,
  now: number,
): { decision: RateDecision; theoreticalArrival: number } {
  const interval = windowMs / requestsPerMinute;
  const start = theoreticalArrival === undefined || theoreticalArrival < now ? now : theoreticalArrival;
  const next = start + interval;
  const allowed = next - now <= windowMs + 1e-9;
  const arrival = allowed ? next : start;
  const backlog = arrival - now;
  const remaining = Math.max(0, Math.floor((windowMs - backlog) / interval + 1e-9));
  return {
    theoreticalArrival: arrival,
    decision: {
      allowed,
      limit: requestsPerMinute,
      remaining,
      resetSeconds: Math.round(backlog) / 1000,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((next - now - windowMs) / 1000)),
    },
  };
}
