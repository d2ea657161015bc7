/**
 * The primary's half of the cluster rate limiter: the budgets of every worker
 * of `serve --workers N`, in one memory limiter, so N workers give a key one
 * budget, not N. Each worker's link is attached; admissions are answered in
 * the order they arrive, and the memory limiter decides each synchronously,
 * so concurrent admissions from several workers are serialised.
 */
import type { MessageChannel } from '../../ipc/message-channel.js';
import { createMemoryRateLimiter } from '../memory/memory-rate-limiter.js';
import type { RateLimiter } from '../rate-limiter.js';
import { asLimitsAsk, type LimitsAnswer } from './limits-messages.js';

export interface ClusterLimitsHost {
  /** Answers the limits asks arriving on `channel` (one worker's link); returns the function that stops. */
  attach(channel: MessageChannel): () => void;
  close(): Promise<void>;
}

export function createClusterLimitsHost(limiter: RateLimiter = createMemoryRateLimiter()): ClusterLimitsHost {
  return {
    attach(channel) {
      return channel.subscribe((message) => {
        const ask = asLimitsAsk(message);
        if (ask === null) return;
        if (ask.type === 'limits:spend') return limiter.spendTokens(ask.key, ask.tokensPerMinute, ask.tokens);
        if (ask.type === 'limits:ping')
          return void channel.send({ type: 'limits:answer', id: ask.id, admission: null } satisfies LimitsAnswer);
        const admission = limiter.admit(ask.key, ask.limits);
        if (admission instanceof Promise)
          void admission.then((settled) => channel.send({ type: 'limits:answer', id: ask.id, admission: settled } satisfies LimitsAnswer));
        else channel.send({ type: 'limits:answer', id: ask.id, admission } satisfies LimitsAnswer);
      });
    },
    close: () => limiter.close(),
  };
}
