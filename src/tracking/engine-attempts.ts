/**
 * A call's upstream attempts as the trace API, the dashboard and `/metrics`
 * tell them. A trace keeps the list only when the call made several
 * (`Trace.attempts`); its one attempt, when it made one, is its replica with
 * the call's own outcome.
 */
import type { Trace } from '../store/store.js';

export interface EngineAttempt {
  replica: string;
  /** `ok`, or the attempt's error code. */
  outcome: string;
}

type AttemptFields = Pick<Trace, 'replica' | 'attempts' | 'status' | 'errorClass'>;

/** The outcome of a call's only attempt: `ok`, or the call's error code (`unknown` for a failure without one, as `taskgate_errors_total` says). */
export function singleAttemptOutcome(trace: Pick<Trace, 'status' | 'errorClass'>): string {
  return trace.status === 'ok' ? 'ok' : (trace.errorClass ?? 'unknown');
}

/** Every attempt of the call in order: the stored list, else the one its replica made, else none (it never reached an engine). */
export function engineAttempts(trace: AttemptFields): EngineAttempt[] {
  if (trace.attempts !== null) return trace.attempts;
  return trace.replica === null ? [] : [{ replica: trace.replica, outcome: singleAttemptOutcome(trace) }];
}
