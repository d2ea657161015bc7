/**
 * The BudgetLedger contract as a test suite. Every back end runs it unchanged
 * (`describeBudgetLedgerContract('memory', …)`, `('redis', …)`,
 * `('cluster …', …)`), so it uses only the BudgetLedger interface. Each test
 * makes caps of its own (random ids), so runs against a shared Redis never
 * meet. Caps are for periods that end tomorrow, except where a test is about
 * a period that has ended: no test waits for time to pass.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Cap } from '../../src/budgets/budget-caps.js';
import type { BudgetLedger, CapReservation, ReserveResult, Ticket } from '../../src/budgets/budget-ledger.js';

const day = 24 * 60 * 60 * 1000;

/** A cap of its own for one test: `limitMicros`, no soft threshold unless given, ending tomorrow unless told. */
export function testCap(limitMicros: number, options: { alertAt?: number; resetsAt?: number; name?: string } = {}): Cap {
  const name = options.name ?? 'cap';
  return {
    id: `test:${randomUUID()}:${name}:day:test`,
    label: `test ${name} daily budget`,
    limitMicros,
    alertAt: options.alertAt ?? null,
    period: 'day',
    resetsAt: options.resetsAt ?? Date.now() + day,
  };
}

export function describeBudgetLedgerContract(backendName: string, open: () => Promise<BudgetLedger>): void {
  describe(`BudgetLedger contract: ${backendName}`, () => {
    let ledger: BudgetLedger;
    const reserve = async (caps: readonly Cap[], amountMicros: number): Promise<ReserveResult> => ledger.reserve({ caps, amountMicros });
    const spentOf = async (...caps: Cap[]): Promise<number[]> => {
      const spent = await ledger.spent(caps.map((cap) => cap.id));
      return caps.map((cap) => spent.get(cap.id) as number);
    };
    /** The ticket of a reservation that must succeed. */
    const reserved = async (caps: readonly Cap[], amountMicros: number): Promise<Ticket> => {
      const result = await reserve(caps, amountMicros);
      if (!result.reserved) throw new Error(`expected a reservation of ${amountMicros} to fit: ${JSON.stringify(result)}`);
      return result.ticket;
    };

    beforeEach(async () => {
      ledger = await open();
    });
    afterEach(async () => {
      await ledger.close();
    });

    it('reserves on every cap, and a refusal takes nothing from any', async () => {
      const [account, project, key] = [testCap(1_000), testCap(500), testCap(300)];
      const ticket = await reserved([account, project, key], 200);
      expect(ticket).toEqual({ capIds: [account.id, project.id, key.id], amountMicros: 200 });
      expect(await spentOf(account, project, key)).toEqual([200, 200, 200]);

      // 200 + 150 passes the key's 300 only: nothing is reserved on the account or the project either.
      const refused = await reserve([account, project, key], 150);
      expect(refused).toEqual({ reserved: false, refusedBy: key, spentMicros: 200 });
      expect(await spentOf(account, project, key)).toEqual([200, 200, 200]);
      expect(await reserve([account, project], 150)).toMatchObject({ reserved: true });
      expect(await spentOf(account, project, key)).toEqual([350, 350, 200]);
    });

    it('a refusal names the first cap, in the request’s order, that would pass its limit', async () => {
      const [roomy, tight, tighter] = [testCap(1_000), testCap(50), testCap(10)];
      await reserved([tighter], 5);
      expect(await reserve([roomy, tight, tighter], 60)).toEqual({ reserved: false, refusedBy: tight, spentMicros: 0 });
      expect(await reserve([tighter, tight, roomy], 60)).toEqual({ reserved: false, refusedBy: tighter, spentMicros: 5 });
      expect(await spentOf(roomy, tight, tighter)).toEqual([0, 0, 5]);
    });

    it('a reservation that ends exactly at the limit fits; one micro-dollar more does not', async () => {
      const cap = testCap(1_000);
      await reserved([cap], 999);
      expect(await reserve([cap], 2)).toEqual({ reserved: false, refusedBy: cap, spentMicros: 999 });
      await reserved([cap], 1);
      expect(await reserve([cap], 1)).toMatchObject({ reserved: false, spentMicros: 1_000 });
      // Nothing more fits, but a reservation of nothing does while the spend is at the limit.
      expect(await reserve([cap], 0)).toMatchObject({ reserved: true });
      expect(await spentOf(cap)).toEqual([1_000]);
    });

    it('200 concurrent reservations against a small cap: exact totals, never past the limit, no needless refusal', async () => {
      const [small, large] = [testCap(100_000), testCap(10_000_000)];
      const amounts = Array.from({ length: 200 }, (_, index) => 1_000 + ((index * 7_919) % 3_000));
      const results = await Promise.all(amounts.map((amount) => reserve([large, small], amount)));
      const fitted = amounts.filter((_, index) => results[index]?.reserved === true);
      const refused = amounts.filter((_, index) => results[index]?.reserved === false);
      const total = fitted.reduce((sum, amount) => sum + amount, 0);
      expect(total).toBeLessThanOrEqual(100_000);
      expect(await spentOf(small, large)).toEqual([total, total]);
      // The spend only grew, so every refused amount would still not fit now: none was refused that fitted.
      expect(refused.length).toBeGreaterThan(0);
      for (const amount of refused) expect(total + amount).toBeGreaterThan(100_000);
      for (const result of results) if (!result.reserved) expect(result).toMatchObject({ refusedBy: small });
    });

    it('settles down (the unused part comes back) and up (more is added, even past the limit)', async () => {
      const [cap, other] = [testCap(1_000), testCap(5_000)];
      const first = await reserved([cap, other], 600);
      ledger.settle(first, 250);
      expect(await spentOf(cap, other)).toEqual([250, 250]);
      const second = await reserved([cap], 700);
      expect(await spentOf(cap)).toEqual([950]);
      // The estimate was short: settlement is never refused, and the cap then refuses everything.
      ledger.settle(second, 1_100);
      expect(await spentOf(cap, other)).toEqual([1_350, 250]);
      expect(await reserve([cap], 0)).toEqual({ reserved: false, refusedBy: cap, spentMicros: 1_350 });
      expect(await reserve([other], 1_000)).toMatchObject({ reserved: true });
    });

    it('a settlement of nothing changed, of a cap it never held, or with a nonsense actual, changes nothing', async () => {
      const cap = testCap(1_000);
      const ticket = await reserved([cap], 400);
      ledger.settle(ticket, 400);
      ledger.settle(ticket, Number.NaN);
      ledger.settle(ticket, -5);
      ledger.settle(ticket, 1.5);
      const unknown = { capIds: [`test:${randomUUID()}:never-reserved`], amountMicros: 500 };
      ledger.settle(unknown, 100);
      ledger.settle(unknown, 900);
      expect(await spentOf(cap)).toEqual([400]);
      expect((await ledger.spent(unknown.capIds)).get(unknown.capIds[0] as string)).toBe(0);
    });

    it('spent() answers 0 for caps it does not hold, and every id asked for', async () => {
      const cap = testCap(1_000);
      await reserved([cap], 10);
      const unknown = `test:${randomUUID()}:unknown`;
      expect(await ledger.spent([cap.id, unknown])).toEqual(
        new Map([
          [cap.id, 10],
          [unknown, 0],
        ]),
      );
      expect(await ledger.spent([])).toEqual(new Map());
    });

    it('forgets a period once it has ended (and its grace passed): nothing is kept, and a settlement of it is harmless', async () => {
      const ended = testCap(1_000, { resetsAt: Date.now() - 2 * day });
      const ticket = await reserved([ended], 1_000);
      expect(await spentOf(ended)).toEqual([0]);
      // A full reservation fits again: the period holds nothing.
      await reserved([ended], 1_000);
      ledger.settle(ticket, 10);
      expect(await spentOf(ended)).toEqual([0]);
    });

    it('reports a soft threshold once per crossing, on the caps it crossed', async () => {
      const [alerting, quiet] = [testCap(1_000, { alertAt: 0.5 }), testCap(1_000)];
      const first = await reserve([alerting, quiet], 400);
      expect(first).toMatchObject({ reserved: true, crossed: [] });
      expect(await reserve([alerting, quiet], 200)).toMatchObject({ reserved: true, crossed: [alerting] });
      expect(await reserve([alerting, quiet], 100)).toMatchObject({ reserved: true, crossed: [] });
      // Back under the threshold (700 - 400 = 300), then crossed again: reported again.
      if (!first.reserved) throw new Error('unreachable');
      ledger.settle(first.ticket, 0);
      expect(await spentOf(alerting)).toEqual([300]);
      expect(await reserve([alerting], 199)).toMatchObject({ reserved: true, crossed: [] });
      expect(await reserve([alerting], 1)).toMatchObject({ reserved: true, crossed: [alerting] });
      // A refused reservation crosses nothing.
      expect(await reserve([alerting], 600)).toMatchObject({ reserved: false });
    });

    it('keeps amounts exact in micro-dollars, also in the millions of dollars', async () => {
      const cap = testCap(3_000_000_000_001);
      const amounts = [1_234_567, 7_654_321, 999_999_999_999, 1_000_000_000_000, 999_991_111_113];
      for (const amount of amounts) await reserved([cap], amount);
      expect(await spentOf(cap)).toEqual([3_000_000_000_000]);
      await reserved([cap], 1);
      expect(await reserve([cap], 1)).toMatchObject({ reserved: false, spentMicros: 3_000_000_000_001 });
      const big = testCap(Number.MAX_SAFE_INTEGER);
      await reserved([big], 2 ** 52);
      expect(await reserve([big], 2 ** 52)).toMatchObject({ reserved: false, spentMicros: 2 ** 52 });
      await reserved([big], 2 ** 52 - 1);
      expect(await spentOf(big)).toEqual([Number.MAX_SAFE_INTEGER]);
    });

    it('a call that no cap covers reserves nothing, and a malformed reservation throws', async () => {
      expect(await reserve([], 5_000)).toEqual({ reserved: true, ticket: { capIds: [], amountMicros: 0 }, crossed: [] });
      const cap = testCap(100);
      const malformed: CapReservation[] = [
        { caps: [cap], amountMicros: 1.5 },
        { caps: [cap], amountMicros: -1 },
        { caps: [cap, cap], amountMicros: 1 },
      ];
      for (const request of malformed) expect(() => ledger.reserve(request)).toThrow(RangeError);
      expect(await spentOf(cap)).toEqual([0]);
    });

    it('is not degraded while its back end answers', async () => {
      await reserve([testCap(10)], 1);
      expect(ledger.degraded()).toBeNull();
    });
  });
}
