import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { describeBudgetLedgerContract, testCap } from '../../../test/contracts/budget-ledger-contract.js';
import { capturingLogger } from '../../../test/helpers/capturing-logger.js';
import { postgres, requireServiceOrSkip } from '../../../test/helpers/machine-requirements.js';
import { postgresSchemas } from '../../../test/helpers/postgres-schemas.js';
import { startTcpProxy, type TcpProxy } from '../../../test/helpers/tcp-proxy.js';
import { temporaryDirectory } from '../../../test/helpers/temporary-directory.js';
import { silentLogger } from '../../log/logger.js';
import { createPostgresStore, type PostgresStore } from '../../store/postgres/postgres-store.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { Store } from '../../store/store.js';
import type { BudgetLedger, ReserveResult, Ticket } from '../budget-ledger.js';
import { createStoreBudgetLedger, type StoreBudgetLedgerOptions } from './store-budget-ledger.js';

const url = await requireServiceOrSkip(postgres, 'src/budgets/store/store-budget-ledger.test.ts');

/** Polls until `check` holds, failing after `timeoutMs`. */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`still not ${what} after ${timeoutMs} ms`);
    await sleep(20);
  }
}

function ticketOf(result: ReserveResult): Ticket {
  if (!result.reserved) throw new Error(`expected a reservation: ${JSON.stringify(result)}`);
  return result.ticket;
}

const ledgerOn = (store: Pick<Store, 'budgets' | 'ping'>, options: Partial<StoreBudgetLedgerOptions> = {}): BudgetLedger =>
  createStoreBudgetLedger({ store, onOutage: 'open', logger: silentLogger, ...options });

describe('store budget ledger on SQLite', () => {
  const directory = temporaryDirectory('taskgate-store-ledger-');
  let store: Store;
  beforeAll(async () => {
    store = createSqliteStore({ path: join(directory, 'ledger.db') });
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  });

  describeBudgetLedgerContract('store: sqlite', async () => ledgerOn(store));
});

describe.skipIf(url === null)('store budget ledger on PostgreSQL', () => {
  const schemas = postgresSchemas(url as string, 'tg_ledger');
  const openStore = (schema: string, storeUrl = url as string) => createPostgresStore({ url: storeUrl, schema, poolSize: 4 });
  const schema = schemas.fresh();
  let stores: PostgresStore[];
  beforeAll(async () => {
    // Three processes' stores on one database.
    stores = [openStore(schema), openStore(schema), openStore(schema)];
    await Promise.all(stores.map((store) => store.migrate()));
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  describeBudgetLedgerContract('store: postgres', async () => ledgerOn(stores[0] as PostgresStore));

  it('three processes share one cap exactly under 200 concurrent reservations', async () => {
    const ledgers = stores.map((store) => ledgerOn(store));
    try {
      const cap = testCap(50_000);
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, index) => (ledgers[index % 3] as BudgetLedger).reserve({ caps: [cap], amountMicros: 700 })),
      );
      expect(results.filter((result) => result.reserved)).toHaveLength(71);
      expect(await (stores[1] as PostgresStore).budgets.spentOf([cap.id])).toEqual([71 * 700]);
      expect(ledgers.map((ledger) => ledger.degraded())).toEqual([null, null, null]);
    } finally {
      await Promise.all(ledgers.map((ledger) => ledger.close()));
    }
  });

  it('deletes the rows of ended periods at start and on its timer', async () => {
    const store = stores[0] as PostgresStore;
    let passes = 0;
    const budgets = { ...store.budgets, deleteExpiredSpend: () => ((passes += 1), store.budgets.deleteExpiredSpend()) };
    const ended = { id: testCap(1).id, limitMicros: 1_000, expiresAt: Date.now() - 1_000 };
    await store.budgets.reserveSpend([ended], 10);
    const ledger = ledgerOn({ budgets, ping: () => store.ping() }, { cleanupIntervalMs: 50 });
    try {
      await until(() => passes >= 3, 'cleaned up three times');
      expect(await store.budgets.deleteExpiredSpend()).toBe(0);
    } finally {
      await ledger.close();
    }
    const after = passes;
    await sleep(150);
    expect(passes).toBe(after);
  });

  describe('while PostgreSQL is cut off (a proxy in between)', () => {
    let proxy: TcpProxy;
    let proxied: PostgresStore;
    beforeEach(async () => {
      const target = new URL(url as string);
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const through = new URL(url as string);
      through.hostname = '127.0.0.1';
      through.port = String(proxy.port);
      proxied = openStore(schema, through.toString());
    });
    afterEach(async () => {
      await proxied.close();
      await proxy.close();
    });

    it("'open': goes on from the spend it last knew, then adds what it spent meanwhile to the store once it answers", async () => {
      const { logger, lines } = capturingLogger();
      const ledger = ledgerOn(proxied, { logger, probeIntervalMs: 50, where: 'PostgreSQL' });
      const other = ledgerOn(stores[1] as PostgresStore);
      const direct = (stores[2] as PostgresStore).budgets;
      try {
        const cap = testCap(10_000);
        const before = ticketOf(await ledger.reserve({ caps: [cap], amountMicros: 4_000 }));
        ticketOf(await other.reserve({ caps: [cap], amountMicros: 1_000 }));

        await proxy.cut();
        // The first reservation after the cut fails over: from the 4000 it knew, 3000 fits and 3001 more would not.
        const during = ticketOf(await ledger.reserve({ caps: [cap], amountMicros: 3_000 }));
        expect(ledger.degraded()).toMatch(/per process .*PostgreSQL does not answer/);
        expect(await ledger.reserve({ caps: [cap], amountMicros: 3_001 })).toEqual({ reserved: false, refusedBy: cap, spentMicros: 7_000 });
        ledger.settle(during, 2_500);
        ledger.settle(before, 3_000);
        expect((await ledger.spent([cap.id])).get(cap.id)).toBe(5_500);
        ticketOf(await other.reserve({ caps: [cap], amountMicros: 1_000 }));

        await proxy.restore();
        await until(() => ledger.degraded() === null, 'back on the store');
        // 4000 + 1000 + 1000 from before and the other process, + 2500 − 1000 spent here meanwhile.
        expect(await direct.spentOf([cap.id])).toEqual([7_500]);
        expect(lines.filter((line) => line.msg.includes('does not answer'))).toHaveLength(1);
        expect(lines.filter((line) => line.msg.includes('answers again'))).toHaveLength(1);
      } finally {
        await ledger.close();
        await other.close();
      }
    });

    it("'closed': refuses reservations that name a cap as unavailable, and takes them again once the store answers", async () => {
      const ledger = ledgerOn(proxied, { onOutage: 'closed', probeIntervalMs: 50 });
      try {
        const cap = testCap(10_000);
        const ticket = ticketOf(await ledger.reserve({ caps: [cap], amountMicros: 1_000 }));
        await proxy.cut();
        expect(await ledger.reserve({ caps: [cap], amountMicros: 1 })).toEqual({ reserved: false, unavailable: true });
        expect(ledger.degraded()).toMatch(/refused .*budgets\.on_outage: closed/);
        expect(await ledger.reserve({ caps: [], amountMicros: 5 })).toMatchObject({ reserved: true });
        ledger.settle(ticket, 400);

        await proxy.restore();
        await until(() => ledger.degraded() === null, 'back on the store');
        expect(await (stores[2] as PostgresStore).budgets.spentOf([cap.id])).toEqual([400]);
        expect(await ledger.reserve({ caps: [cap], amountMicros: 9_600 })).toMatchObject({ reserved: true });
      } finally {
        await ledger.close();
      }
    });
  });
});
