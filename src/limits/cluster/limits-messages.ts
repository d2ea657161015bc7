/**
 * What a worker's cluster rate limiter and the primary's limits host say to
 * each other (`cluster-rate-limiter.ts`, `cluster-limits-host.ts`). Both ends
 * are taskgate, so the checks only tell these messages from the others on
 * the same IPC link.
 */
import type { Admission, BudgetLimits } from '../rate-limiter.js';

export type LimitsAsk =
  | { type: 'limits:admit'; id: number; key: string; limits: BudgetLimits }
  | { type: 'limits:spend'; key: string; tokensPerMinute: number; tokens: number }
  /** A degraded worker's check that the primary answers again. */
  | { type: 'limits:ping'; id: number };

/** The answer to an admit (its admission) or a ping (no admission). */
export interface LimitsAnswer {
  type: 'limits:answer';
  id: number;
  admission: Admission | null;
}

export function asLimitsAsk(message: unknown): LimitsAsk | null {
  if (!isRecord(message)) return null;
  if (message.type === 'limits:admit' && typeof message.id === 'number' && typeof message.key === 'string' && isRecord(message.limits))
    return message as LimitsAsk;
  if (
    message.type === 'limits:spend' &&
    typeof message.key === 'string' &&
    typeof message.tokensPerMinute === 'number' &&
    typeof message.tokens === 'number'
  )
    return message as LimitsAsk;
  if (message.type === 'limits:ping' && typeof message.id === 'number') return message as LimitsAsk;
  return null;
}

export function asLimitsAnswer(message: unknown): LimitsAnswer | null {
  if (!isRecord(message) || message.type !== 'limits:answer' || typeof message.id !== 'number') return null;
  return message.admission === null || isRecord(message.admission) ? (message as unknown as LimitsAnswer) : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
