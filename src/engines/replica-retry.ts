/**
 * Sending a call once more, to another replica. Only a failure that provably
 * cost no generation (`error.resendable`: refused, never sent, queue full)
 * is sent again, once and never to the same replica; anything after the
 * engine may have started surfaces as it is, so one call never costs two
 * generations.
 */
import { GatewayError } from '../api/errors.js';
import type { Logger } from '../log/logger.js';
import { errorFields } from '../log/logger.js';
import type { ReplicaAttempt } from './replica-attempt.js';
import type { ReplicaSlots } from './replica-slots.js';

/** The replica to send the call to after `failed` threw `error` without starting it, or -1 when the error must surface. */
export function retryTarget(replicas: ReplicaSlots, failed: number, error: unknown, signal: AbortSignal, logger: Logger): number {
  if (signal.aborted || !(error instanceof GatewayError) || !error.resendable) return -1;
  const second = replicas.pick(failed);
  if (second !== -1) {
    logger.info('sending the call to another replica: the first did not start it', {
      failed_replica: replicas.slots[failed]!.engine.id,
      replica: replicas.slots[second]!.engine.id,
      ...errorFields(error),
    });
  }
  return second;
}

/** Records both attempts of a call sent again: the first's failure, then how the second went. */
export async function secondAttempt<T>(
  replicas: ReplicaSlots,
  first: number,
  failure: unknown,
  second: number,
  attempt: ReplicaAttempt | undefined,
  work: Promise<T>,
): Promise<T> {
  const attempts: NonNullable<ReplicaAttempt['attempts']> = [
    { replica: replicas.slots[first]!.engine.id, outcome: (failure as GatewayError).code },
  ];
  if (attempt !== undefined) attempt.attempts = attempts;
  const replica = replicas.slots[second]!.engine.id;
  try {
    const result = await work;
    attempts.push({ replica, outcome: 'ok' });
    return result;
  } catch (error) {
    attempts.push({ replica, outcome: error instanceof GatewayError ? error.code : 'internal_error' });
    throw error;
  }
}
