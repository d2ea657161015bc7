/** The StatsService on rollups: merge the rows of a window, read percentiles from the merged sketches. */
import type { RollupQuery, RollupRow, RollupStore } from '../store/rollup-store.js';
import { mergeEncoded, quantiles } from '../store/latency-sketch.js';
import { MINUTE_MS } from '../store/rollup-fold.js';
import type { CallStats, MeasuredCost, StatsService, StatsWindow, TimeBucket, WorkloadSummary } from './stats-service.js';

export function createRollupStatsService(rollups: RollupStore): StatsService {
  const rowsOf = (accountId: string, window: StatsWindow, scope: Pick<RollupQuery, 'project' | 'workload'>) =>
    rollups.query(accountId, {
      ...scope,
      ...(window.environment === 'all' ? {} : { environment: window.environment }),
      since: Math.floor(window.since / MINUTE_MS) * MINUTE_MS,
      until: window.until,
    });

  return {
    async workloadStats(scope, window) {
      const rows = await rowsOf(scope.accountId, window, { project: scope.project, workload: scope.workload });
      const failures = new Map<string, number>();
      for (const row of rows)
        for (const [name, count] of Object.entries(row.errorClasses)) failures.set(name, (failures.get(name) ?? 0) + count);
      const models = [...groupBy(rows, (row) => row.model)]
        .map(([model, modelRows]) => ({ model, ...callStats(modelRows) }))
        .sort((left, right) => right.calls - left.calls);
      return {
        ...callStats(rows),
        failures: [...failures].map(([errorClass, count]) => ({ errorClass, count })).sort((left, right) => right.count - left.count),
        models,
      };
    },

    async workloadSeries(scope, window, bucketMs) {
      const size = Math.max(MINUTE_MS, Math.round(bucketMs / MINUTE_MS) * MINUTE_MS);
      const rows = await rowsOf(scope.accountId, window, { project: scope.project, workload: scope.workload });
      const byBucket = groupBy(rows, (row) => Math.floor(row.minute / size) * size);
      const buckets: TimeBucket[] = [];
      for (let start = Math.floor(window.since / size) * size; start < window.until; start += size) {
        buckets.push({ start, ...callStats(byBucket.get(start) ?? []) });
      }
      return buckets;
    },

    async workloadSummaries(accountId, window, project) {
      const rows = (await rowsOf(accountId, window, project === undefined ? {} : { project })).filter(
        (row) => row.project !== '' && row.workload !== '',
      );
      const summaries: WorkloadSummary[] = [];
      for (const [key, group] of groupBy(rows, (row) => `${row.project}\u0000${row.workload}`)) {
        const [projectName, workload] = key.split('\u0000') as [string, string];
        const { calls, errors, errorRate, costUsd } = callStats(group, false);
        summaries.push({ project: projectName, workload, calls, errors, errorRate, costUsd });
      }
      return summaries.sort((left, right) => right.costUsd - left.costUsd || right.calls - left.calls);
    },
  };
}

function callStats(rows: readonly RollupRow[], withPercentiles = true): CallStats {
  let calls = 0;
  let errors = 0;
  let promptTokens = 0;
  let completionTokens = 0;
  let costUsd = 0;
  let measuredCalls = 0;
  let measuredCostUsd = 0;
  let measuredTokens = 0;
  for (const row of rows) {
    calls += row.calls;
    errors += row.errors;
    promptTokens += row.promptTokens;
    completionTokens += row.completionTokens;
    costUsd += row.costUsd;
    measuredCalls += row.measuredCalls;
    measuredCostUsd += row.measuredCostUsd;
    measuredTokens += row.measuredTokens;
  }
  const none = { p50: null, p95: null, p99: null };
  return {
    calls,
    errors,
    errorRate: calls === 0 ? 0 : errors / calls,
    promptTokens,
    completionTokens,
    costUsd,
    measured: measuredCost(measuredCalls, measuredCostUsd, measuredTokens),
    latencyMs: withPercentiles ? quantiles(mergeEncoded(rows.map((row) => row.latency))) : none,
    ttftMs: withPercentiles ? quantiles(mergeEncoded(rows.map((row) => row.ttft))) : none,
  };
}

function measuredCost(calls: number, costUsd: number, tokens: number): MeasuredCost | null {
  if (calls === 0) return null;
  return { calls, costUsd, costPerCallUsd: costUsd / calls, costPerMillionTokensUsd: tokens === 0 ? null : (costUsd / tokens) * 1_000_000 };
}

function groupBy<Key>(rows: readonly RollupRow[], keyOf: (row: RollupRow) => Key): Map<Key, RollupRow[]> {
  const groups = new Map<Key, RollupRow[]>();
  for (const row of rows) {
    const key = keyOf(row);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [row]);
    else group.push(row);
  }
  return groups;
}
