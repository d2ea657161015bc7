/**
 * Budgets in the store's rows (`BudgetStore`'s `reserveSpend`, `addSpend`,
 * `spentOf`): shared by every process on one PostgreSQL when there is no
 * Redis. Each reservation is one transaction that locks its cap rows in id
 * order, so a fleet under any load never reserves past a cap. The outage
 * rule is `shared/shared-budget-ledger.ts`'s, as for Redis: a failed or slow
 * store degrades the ledger, a probe every `probeIntervalMs` brings it back.
 *
 * Rows live until their period's end plus a day (as Redis keys do); expired
 * rows count as nothing, and this ledger deletes them on a timer
 * (`cleanupIntervalMs`, once at start and hourly; every process does it, the
 * delete is idempotent).
 *
 * A pool runs queries side by side, so a settlement sent just before a read
 * could land after it: a reservation or a read of a cap waits for the
 * settlements of that cap still in flight (the contract's "a read that
 * follows it sees it"). Reservations and reads time out (`commandTimeoutMs`)
 * and then degrade; settlements do not (a settlement that timed out but
 * committed would be counted twice, and a settlement is mostly a refund).
 */
import { errorFields, type Logger } from '../../log/logger.js';
import type { Store } from '../../store/store.js';
import { sharedGraceMs } from '../budget-caps.js';
import type { BudgetLedger, OutageRule } from '../budget-ledger.js';
import { createSharedBudgetLedger } from '../shared/shared-budget-ledger.js';
import type { SharedLedger } from '../shared/shared-ledger.js';

export interface StoreBudgetLedgerOptions {
  /** The store whose rows hold the spend; opened, migrated and closed by the caller. */
  store: Pick<Store, 'budgets' | 'ping'>;
  /** `budgets.on_outage`. */
  onOutage: OutageRule;
  logger: Logger;
  /** The store in words, for logs and `degraded()`. Default "the store". */
  where?: string;
  /**
   * Longest a reservation or a read may take, waiting for a pooled connection included, before the ledger degrades (ms).
   * Default 2000: reservations of one hot cap take its row lock one at a time, a few round trips each, so a burst of
   * 200 calls on one cap queues for some 0.5 s on a busy machine; a store that is down fails at once (connection refused).
   */
  commandTimeoutMs?: number;
  /** How often a degraded ledger tries the store again (ms). Default 1000. */
  probeIntervalMs?: number;
  /** How often expired rows are deleted (ms). Default one hour. */
  cleanupIntervalMs?: number;
}

export function createStoreBudgetLedger(options: StoreBudgetLedgerOptions): BudgetLedger {
  const { store, logger } = options;
  const { budgets } = store;
  const timeoutMs = options.commandTimeoutMs ?? 2_000;
  const expiresAt = (resetsAt: number) => resetsAt + sharedGraceMs;
  /** The settlements in flight, per cap id: what a reservation or read of the cap waits for. */
  const inFlight = new Map<string, Promise<void>>();

  function track(capIds: readonly string[], work: Promise<unknown>): void {
    const done = work.then(
      () => undefined,
      () => undefined,
    );
    for (const capId of capIds) {
      // After this settlement and the ones of the cap still in flight before it.
      const previous = inFlight.get(capId);
      const all = previous === undefined ? done : Promise.all([previous, done]).then(() => undefined);
      inFlight.set(capId, all);
      void all.then(() => {
        if (inFlight.get(capId) === all) inFlight.delete(capId);
      });
    }
  }

  /** `work` after the settlements in flight of `capIds`, all within the timeout. */
  function afterSettlements<T>(capIds: readonly string[], what: string, work: () => Promise<T>): Promise<T> {
    const pending = capIds.flatMap((capId) => inFlight.get(capId) ?? []);
    const run = pending.length === 0 ? work() : Promise.all(pending).then(work);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took more than ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([run, deadline]).finally(() => clearTimeout(timer));
  }

  const shared: SharedLedger = {
    where: options.where ?? 'the store',
    // A pool has no connection to watch: the store is asked, and a failure degrades.
    reachable: () => true,
    reserve(caps, amountMicros) {
      const capIds = caps.map((cap) => cap.id);
      return afterSettlements(capIds, 'a budget reservation', () =>
        budgets.reserveSpend(
          caps.map((cap) => ({ id: cap.id, limitMicros: cap.limitMicros, expiresAt: expiresAt(cap.resetsAt) })),
          amountMicros,
        ),
      );
    },
    add(deltas) {
      const work = budgets.addSpend(
        deltas.map((delta) => ({
          capId: delta.capId,
          deltaMicros: delta.deltaMicros,
          expiresAt: delta.resetsAt === null ? null : expiresAt(delta.resetsAt),
        })),
      );
      track(
        deltas.map((delta) => delta.capId),
        work,
      );
      return work;
    },
    spent(capIds) {
      return afterSettlements(capIds, 'a budget read', () => budgets.spentOf(capIds));
    },
    ping: () => store.ping(),
    // The store is the caller's to close.
    close: async () => undefined,
  };
  const ledger = createSharedBudgetLedger({ shared, onOutage: options.onOutage, logger, probeIntervalMs: options.probeIntervalMs });

  const cleanUp = () => {
    budgets.deleteExpiredSpend().then(
      (deleted) => {
        if (deleted > 0) logger.debug('budgets: deleted the ledger rows of ended periods', { rows: deleted });
      },
      (error: unknown) =>
        logger.debug('budgets: deleting the ledger rows of ended periods failed; the next pass tries again', errorFields(error)),
    );
  };
  cleanUp();
  const cleaner = setInterval(cleanUp, options.cleanupIntervalMs ?? 3_600_000);
  cleaner.unref();
  logger.info(`budgets: shared in ${shared.where}`, { on_outage: options.onOutage });

  return {
    reserve: (request) => ledger.reserve(request),
    settle: (ticket, actualMicros) => ledger.settle(ticket, actualMicros),
    spent: (capIds) => ledger.spent(capIds),
    degraded: () => ledger.degraded(),
    async close() {
      clearInterval(cleaner);
      await ledger.close();
    },
  };
}
