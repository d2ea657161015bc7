/**
 * The fleet's `/metrics` under `serve --workers N`: the sum of every worker's
 * snapshot (`Metrics.snapshot`), by prom-client's
 * `AggregatorRegistry.aggregate`. Counters and histograms add up; each gauge
 * adds up as `metrics.ts` declared it (`aggregator`: summed amounts, or the
 * max of a 0/1 state); Node's process metrics are summed, but for a start
 * time, which means nothing summed and is left out.
 *
 * The primary gathers the snapshots over IPC (`cluster/fleet-metrics.ts`);
 * this only knows the snapshots' format, which is the tracking part's.
 */
import { AggregatorRegistry } from 'prom-client';
import type { MetricsSnapshot } from './metrics.js';

/** The Prometheus text of several registries' snapshots (the workers of `serve --workers`), each metric aggregated by its `aggregator`. */
export async function renderAggregate(snapshots: readonly MetricsSnapshot[]): Promise<{ contentType: string; body: string }> {
  const aggregate = AggregatorRegistry.aggregate([...snapshots]);
  return { contentType: aggregate.contentType, body: await aggregate.metrics() };
}

/** The same aggregate as one snapshot. */
export function aggregateSnapshots(snapshots: readonly MetricsSnapshot[]): Promise<MetricsSnapshot> {
  return AggregatorRegistry.aggregate([...snapshots]).getMetricsAsJSON();
}
