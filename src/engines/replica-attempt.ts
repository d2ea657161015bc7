/**
 * What the pool writes into a call's record as it tries the call: the
 * replica, every attempt when there was more than one, and the call's share
 * of its engines' busy time and its price.
 */
import type { EngineMeter, MeterMark } from './engine-meter.js';

/**
 * Filled in with the engine id of each replica as it is tried, so the trace of
 * a call that failed still names the replica that failed it, and with the
 * call's share of its engines' time. Any object with these fields will do (a
 * call's trace record), which costs no allocation.
 */
export interface ReplicaAttempt {
  replica: string | null;
  /** The call's share of its engines' busy time (`EngineMeter`), seconds, summed over its attempts; null while none was metered. */
  engineSeconds: number | null;
  /** That time at its engines' `cost_per_hour`, USD; null while no metered engine had a price. */
  measuredCostUsd: number | null;
  /** Every attempt in order, once there is more than one (then the first failed without starting); null for one. */
  attempts: Array<{ replica: string; outcome: string }> | null;
}

/** Adds what one metered attempt took to the call's record. */
export function chargeAttempt(meter: EngineMeter | undefined, mark: MeterMark, attempt: ReplicaAttempt | undefined): void {
  if (meter === undefined) return;
  const seconds = meter.end(mark);
  if (attempt === undefined) return;
  attempt.engineSeconds = (attempt.engineSeconds ?? 0) + seconds;
  const cost = meter.costOf(seconds);
  if (cost !== null) attempt.measuredCostUsd = (attempt.measuredCostUsd ?? 0) + cost;
}
