/**
 * The primary's side of `/metrics` under `serve --workers N`: on a scrape
 * (a worker's request, or the primary's own `server.metrics` address) it asks
 * every live worker for its snapshot and sums them (`renderAggregate`), plus
 * two series of its own: how many workers answered, and how many were
 * restarted after dying.
 *
 * A worker that does not answer within `timeoutMs` is left out of that
 * scrape (logged): its counters then drop out of the sums for one scrape,
 * as they do for good when a worker dies.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { errorFields, type Logger } from '../log/logger.js';
import type { Metrics, MetricsSnapshot } from '../tracking/metrics.js';
import { aggregateSnapshots, renderAggregate } from '../tracking/metrics-aggregate.js';
import { asToPrimary, type ToWorker } from './fleet-messages.js';
import type { MessageChannel } from '../ipc/message-channel.js';

export interface FleetMetrics {
  /** The aggregate, as `Metrics` so the primary's `server.metrics` app serves it; the primary itself serves no calls. */
  readonly metrics: Metrics;
  /** Answers one worker's scrapes and takes its snapshots; returns the function that stops. */
  attach(channel: MessageChannel): () => void;
  /** Counts a worker restarted after it died. */
  countRestart(): void;
}

export interface FleetMetricsOptions {
  /** The links to the workers alive now. */
  workers: () => MessageChannel[];
  logger: Logger;
  /** Longest a scrape waits for a worker's snapshot (ms). Default 2000, under the workers' own 5 s wait for the aggregate. */
  timeoutMs?: number;
}

export function createFleetMetrics(options: FleetMetricsOptions): FleetMetrics {
  const { logger } = options;
  const timeoutMs = options.timeoutMs ?? 2_000;
  const register = new Registry();
  const answering = new Gauge({
    name: 'taskgate_cluster_workers',
    help: 'Workers of serve --workers whose metrics this scrape sums.',
    registers: [register],
  });
  const restarts = new Counter({
    name: 'taskgate_cluster_worker_restarts_total',
    help: 'Workers of serve --workers restarted after they died.',
    registers: [register],
  });
  /** Scrapes waiting for snapshots, by id. */
  const gathering = new Map<number, (snapshot: MetricsSnapshot) => void>();
  let nextId = 1;

  async function gather(): Promise<MetricsSnapshot[]> {
    const id = nextId++;
    const snapshots: MetricsSnapshot[] = [];
    let asked = 0;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        logger.warn('metrics: some workers did not hand over their metrics in time; this scrape leaves them out', {
          asked,
          answered: snapshots.length,
          timeout_ms: timeoutMs,
        });
        resolve();
      }, timeoutMs);
      gathering.set(id, (snapshot) => {
        snapshots.push(snapshot);
        if (snapshots.length === asked) {
          clearTimeout(timer);
          resolve();
        }
      });
      for (const channel of options.workers()) if (channel.send({ type: 'fleet:snapshot-request', id } satisfies ToWorker)) asked++;
      if (asked === 0) {
        clearTimeout(timer);
        resolve();
      }
    });
    gathering.delete(id);
    return snapshots;
  }

  /** Every worker's snapshot, and the primary's own. */
  async function gatherAll(): Promise<MetricsSnapshot[]> {
    const snapshots = await gather();
    answering.set(snapshots.length);
    return [...snapshots, await register.getMetricsAsJSON()];
  }

  async function render(): Promise<{ contentType: string; body: string }> {
    return renderAggregate(await gatherAll());
  }

  return {
    metrics: {
      observeCall: () => undefined,
      observeGatewayOverhead: () => undefined,
      render,
      snapshot: async () => aggregateSnapshots(await gatherAll()),
    },
    attach(channel) {
      return channel.subscribe((raw) => {
        const message = asToPrimary(raw);
        if (message?.type === 'fleet:snapshot') gathering.get(message.id)?.(message.snapshot);
        else if (message?.type === 'fleet:metrics-request') {
          render().then(
            (rendered) => channel.send({ type: 'fleet:metrics', id: message.id, ...rendered } satisfies ToWorker),
            (error: unknown) => {
              logger.error("metrics: aggregating the workers' metrics failed", errorFields(error));
              channel.send({
                type: 'fleet:metrics-failed',
                id: message.id,
                message: error instanceof Error ? error.message : String(error),
              } satisfies ToWorker);
            },
          );
        }
      });
    },
    countRestart: () => restarts.inc(),
  };
}
