import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { describeBudgetLedgerContract, testCap } from '../../../test/contracts/budget-ledger-contract.js';
import { capturingLogger } from '../../../test/helpers/capturing-logger.js';
import type { MessageChannel } from '../../ipc/message-channel.js';
import { silentLogger, type Logger } from '../../log/logger.js';
import type { BudgetLedger, ReserveResult, Ticket } from '../budget-ledger.js';
import { createClusterBudgetHost, type ClusterBudgetHost } from './cluster-budget-host.js';
import { createClusterBudgetLedger, type ClusterBudgetLedgerOptions } from './cluster-budget-ledger.js';

/**
 * Two ends of an in-process link standing in for the cluster IPC: messages
 * are cloned and delivered on a later turn, as over IPC. `state` 'silent'
 * drops what the worker sends (a primary that does not answer); 'closed'
 * refuses to send (a primary that is gone).
 */
function link(): { worker: MessageChannel; primary: MessageChannel; state: 'open' | 'silent' | 'closed' } {
  const listeners = { worker: new Set<(message: unknown) => void>(), primary: new Set<(message: unknown) => void>() };
  const control = { state: 'open' as 'open' | 'silent' | 'closed', worker: end('primary'), primary: end('worker') };
  function end(to: 'worker' | 'primary'): MessageChannel {
    const from = to === 'worker' ? 'primary' : 'worker';
    return {
      send(message) {
        if (control.state === 'closed') return false;
        if (control.state === 'silent' && to === 'primary') return true;
        const copy = structuredClone(message);
        setImmediate(() => listeners[to].forEach((listener) => listener(copy)));
        return true;
      },
      subscribe(listener) {
        listeners[from].add(listener);
        return () => void listeners[from].delete(listener);
      },
    };
  }
  return control;
}

/** A worker's ledger linked to a host. */
function workerLedger(
  host: ClusterBudgetHost,
  options: Partial<Omit<ClusterBudgetLedgerOptions, 'channel'>> = {},
  logger: Logger = silentLogger,
) {
  const channels = link();
  const detach = host.attach(channels.primary);
  const ledger = createClusterBudgetLedger({ channel: channels.worker, logger, onOutage: 'open', ...options });
  return { ledger, channels, detach };
}

function ticketOf(result: ReserveResult): Ticket {
  if (!result.reserved) throw new Error(`expected a reservation: ${JSON.stringify(result)}`);
  return result.ticket;
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200 && !check(); attempt++) await sleep(10);
  if (!check()) throw new Error(`still not ${what}`);
}

describeBudgetLedgerContract('cluster (worker asking the primary over IPC)', async () => {
  const host = createClusterBudgetHost();
  const { ledger, detach } = workerLedger(host);
  return {
    ...ledger,
    async close() {
      await ledger.close();
      detach();
      await host.close();
    },
  } satisfies BudgetLedger;
});

describe('cluster budget ledger', () => {
  it('gives every worker one cap, exactly, under 200 concurrent reservations', async () => {
    const host = createClusterBudgetHost();
    const workers = [workerLedger(host), workerLedger(host), workerLedger(host)];
    const cap = testCap(50_000);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, index) => workers[index % 3]?.ledger.reserve({ caps: [cap], amountMicros: 700 })),
    );
    expect(results.filter((result) => result?.reserved)).toHaveLength(71);
    // What one worker settles, the others see.
    const first = results.find((result) => result?.reserved) as ReserveResult;
    workers[0]?.ledger.settle(ticketOf(first), 0);
    await sleep(10);
    expect((await workers[2]?.ledger.spent([cap.id]))?.get(cap.id)).toBe(70 * 700);
    for (const worker of workers) await worker.ledger.close();
    await host.close();
  });

  it('starts from the spend the primary was seeded with', async () => {
    const host = createClusterBudgetHost();
    const cap = testCap(1_000);
    host.seed([{ capId: cap.id, spentMicros: 900, resetsAt: cap.resetsAt }]);
    const { ledger } = workerLedger(host);
    expect(await ledger.reserve({ caps: [cap], amountMicros: 101 })).toEqual({ reserved: false, refusedBy: cap, spentMicros: 900 });
    await ledger.close();
    await host.close();
  });

  it("'open': a primary that does not answer costs one wait, then the worker goes on alone from what it knew, and hands its spend over when it answers", async () => {
    const host = createClusterBudgetHost();
    const { logger, lines } = capturingLogger();
    const { ledger, channels } = workerLedger(host, { answerTimeoutMs: 50, probeIntervalMs: 20 }, logger);
    const other = workerLedger(host);
    const cap = testCap(10_000);
    ticketOf(await ledger.reserve({ caps: [cap], amountMicros: 4_000 }));

    channels.state = 'silent';
    const started = Date.now();
    ticketOf(await ledger.reserve({ caps: [cap], amountMicros: 3_000 }));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(ledger.degraded()).toMatch(/per process .*primary process of serve --workers does not answer/);
    const quick = Date.now();
    // 4000 known + 3000 local (the timed-out ask is not known to have happened): 3001 more does not fit here.
    expect(await ledger.reserve({ caps: [cap], amountMicros: 3_001 })).toMatchObject({ reserved: false, spentMicros: 7_000 });
    expect(Date.now() - quick).toBeLessThan(40);
    ticketOf(await other.ledger.reserve({ caps: [cap], amountMicros: 1_000 }));

    channels.state = 'open';
    await until(() => ledger.degraded() === null, 'back on the primary');
    // The primary: 4000 + 1000 from the other worker + the 3000 handed over.
    expect((await other.ledger.spent([cap.id])).get(cap.id)).toBe(8_000);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
    expect(lines.filter((line) => line.msg.includes('answers again'))).toHaveLength(1);
    await ledger.close();
    await other.ledger.close();
    await host.close();
  });

  it("'closed': a closed link refuses reservations that name a cap at once, as unavailable", async () => {
    const host = createClusterBudgetHost();
    const { ledger, channels } = workerLedger(host, { onOutage: 'closed', answerTimeoutMs: 10_000 });
    channels.state = 'closed';
    const started = Date.now();
    expect(await ledger.reserve({ caps: [testCap(100)], amountMicros: 1 })).toEqual({ reserved: false, unavailable: true });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(ledger.degraded()).toMatch(/refused/);
    expect(await ledger.reserve({ caps: [], amountMicros: 1 })).toMatchObject({ reserved: true });
    await ledger.close();
    await host.close();
  });
});
