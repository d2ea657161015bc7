/**
 * A worker's rate limiter under `serve --workers N` with the memory back end:
 * the budgets live in the primary (`cluster-limits-host.ts`), and each
 * admission asks it over the cluster IPC, so N workers give a key one budget,
 * not N (with Redis, workers share Redis instead and this is not used).
 *
 * When the primary does not answer within `answerTimeoutMs` (busy, or gone)
 * the limiter does what the Redis one does while Redis is away: it falls back
 * to a memory limiter of its own with the same rates (a key may then get up
 * to one budget per worker), logs it once, says so in `degraded()`, and from
 * then on asks only memory, so no call waits on a primary that does not
 * answer. Every `probeIntervalMs` it pings the primary; at the first answer
 * it goes back to the shared budgets (logged once). Budgets spent in memory
 * meanwhile are not carried over.
 */
import type { MessageChannel } from '../../ipc/message-channel.js';
import { errorFields, type Logger } from '../../log/logger.js';
import { createMemoryRateLimiter } from '../memory/memory-rate-limiter.js';
import type { Admission, RateLimiter } from '../rate-limiter.js';
import { asLimitsAnswer, type LimitsAsk } from './limits-messages.js';

export interface ClusterRateLimiterOptions {
  /** The link to the primary. */
  channel: MessageChannel;
  logger: Logger;
  /** Longest the primary may take to answer an admission before the worker falls back (ms). Default 250, as Redis's command timeout. */
  answerTimeoutMs?: number;
  /** How often a degraded limiter asks the primary again (ms). Default 1000. */
  probeIntervalMs?: number;
}

export function createClusterRateLimiter(options: ClusterRateLimiterOptions): RateLimiter {
  const { channel, logger } = options;
  const answerTimeoutMs = options.answerTimeoutMs ?? 250;
  const fallback = createMemoryRateLimiter();
  /** Asks waiting for the primary's answer, by id: each gets the admission, or null for a ping. */
  const waiting = new Map<number, (admission: Admission | null) => void>();
  let nextId = 1;
  /** When the limiter fell back to memory; null while it asks the primary. */
  let degradedSince: number | null = null;
  let lastProblem = '';
  let probing = false;
  let closed = false;

  const unsubscribe = channel.subscribe((message) => {
    const answer = asLimitsAnswer(message);
    if (answer === null) return;
    const resolve = waiting.get(answer.id);
    waiting.delete(answer.id);
    resolve?.(answer.admission);
  });

  function fallBack(problem: string): void {
    if (closed) return;
    lastProblem = problem;
    if (degradedSince !== null) return;
    degradedSince = Date.now();
    logger.warn(
      'rate limits: the primary process does not answer; this worker now limits on its own (a key may get up to one budget per worker) until it does',
      {
        problem,
      },
    );
  }

  /** Sends an ask and resolves with its answer, or with undefined when the link is closed or the answer is late (after falling back). */
  function ask(message: LimitsAsk & { id: number }): Promise<Admission | null | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(message.id);
        fallBack(`no answer within ${answerTimeoutMs} ms`);
        resolve(undefined);
      }, answerTimeoutMs);
      waiting.set(message.id, (admission) => {
        clearTimeout(timer);
        resolve(admission);
      });
      if (!channel.send(message)) {
        clearTimeout(timer);
        waiting.delete(message.id);
        fallBack('the link to the primary is closed');
        resolve(undefined);
      }
    });
  }

  async function probe(): Promise<void> {
    if (degradedSince === null || probing || closed) return;
    probing = true;
    try {
      const answer = await ask({ type: 'limits:ping', id: nextId++ });
      if (answer === undefined || closed || degradedSince === null) return;
      logger.info('rate limits: the primary process answers again; limits are shared by the workers again', {
        degraded_seconds: Math.round((Date.now() - degradedSince) / 1000),
      });
      degradedSince = null;
    } catch (error) {
      logger.error('rate limits: probing the primary failed', errorFields(error));
    } finally {
      probing = false;
    }
  }
  const prober = setInterval(() => void probe(), options.probeIntervalMs ?? 1_000);
  prober.unref();

  return {
    admit(key, limits) {
      if (degradedSince !== null) return fallback.admit(key, limits);
      return ask({ type: 'limits:admit', id: nextId++, key, limits }).then((admission) => admission ?? fallback.admit(key, limits));
    },
    spendTokens(key, tokensPerMinute, tokens) {
      if (!(tokens > 0)) return;
      if (degradedSince !== null || !channel.send({ type: 'limits:spend', key, tokensPerMinute, tokens } satisfies LimitsAsk))
        fallback.spendTokens(key, tokensPerMinute, tokens);
    },
    degraded() {
      if (degradedSince === null) return null;
      return `limits are per worker since ${Math.round((Date.now() - degradedSince) / 1000)} s: the primary process of serve --workers does not answer (${lastProblem})`;
    },
    async close() {
      closed = true;
      clearInterval(prober);
      unsubscribe();
      for (const resolve of waiting.values()) resolve(null);
      waiting.clear();
      await fallback.close();
    },
  };
}
