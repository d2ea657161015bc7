/**
 * The numbers a user asks of a workload, answered from per-minute rollups (not
 * trace scans): calls, errors by class, tokens, cost, and latency and time to
 * first token percentiles from mergeable sketches, over any time window, per
 * served model and as time series. The API, the CLI and the dashboard all
 * read them here, so they agree.
 *
 * Times are epoch milliseconds. Percentiles are null when there was no call
 * (or, for TTFT, no streamed call) in the window.
 */
import type { Scope } from '../api/scope.js';
import type { Environment } from '../store/store.js';

export interface StatsWindow {
  since: number;
  until: number;
  /** Production only by default: staging calls stay out of a workload's stats unless asked for. */
  environment: Environment | 'all';
}

export interface Percentiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface CallStats {
  calls: number;
  errors: number;
  /** errors / calls; 0 with no calls. */
  errorRate: number;
  promptTokens: number;
  completionTokens: number;
  /** At catalog prices (tokens × price). */
  costUsd: number;
  /** What the calls cost by their engines' time, beside `costUsd`; null when no call ran on an engine with a `cost_per_hour`. */
  measured: MeasuredCost | null;
  latencyMs: Percentiles;
  ttftMs: Percentiles;
}

/**
 * The cost of the calls that ran on engines with a `cost_per_hour`: their
 * share of the engines' busy time at that price (docs/measured-cost.md).
 */
export interface MeasuredCost {
  /** Calls with a measured cost (those on other engines, or that reached none, are left out). */
  calls: number;
  costUsd: number;
  /** costUsd / calls. */
  costPerCallUsd: number;
  /** Per million tokens, prompt and completion together; null when those calls had no tokens. */
  costPerMillionTokensUsd: number | null;
}

export interface ModelStats extends CallStats {
  /** The served model. */
  model: string;
}

export interface WorkloadStats extends CallStats {
  /** Error count per error class (`GatewayError.code`), largest first. */
  failures: Array<{ errorClass: string; count: number }>;
  /** Per served model, most calls first. */
  models: ModelStats[];
}

export interface TimeBucket extends CallStats {
  /** Start of the bucket. */
  start: number;
}

export interface WorkloadSummary extends Pick<CallStats, 'calls' | 'errors' | 'errorRate' | 'costUsd'> {
  project: string;
  workload: string;
}

export interface StatsService {
  workloadStats(scope: Scope, window: StatsWindow): Promise<WorkloadStats>;
  /** Buckets of `bucketMs` (a multiple of a minute) covering the window, empty ones included. */
  workloadSeries(scope: Scope, window: StatsWindow, bucketMs: number): Promise<TimeBucket[]>;
  /** Every workload of the account (or of one project) with calls in the window, most expensive first. */
  workloadSummaries(accountId: string, window: StatsWindow, project?: string): Promise<WorkloadSummary[]>;
}
