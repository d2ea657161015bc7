/**
 * What a worker's cluster budget ledger and the primary's budget host say to
 * each other (`cluster-budget-ledger.ts`, `cluster-budget-host.ts`): the
 * `SharedLedger` primitives, each ask answered by id. Both ends are
 * taskgate, so the checks only tell these messages from the others on the
 * same IPC link (and a malformed answer from a good one).
 */
import type { Cap } from '../budget-caps.js';
import type { SpendReply } from '../ledger-rules.js';
import type { SpendDelta } from '../shared/shared-ledger.js';

export type BudgetsAsk =
  | { type: 'budgets:reserve'; id: number; caps: readonly Cap[]; amountMicros: number }
  | { type: 'budgets:add'; id: number; deltas: readonly SpendDelta[] }
  | { type: 'budgets:spent'; id: number; capIds: readonly string[] }
  /** A degraded worker's check that the primary answers again. */
  | { type: 'budgets:ping'; id: number };

/** The answer to an ask: a SpendReply (reserve), spend after or null per cap (add), spend per cap (spent), null (ping). */
export interface BudgetsAnswer {
  type: 'budgets:answer';
  id: number;
  value: SpendReply | ReadonlyArray<number | null> | null;
}

export function asBudgetsAsk(message: unknown): BudgetsAsk | null {
  if (!isRecord(message) || typeof message.id !== 'number') return null;
  if (message.type === 'budgets:reserve' && Array.isArray(message.caps) && typeof message.amountMicros === 'number')
    return message as unknown as BudgetsAsk;
  if (message.type === 'budgets:add' && Array.isArray(message.deltas)) return message as unknown as BudgetsAsk;
  if (message.type === 'budgets:spent' && Array.isArray(message.capIds)) return message as unknown as BudgetsAsk;
  if (message.type === 'budgets:ping') return message as unknown as BudgetsAsk;
  return null;
}

export function asBudgetsAnswer(message: unknown): BudgetsAnswer | null {
  if (!isRecord(message) || message.type !== 'budgets:answer' || typeof message.id !== 'number') return null;
  return message as unknown as BudgetsAnswer;
}

/** The answer's value as a SpendReply of `capCount` caps; throws for anything else. */
export function asSpendReply(value: BudgetsAnswer['value'], capCount: number): SpendReply {
  if (
    !isRecord(value) ||
    typeof value.reserved !== 'boolean' ||
    typeof value.refusedIndex !== 'number' ||
    !Array.isArray(value.spentMicros) ||
    value.spentMicros.length !== capCount ||
    !value.spentMicros.every((spent) => typeof spent === 'number')
  ) {
    throw new Error(`unexpected answer from the primary's budgets: ${JSON.stringify(value)}`);
  }
  return value as unknown as SpendReply;
}

/** The answer's value as `length` numbers (or nulls, when `nullable`); throws for anything else. */
export function asSpendList(value: BudgetsAnswer['value'], length: number, nullable: boolean): Array<number | null> {
  if (
    !Array.isArray(value) ||
    value.length !== length ||
    !value.every((spent) => typeof spent === 'number' || (nullable && spent === null))
  ) {
    throw new Error(`unexpected answer from the primary's budgets: ${JSON.stringify(value)}`);
  }
  return [...value];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
