/**
 * A fixed set of resources (a model's context sequences) lent to one call at a
 * time, with a bounded queue of calls waiting for one.
 *
 * - `acquire` lends a free resource at once (the most recently released: a
 *   sequence still holding the last prompt, which the next one often shares a
 *   prefix with), or queues the caller while fewer
 *   than `maxWaiting` are queued, or fails with `EngineOverloadedError` (503
 *   with `retry-after`) so a burst is shed instead of piling up unbounded.
 * - Waiters are served first come, first served. A waiter whose signal aborts
 *   leaves the queue at once and rejects with `ClientAbortError`.
 * - `release` hands the resource straight to the oldest waiter, so a freed
 *   sequence never sits idle while someone waits.
 */
import { ClientAbortError, EngineOverloadedError } from '../../api/errors.js';

export interface LeasePool<Resource> {
  acquire(signal: AbortSignal): Promise<Resource>;
  release(resource: Resource): void;
  /** Resources lent out now. */
  readonly inUse: number;
  /** Calls waiting for a resource now. */
  readonly waiting: number;
}

export interface LeasePoolOptions<Resource> {
  resources: readonly Resource[];
  maxWaiting: number;
  /** Names the pool in the 503 message, e.g. the model id. */
  name: string;
  /** Sent as `retry-after` when the queue is full. */
  retryAfterSeconds?: number;
}

interface Waiter<Resource> {
  resolve(resource: Resource): void;
  reject(error: Error): void;
  signal: AbortSignal;
  onAbort(): void;
}

export function createLeasePool<Resource>(options: LeasePoolOptions<Resource>): LeasePool<Resource> {
  const free = [...options.resources];
  const total = free.length;
  const waiters: Array<Waiter<Resource>> = [];
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;

  function leave(waiter: Waiter<Resource>): void {
    waiter.signal.removeEventListener('abort', waiter.onAbort);
    const index = waiters.indexOf(waiter);
    if (index >= 0) waiters.splice(index, 1);
  }

  return {
    acquire(signal) {
      if (signal.aborted) return Promise.reject(new ClientAbortError());
      const resource = free.pop();
      if (resource !== undefined) return Promise.resolve(resource);
      if (waiters.length >= options.maxWaiting) {
        return Promise.reject(
          new EngineOverloadedError(
            `'${options.name}' is busy: all ${total} sequences are generating and ${waiters.length} calls are queued. Retry after ${retryAfterSeconds} s, or raise sequences / max_queue in the config.`,
            retryAfterSeconds,
          ),
        );
      }
      return new Promise<Resource>((resolve, reject) => {
        const waiter: Waiter<Resource> = {
          resolve,
          reject,
          signal,
          onAbort: () => {
            leave(waiter);
            reject(new ClientAbortError());
          },
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
        waiters.push(waiter);
      });
    },

    release(resource) {
      const waiter = waiters.shift();
      if (waiter === undefined) {
        free.push(resource);
        return;
      }
      waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(resource);
    },

    get inUse() {
      return total - free.length;
    },

    get waiting() {
      return waiters.length;
    },
  };
}
