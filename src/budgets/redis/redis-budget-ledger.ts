/**
 * Budgets in Redis, shared by every process that names the same Redis: one
 * atomic script per reservation (`budget-script.ts`), so a fleet under any
 * load never reserves past a cap. Keys are `taskgate:budget:<cap id>`, each
 * kept until a day after its period ends.
 *
 * The connection is the rate limiter's kind (`redis/redis-script-client.ts`):
 * no call waits on a Redis that is away. The outage rule is
 * `shared/shared-budget-ledger.ts`'s: a lost connection degrades at once, a
 * ready one is probed at once, and a probe runs every `probeIntervalMs`.
 */
import { redactedUrl, waitForFirstAnswer, type RedisPartOptions } from '../../redis/redis-connection.js';
import { createScriptClient } from '../../redis/redis-script-client.js';
import { sharedGraceMs } from '../budget-caps.js';
import type { BudgetLedger, OutageRule } from '../budget-ledger.js';
import type { SpendReply } from '../ledger-rules.js';
import { createSharedBudgetLedger } from '../shared/shared-budget-ledger.js';
import type { SharedLedger } from '../shared/shared-ledger.js';
import { budgetScript } from './budget-script.js';

/** Redis's address and timeouts (`RedisPartOptions`); keys start with `taskgate:budget:` unless `keyPrefix` says otherwise. */
export interface RedisBudgetLedgerOptions extends RedisPartOptions {
  /** `budgets.on_outage`. */
  onOutage: OutageRule;
}

export async function createRedisBudgetLedger(options: RedisBudgetLedgerOptions): Promise<BudgetLedger> {
  const prefix = options.keyPrefix ?? 'taskgate:budget:';
  const client = createScriptClient({
    url: options.url,
    script: budgetScript,
    connectionName: 'taskgate-budgets',
    commandTimeoutMs: options.commandTimeoutMs ?? 250,
    connectTimeoutMs: 1_000,
  });
  const keysOf = (capIds: readonly string[]) => capIds.map((capId) => `${prefix}${capId}`);
  const expireAt = (resetsAt: number) => resetsAt + sharedGraceMs;

  const shared: SharedLedger = {
    where: `Redis at ${redactedUrl(options.url)}`,
    reachable: () => client.isReady(),
    async reserve(caps, amountMicros) {
      const args = caps.flatMap((cap) => [cap.limitMicros, expireAt(cap.resetsAt)]);
      return parseReservation(await client.run(keysOf(caps.map((cap) => cap.id)), ['reserve', amountMicros, ...args]), caps.length);
    },
    async add(deltas) {
      const args = deltas.flatMap((delta) => [delta.deltaMicros, delta.resetsAt === null ? 0 : expireAt(delta.resetsAt)]);
      const reply = await client.run(keysOf(deltas.map((delta) => delta.capId)), ['add', ...args]);
      return integers(reply, deltas.length).map((after) => (after < 0 ? null : after));
    },
    async spent(capIds) {
      const values = await client.redis.mget(...keysOf(capIds));
      return values.map((value) => (value === null ? 0 : Number(value)));
    },
    async ping() {
      await client.redis.ping();
    },
    async close() {
      client.redis.disconnect();
    },
  };
  const ledger = createSharedBudgetLedger({
    shared,
    onOutage: options.onOutage,
    logger: options.logger,
    probeIntervalMs: options.probeIntervalMs,
  });

  let lastProblem = 'not connected yet';
  let started = false;
  client.redis.on('error', (error: unknown) => {
    // ioredis reports every failed reconnect here; the ledger logs the outage once.
    lastProblem = error instanceof Error ? error.message : String(error);
  });
  client.redis.on('close', () => {
    if (started) ledger.lost(new Error(`connection lost (${lastProblem})`));
  });
  client.redis.on('ready', () => void ledger.probe());

  await waitForFirstAnswer(client.redis, options.startTimeoutMs ?? 2_000);
  started = true;
  if (client.isReady()) options.logger.info('budgets: shared in Redis', { redis: redactedUrl(options.url), on_outage: options.onOutage });
  else ledger.lost(new Error(`no connection at start (${lastProblem})`));
  return ledger;
}

/** The script's `{ reserved, refusing index from 1, spent… }` as a SpendReply; anything else is an error (and an outage). */
function parseReservation(reply: unknown, capCount: number): SpendReply {
  const [reserved, refusing, ...spent] = integers(reply, capCount + 2);
  if (
    (reserved !== 0 && reserved !== 1) ||
    refusing === undefined ||
    refusing < 0 ||
    refusing > capCount ||
    (reserved === 1) !== (refusing === 0)
  ) {
    throw new Error(`unexpected reply from the budget script: ${JSON.stringify(reply)}`);
  }
  return { reserved: reserved === 1, refusedIndex: refusing - 1, spentMicros: spent };
}

function integers(reply: unknown, length: number): number[] {
  if (!Array.isArray(reply) || reply.length !== length || !reply.every((value) => Number.isSafeInteger(value))) {
    throw new Error(`unexpected reply from the budget script: ${JSON.stringify(reply)}`);
  }
  return reply as number[];
}
