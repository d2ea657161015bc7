/**
 * A worker's `/metrics` under `serve --workers N`: whichever worker a scrape
 * reaches answers with the sum over every worker, so Prometheus sees one
 * gateway whatever the kernel's choice of worker. The worker asks the
 * primary, which gathers every worker's snapshot and aggregates them
 * (`fleet-metrics.ts`); this worker's own snapshot goes with the others when
 * the primary asks.
 *
 * Besides the gateway's metrics each worker reports
 * `taskgate_worker_calls_total{worker, pid}`: the calls it finished, so the
 * aggregate shows how the load spreads, which process serves in each slot,
 * and when a slot's worker was replaced (a new pid).
 */
import { Counter, Registry } from 'prom-client';
import { GatewayError } from '../api/errors.js';
import type { Metrics } from '../tracking/metrics.js';
import { asToWorker, type ToPrimary } from './fleet-messages.js';
import type { MessageChannel } from '../ipc/message-channel.js';

/** 503 on `/metrics`: the primary did not aggregate in time. Better no scrape than one worker's counters, which would read as a reset. */
export class MetricsUnavailableError extends GatewayError {
  constructor(why: string) {
    super(`The metrics of every worker could not be gathered: ${why}. Retry the scrape.`, {
      status: 503,
      code: 'metrics_unavailable',
      type: 'server_error',
      retryable: true,
    });
  }
}

export interface WorkerMetricsOptions {
  /** This worker's own metrics (`createMetrics`). */
  local: Metrics;
  /** The link to the primary. */
  channel: MessageChannel;
  /** The worker's slot, 0 to N-1: stays when a dead worker is replaced. */
  slot: number;
  /** Longest a scrape waits for the aggregate (ms). Default 5000. */
  timeoutMs?: number;
}

export function createWorkerMetrics(options: WorkerMetricsOptions): Metrics {
  const { local, channel } = options;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const register = new Registry();
  const calls = new Counter({
    name: 'taskgate_worker_calls_total',
    help: 'Inference calls finished by each worker of serve --workers: worker is its slot (0 to N-1), pid its process id (a new pid in a slot: the worker was replaced).',
    labelNames: ['worker', 'pid'],
    registers: [register],
  });
  const labels = { worker: String(options.slot), pid: String(process.pid) };
  // Reported from the start, so a worker that has served nothing yet still shows.
  calls.inc(labels, 0);

  const waiting = new Map<number, (outcome: { contentType: string; body: string } | Error) => void>();
  let nextId = 1;

  async function snapshot() {
    return [...(await local.snapshot()), ...(await register.getMetricsAsJSON())];
  }

  channel.subscribe((raw) => {
    const message = asToWorker(raw);
    if (message?.type === 'fleet:snapshot-request') {
      void snapshot().then((metrics) => channel.send({ type: 'fleet:snapshot', id: message.id, snapshot: metrics } satisfies ToPrimary));
    } else if (message?.type === 'fleet:metrics' || message?.type === 'fleet:metrics-failed') {
      const settle = waiting.get(message.id);
      waiting.delete(message.id);
      settle?.(
        message.type === 'fleet:metrics'
          ? { contentType: message.contentType, body: message.body }
          : new MetricsUnavailableError(message.message),
      );
    }
  });

  return {
    observeCall(trace) {
      local.observeCall(trace);
      calls.inc(labels, 1);
    },
    observeGatewayOverhead(seconds, stream) {
      local.observeGatewayOverhead(seconds, stream);
    },
    snapshot,
    render() {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new MetricsUnavailableError(`the primary process did not answer within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(id, (outcome) => {
          clearTimeout(timer);
          if (outcome instanceof Error) reject(outcome);
          else resolve(outcome);
        });
        if (!channel.send({ type: 'fleet:metrics-request', id } satisfies ToPrimary)) {
          clearTimeout(timer);
          waiting.delete(id);
          reject(new MetricsUnavailableError('the link to the primary process is closed'));
        }
      });
    },
  };
}
