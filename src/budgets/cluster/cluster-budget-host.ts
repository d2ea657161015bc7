/**
 * The primary's half of the cluster budget ledger: the spend of every worker
 * of `serve --workers N` in one spend book, so N workers share each cap
 * exactly. Asks are answered in the order they arrive and the book decides
 * each synchronously, so concurrent reservations from several workers are
 * serialised. Seeded at start, as the one-process memory ledger is, with
 * what each cap already spent this period.
 */
import type { MessageChannel } from '../../ipc/message-channel.js';
import { memoryGraceMs } from '../budget-caps.js';
import { createSpendBook } from '../memory/spend-book.js';
import { asBudgetsAsk, type BudgetsAnswer, type BudgetsAsk } from './budget-messages.js';

export interface ClusterBudgetHost {
  /** Answers the budget asks arriving on `channel` (one worker's link); returns the function that stops. */
  attach(channel: MessageChannel): () => void;
  /** Sets each cap's spend so far (from the store's traces at start); entries of periods that ended are ignored. */
  seed(entries: Iterable<{ capId: string; spentMicros: number; resetsAt: number }>): void;
  close(): Promise<void>;
}

export function createClusterBudgetHost(options: { now?: () => number } = {}): ClusterBudgetHost {
  const book = createSpendBook({ now: options.now, graceMs: memoryGraceMs });

  function answer(ask: BudgetsAsk): BudgetsAnswer['value'] {
    switch (ask.type) {
      case 'budgets:reserve':
        return book.reserve(ask.caps, ask.amountMicros);
      case 'budgets:add':
        return ask.deltas.map((delta) => book.add(delta.capId, delta.deltaMicros, delta.resetsAt));
      case 'budgets:spent':
        return ask.capIds.map((capId) => book.entry(capId)?.spentMicros ?? 0);
      case 'budgets:ping':
        return null;
    }
  }

  return {
    attach(channel) {
      return channel.subscribe((message) => {
        const ask = asBudgetsAsk(message);
        if (ask !== null) channel.send({ type: 'budgets:answer', id: ask.id, value: answer(ask) } satisfies BudgetsAnswer);
      });
    },
    seed(entries) {
      for (const { capId, spentMicros, resetsAt } of entries) book.set(capId, spentMicros, resetsAt);
    },
    async close() {
      book.close();
    },
  };
}
