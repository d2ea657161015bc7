import { describe, expect, it } from 'vitest';
import { describeBudgetLedgerContract, testCap } from '../../../test/contracts/budget-ledger-contract.js';
import { createMemoryBudgetLedger } from './memory-budget-ledger.js';
import { createSpendBook } from './spend-book.js';

describeBudgetLedgerContract('memory', async () => createMemoryBudgetLedger());

const hour = 60 * 60 * 1000;

describe('memory budget ledger', () => {
  it('answers synchronously, so the request path costs no extra tick', () => {
    const ledger = createMemoryBudgetLedger();
    const result = ledger.reserve({ caps: [testCap(100)], amountMicros: 10 });
    expect(result).not.toBeInstanceOf(Promise);
    expect(result.reserved).toBe(true);
    void ledger.close();
  });

  it('keeps a period until an hour after it ends, then starts from nothing', async () => {
    let now = Date.UTC(2026, 10, 29, 23, 0);
    const ledger = createMemoryBudgetLedger({ now: () => now });
    const cap = testCap(1_000, { resetsAt: Date.UTC(2026, 10, 30) });
    expect(ledger.reserve({ caps: [cap], amountMicros: 1_000 }).reserved).toBe(true);
    now = Date.UTC(2026, 10, 30, 0, 59);
    // Past the reset but within the grace: a late settlement still lands, the spend still counts.
    expect(ledger.reserve({ caps: [cap], amountMicros: 1 })).toMatchObject({ reserved: false, spentMicros: 1_000 });
    now = Date.UTC(2026, 10, 30, 1, 0);
    expect((await ledger.spent([cap.id])).get(cap.id)).toBe(0);
    await ledger.close();
  });

  it('starts from the spend it is seeded with, ignoring periods that ended', async () => {
    const ledger = createMemoryBudgetLedger();
    const [seeded, ended] = [testCap(1_000), testCap(1_000, { resetsAt: Date.now() - 2 * hour })];
    ledger.seed([
      { capId: seeded.id, spentMicros: 900, resetsAt: seeded.resetsAt },
      { capId: ended.id, spentMicros: 900, resetsAt: ended.resetsAt },
    ]);
    expect(ledger.reserve({ caps: [seeded], amountMicros: 101 })).toMatchObject({ reserved: false, spentMicros: 900 });
    expect(await ledger.spent([seeded.id, ended.id])).toEqual(
      new Map([
        [seeded.id, 900],
        [ended.id, 0],
      ]),
    );
    await ledger.close();
  });
});

describe('spend book', () => {
  it('reads a period as absent once an hour past its end', () => {
    let now = 1_000_000;
    const book = createSpendBook({ now: () => now, graceMs: hour });
    const [old, current] = [testCap(10, { resetsAt: now + 1_000 }), testCap(10, { resetsAt: now + 10 * hour })];
    book.reserve([old, current], 5);
    expect(book.entries().map(([capId]) => capId)).toEqual([old.id, current.id]);
    now += hour + 1_000;
    expect(book.entries().map(([capId]) => capId)).toEqual([current.id]);
    expect(book.entry(old.id)).toBeNull();
    book.close();
  });

  it('adds spend made elsewhere to a cap it does not hold only when told its period, and never goes below 0', () => {
    const book = createSpendBook({ graceMs: hour });
    const cap = testCap(100);
    expect(book.add(cap.id, 30, null)).toBeNull();
    expect(book.entry(cap.id)).toBeNull();
    expect(book.add(cap.id, 30, cap.resetsAt)).toBe(30);
    expect(book.add(cap.id, -50, null)).toBe(0);
    expect(book.entry(cap.id)).toEqual({ spentMicros: 0, resetsAt: cap.resetsAt });
    book.close();
  });
});
