/**
 * Three real processes reserve against one small cap in Redis at the same
 * time, 200 reservations in all, as three taskgate processes behind a load
 * balancer would: the total reserved never passes the cap (atomic
 * reservations do not pass it at all), no reservation is refused that would
 * have fitted, and settlements from every process add up exactly.
 *
 * Each process is a bare `node` running the built ledger (`dist/`, built by
 * the global setup), told by this file over stdin when to start each step,
 * so all three reserve at once.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cap } from '../src/budgets/budget-caps.js';
import { redis, requireServiceOrSkip } from './helpers/machine-requirements.js';

const url = await requireServiceOrSkip(redis, 'test/budgets-across-processes.test.ts');

/** One process: a ledger on `spec.url`; at "go" it reserves its amounts at once, at "settle" it settles each at half. */
const reserver = `
import { createInterface } from 'node:readline';
const spec = JSON.parse(process.env.TASKGATE_TEST_SPEC);
const { createRedisBudgetLedger } = await import(spec.ledgerModule);
const { silentLogger } = await import(spec.loggerModule);
const ledger = await createRedisBudgetLedger({ url: spec.url, logger: silentLogger, onOutage: 'closed', keyPrefix: spec.keyPrefix });
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
say({ ready: true, degraded: ledger.degraded() });
await lines.next();
const results = await Promise.all(spec.amounts.map((amountMicros) => ledger.reserve({ caps: [spec.cap], amountMicros })));
say({ results: results.map((result, index) => ({ amountMicros: spec.amounts[index], ...result })), degraded: ledger.degraded() });
await lines.next();
for (const result of results) if (result.reserved) ledger.settle(result.ticket, Math.floor(result.ticket.amountMicros / 2));
// Read after the settlements, on the same connection: they have landed once it answers.
await ledger.spent([spec.cap.id]);
say({ settled: true });
await ledger.close();
`;

interface Reserver {
  child: ChildProcessWithoutNullStreams;
  next: () => Promise<Record<string, unknown>>;
  stderr: () => string;
}

function startReserver(spec: Record<string, unknown>): Reserver {
  const child = spawn(process.execPath, ['--input-type=module', '-e', reserver], {
    env: { PATH: process.env.PATH ?? '', TASKGATE_TEST_SPEC: JSON.stringify(spec) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    child,
    stderr: () => stderr,
    async next() {
      const line = await lines.next();
      if (line.done === true) throw new Error(`the reserver exited early:\n${stderr}`);
      return JSON.parse(line.value) as Record<string, unknown>;
    },
  };
}

describe.skipIf(url === null)('a cap in Redis, reserved against by three processes at once', () => {
  const keyPrefix = `taskgate:budget:test-${randomUUID()}:`;
  let inspector: Redis;
  let reservers: Reserver[] = [];
  beforeAll(() => {
    inspector = new Redis(url as string);
  });
  afterAll(async () => {
    for (const { child } of reservers) if (child.exitCode === null) child.kill('SIGKILL');
    const keys = await inspector.keys(`${keyPrefix}*`);
    if (keys.length > 0) await inspector.del(...keys);
    await inspector.quit();
  });

  it('never passes the cap, refuses only what did not fit, and adds every settlement up exactly', async () => {
    const limitMicros = 100_000;
    const cap: Cap = {
      id: `test:${randomUUID()}:day:test`,
      label: 'test daily budget',
      limitMicros,
      alertAt: null,
      period: 'day',
      resetsAt: Date.now() + 86_400_000,
    };
    const amounts = Array.from({ length: 200 }, (_, index) => 1_000 + ((index * 7_919) % 3_000));
    const shares = [0, 1, 2].map((process) => amounts.filter((_, index) => index % 3 === process));
    const dist = (path: string) => pathToFileURL(resolve('dist', path)).href;
    reservers = shares.map((share) =>
      startReserver({
        ledgerModule: dist('budgets/redis/redis-budget-ledger.js'),
        loggerModule: dist('log/logger.js'),
        url,
        keyPrefix,
        cap,
        amounts: share,
      }),
    );
    for (const reserver of reservers) expect(await reserver.next()).toEqual({ ready: true, degraded: null });

    for (const { child } of reservers) child.stdin.write('go\n');
    const answers = await Promise.all(reservers.map((reserver) => reserver.next()));
    const results = answers.flatMap((answer) => answer.results as Array<{ amountMicros: number; reserved: boolean; unavailable?: true }>);
    expect(answers.map((answer) => answer.degraded)).toEqual([null, null, null]);
    expect(results).toHaveLength(200);
    expect(results.filter((result) => result.unavailable === true)).toEqual([]);

    const reservedAmounts = results.filter((result) => result.reserved).map((result) => result.amountMicros);
    const refusedAmounts = results.filter((result) => !result.reserved).map((result) => result.amountMicros);
    const total = reservedAmounts.reduce((sum, amount) => sum + amount, 0);
    expect(total).toBeLessThanOrEqual(limitMicros);
    expect(Number(await inspector.get(`${keyPrefix}${cap.id}`))).toBe(total);
    // Whatever was refused would not fit even now. (Which process got how much is up to the race: one may take it all.)
    expect(refusedAmounts.length).toBeGreaterThan(0);
    for (const amount of refusedAmounts) expect(total + amount).toBeGreaterThan(limitMicros);

    for (const { child } of reservers) child.stdin.write('settle\n');
    for (const reserver of reservers) expect(await reserver.next()).toEqual({ settled: true });
    const settled = reservedAmounts.reduce((sum, amount) => sum + Math.floor(amount / 2), 0);
    expect(Number(await inspector.get(`${keyPrefix}${cap.id}`))).toBe(settled);
    for (const { child } of reservers) child.stdin.end();
  });
});
