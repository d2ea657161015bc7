/**
 * How the processes that follow hand their part of the router's work to the
 * leader, through the store's sample queue (`RoutingStore.pushSamples`):
 * the calls they sampled (with their bodies), a tally per route of the calls
 * they served (traffic, routed calls, the serving model's latencies), and
 * "decide again" requests after a contract edit made through them.
 *
 * The outbox (followers) batches what it hands over every `flushMs`; what it
 * cannot hand over (its buffer is full, the store is away) is dropped and
 * counted, never waited for. The inbox (the leader) takes the queue whenever
 * the change feed says there is something to take, and every `pollMs`, and
 * keeps the queue bounded by trimming its oldest end.
 */
import { errorFields, type Logger } from '../log/logger.js';
import type { Scope } from '../api/scope.js';
import type { RoutingStore } from '../store/routing-store.js';
import type { QueuedSample } from './replay-sample.js';

export type Handoff =
  | { type: 'sample'; sample: QueuedSample }
  | {
      type: 'tally';
      scope: Scope;
      requestedModel: string;
      calls: number;
      routedCalls: number;
      latencies: number[];
      ttfts: number[];
      at: number;
    }
  | { type: 'decide_again'; scope: Scope; detail: string };

type Tally = Extract<Handoff, { type: 'tally' }>;

export interface HandoffOutbox {
  sample(sample: QueuedSample): void;
  /** One call the follower served on this route. */
  count(scope: Scope, requestedModel: string, routed: boolean, latencyMs: number, ttftMs: number | null): void;
  decideAgain(scope: Scope, detail: string): void;
  /** Samples dropped because the buffer was full or the store refused them. */
  dropped(): number;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Latencies kept per route and flush: enough for the leader's window, bounded whatever the traffic. */
const LATENCIES_PER_TALLY = 50;

export function createHandoffOutbox(options: {
  routing: RoutingStore;
  logger: Logger;
  flushMs?: number;
  maxSamples?: number;
  now?: () => number;
}): HandoffOutbox {
  const { routing, logger } = options;
  const now = options.now ?? Date.now;
  const maxSamples = options.maxSamples ?? 1_000;
  let samples: Handoff[] = [];
  let tallies = new Map<string, Tally>();
  let dropped = 0;
  let flushing: Promise<void> | null = null;
  const timer = setInterval(() => void flush(), options.flushMs ?? 250);
  timer.unref();

  function flush(): Promise<void> {
    if (flushing !== null) return flushing;
    const bodies = [...samples, ...tallies.values()];
    if (bodies.length === 0) return Promise.resolve();
    const handedSamples = samples.filter((handoff) => handoff.type === 'sample').length;
    samples = [];
    tallies = new Map();
    const at = now();
    flushing = routing
      .pushSamples(bodies.map((body) => ({ body: JSON.stringify(body), at })))
      .catch((error: unknown) => {
        dropped += handedSamples;
        logger.warn('router: samples not handed to the leader', { samples: handedSamples, ...errorFields(error) });
      })
      .finally(() => (flushing = null));
    return flushing;
  }

  return {
    sample(sample) {
      if (samples.length >= maxSamples) dropped += 1;
      else samples.push({ type: 'sample', sample });
    },
    count(scope, requestedModel, routed, latencyMs, ttftMs) {
      const key = `${scope.accountId}\u0000${scope.project}\u0000${scope.workload}\u0000${requestedModel}`;
      let tally = tallies.get(key);
      if (tally === undefined)
        tallies.set(key, (tally = { type: 'tally', scope, requestedModel, calls: 0, routedCalls: 0, latencies: [], ttfts: [], at: now() }));
      tally.calls += 1;
      if (!routed) return;
      tally.routedCalls += 1;
      if (tally.latencies.length < LATENCIES_PER_TALLY) tally.latencies.push(latencyMs);
      if (ttftMs !== null && tally.ttfts.length < LATENCIES_PER_TALLY) tally.ttfts.push(ttftMs);
    },
    decideAgain(scope, detail) {
      samples.push({ type: 'decide_again', scope, detail });
    },
    dropped: () => dropped,
    flush,
    async close() {
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}

export interface HandoffInbox {
  /** Takes what waits now (the change feed said followers handed something over). */
  poke(): void;
  close(): Promise<void>;
}

export function createHandoffInbox(options: {
  routing: RoutingStore;
  logger: Logger;
  handle: (handoff: Handoff) => void;
  pollMs?: number;
  batchSize?: number;
  /** Samples kept in the queue at most; older ones are dropped (counted in `trimmed`). */
  maxQueued?: number;
  onTrimmed?: (count: number) => void;
}): HandoffInbox {
  const { routing, logger, handle } = options;
  const batchSize = options.batchSize ?? 64;
  const maxQueued = options.maxQueued ?? 10_000;
  let taking: Promise<void> | null = null;
  let takeAgain = false;
  let polls = 0;
  let closed = false;

  async function takeAll(): Promise<void> {
    do {
      takeAgain = false;
      if (++polls % 20 === 0) {
        const trimmed = await routing.trimSamples(maxQueued);
        if (trimmed > 0) options.onTrimmed?.(trimmed);
      }
      for (;;) {
        const bodies = await routing.takeSamples(batchSize);
        for (const body of bodies) dispatch(body);
        if (bodies.length < batchSize || closed) break;
      }
    } while (takeAgain && !closed);
  }

  function dispatch(body: string): void {
    try {
      handle(JSON.parse(body) as Handoff);
    } catch (error) {
      logger.warn('router: a handed-over sample could not be used', errorFields(error));
    }
  }

  function poke(): void {
    if (closed) return;
    if (taking !== null) {
      takeAgain = true;
      return;
    }
    taking = takeAll()
      .catch((error: unknown) => logger.warn('router: samples not taken from the store', errorFields(error)))
      .finally(() => (taking = null));
  }

  const timer = setInterval(poke, options.pollMs ?? 1_000);
  timer.unref();
  poke();

  return {
    poke,
    async close() {
      closed = true;
      clearInterval(timer);
      await taking;
    },
  };
}
