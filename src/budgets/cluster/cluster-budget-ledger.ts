/**
 * A worker's budget ledger under `serve --workers N` without Redis: the
 * spend lives in the primary (`cluster-budget-host.ts`) and each operation
 * asks it over the cluster IPC, so N workers share each cap exactly (with
 * Redis, workers share Redis instead and this is not used).
 *
 * A primary that does not answer within `answerTimeoutMs` (busy, or gone),
 * or a link that is closed, is an outage like Redis's, with the same rule
 * (`shared/shared-budget-ledger.ts`): 'open' goes on alone from the spend this
 * worker last knew, 'closed' refuses; every `probeIntervalMs` it pings the
 * primary and, once it answers, hands it what was spent meanwhile.
 */
import type { MessageChannel } from '../../ipc/message-channel.js';
import type { Logger } from '../../log/logger.js';
import type { BudgetLedger, OutageRule } from '../budget-ledger.js';
import { createSharedBudgetLedger } from '../shared/shared-budget-ledger.js';
import type { SharedLedger } from '../shared/shared-ledger.js';
import { asBudgetsAnswer, asSpendList, asSpendReply, type BudgetsAnswer, type BudgetsAsk } from './budget-messages.js';

export interface ClusterBudgetLedgerOptions {
  /** The link to the primary. */
  channel: MessageChannel;
  logger: Logger;
  /** `budgets.on_outage`. */
  onOutage: OutageRule;
  /** Longest the primary may take to answer before the worker degrades (ms). Default 250, as Redis's command timeout. */
  answerTimeoutMs?: number;
  /** How often a degraded ledger asks the primary again (ms). Default 1000. */
  probeIntervalMs?: number;
}

/** An ask without its id: `ask` numbers it. */
type Unnumbered<Ask> = Ask extends unknown ? Omit<Ask, 'id'> : never;

export function createClusterBudgetLedger(options: ClusterBudgetLedgerOptions): BudgetLedger {
  const { channel } = options;
  const answerTimeoutMs = options.answerTimeoutMs ?? 250;
  const waiting = new Map<number, { resolve: (value: BudgetsAnswer['value']) => void; reject: (error: Error) => void }>();
  let nextId = 1;

  const unsubscribe = channel.subscribe((message) => {
    const answer = asBudgetsAnswer(message);
    if (answer === null) return;
    waiting.get(answer.id)?.resolve(answer.value);
    waiting.delete(answer.id);
  });

  /** Sends an ask and resolves with its answer; rejects when the link is closed or the answer is late. */
  function ask(message: Unnumbered<BudgetsAsk>): Promise<BudgetsAnswer['value']> {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`no answer within ${answerTimeoutMs} ms`));
      }, answerTimeoutMs);
      waiting.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      if (!channel.send({ ...message, id })) {
        waiting.get(id)?.reject(new Error('the link to the primary is closed'));
        waiting.delete(id);
      }
    });
  }

  const shared: SharedLedger = {
    where: 'the primary process of serve --workers',
    reachable: () => true,
    reserve: async (caps, amountMicros) => asSpendReply(await ask({ type: 'budgets:reserve', caps, amountMicros }), caps.length),
    add: async (deltas) => asSpendList(await ask({ type: 'budgets:add', deltas }), deltas.length, true),
    spent: async (capIds) => asSpendList(await ask({ type: 'budgets:spent', capIds }), capIds.length, false) as number[],
    ping: async () => void (await ask({ type: 'budgets:ping' })),
    async close() {
      unsubscribe();
      for (const pending of waiting.values()) pending.reject(new Error('the ledger is closed'));
      waiting.clear();
    },
  };
  return createSharedBudgetLedger({ shared, onOutage: options.onOutage, logger: options.logger, probeIntervalMs: options.probeIntervalMs });
}
