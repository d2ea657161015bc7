/**
 * Which replica of a model takes the next call: a pure function of the
 * replicas' loads and circuits, tested without I/O (`engine-pool.ts` keeps
 * the loads and rotates `startAt`).
 */
import type { CircuitBreaker } from './circuit-breaker.js';

/** What `pickReplica` needs to know of a replica. */
export interface ReplicaLoad {
  inFlight: number;
  circuit: Pick<CircuitBreaker, 'allowsCall'>;
}

/**
 * The replica for the next call: the fewest calls in flight among those whose
 * circuit admits a call, or -1 when none does. Ties go to the first one found
 * scanning from `startAt` (the pool rotates it on every pick, so idle replicas
 * take turns: round robin). `exclude` is the replica that just failed.
 */
export function pickReplica(states: ReadonlyArray<ReplicaLoad>, now: number, startAt = 0, exclude = -1): number {
  const count = states.length;
  let best = -1;
  let bestInFlight = Infinity;
  for (let offset = 0; offset < count; offset++) {
    const index = (startAt + offset) % count;
    if (index === exclude) continue;
    const state = states[index]!;
    if (state.inFlight < bestInFlight && state.circuit.allowsCall(now)) {
      best = index;
      bestInFlight = state.inFlight;
    }
  }
  return best;
}
