/**
 * How a call ended, for its replica's circuit breaker.
 *
 * What counts against a replica's circuit: errors with `retryable === true`
 * (5xx, unreachable, overloaded, timeouts, bad replies) and anything that is
 * not a GatewayError (a bug, but a failure of that replica all the same). A
 * rejected request (InvalidRequestError) shows the replica is healthy; a
 * client that went away, or a replica too busy to take the call
 * (EngineOverloadedError), says nothing about it either way.
 */
import { ClientAbortError, EngineOverloadedError, GatewayError } from '../api/errors.js';

/** `release`: the call says nothing about the replica (its permit is handed back). */
export type CallOutcome = 'success' | 'failure' | 'release';

/** The outcome of a call that threw `error` while `signal` was its caller's. */
export function outcomeOf(error: unknown, signal: AbortSignal): CallOutcome {
  if (signal.aborted || error instanceof ClientAbortError || error instanceof EngineOverloadedError) return 'release';
  if (error instanceof GatewayError && !error.retryable) return 'success';
  return 'failure';
}
