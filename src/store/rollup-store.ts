/**
 * Per-minute rollups of the traces: the Store keeps them with the traces
 * (`TraceStore.insertBatch` updates both in one transaction, counting only
 * traces it had not stored before), so stats over any window come from a few
 * rows per minute instead of a trace scan, and always agree with the traces.
 * Rollups outlive the traces' retention.
 *
 * A row is one (account, project, workload, environment, served model,
 * minute). Calls without a scope (refused before it was known) or without a
 * served model are rolled up under the empty string.
 */
import type { Environment } from './store.js';

export interface RollupRow {
  accountId: string;
  project: string;
  workload: string;
  environment: Environment;
  /** The served model, '' when none was chosen. */
  model: string;
  /** Start of the minute, epoch ms. */
  minute: number;
  calls: number;
  /** Calls with status `error`. */
  errors: number;
  /** Every call that did not succeed (errors and aborts), by error class. */
  errorClasses: Record<string, number>;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  /** Calls with a measured cost (`Trace.measuredCostUsd` not null), and their measured cost and tokens (prompt plus completion). */
  measuredCalls: number;
  measuredCostUsd: number;
  measuredTokens: number;
  /** Calls answered from the response cache (`Trace.cached`; counted in `calls` too), and the cost they saved (`Trace.costSavedUsd`). */
  cachedCalls: number;
  costSavedUsd: number;
  /** Encoded DDSketch of latency (ms); null with no call. */
  latency: Uint8Array | null;
  /** Encoded DDSketch of time to first token (ms, streams); null with none. */
  ttft: Uint8Array | null;
}

export interface RollupQuery {
  project?: string;
  workload?: string;
  environment?: Environment;
  /** Minutes starting at or after `since` and before `until`. */
  since: number;
  until: number;
}

/** One served model's calls that had a measured cost: their measured cost and tokens, summed. */
export interface MeasuredModelCost {
  model: string;
  costUsd: number;
  tokens: number;
}

export interface RollupStore {
  /** The account's rows in the window, oldest minute first. */
  query(accountId: string, query: RollupQuery): Promise<RollupRow[]>;
  /**
   * Per served model, the measured cost and tokens of the minutes starting at
   * or after `since`, over every account, ordered by model: what the router
   * ranks models by with `routing.cost: measured`, the same figures in every
   * process of a fleet and after a restart. Across accounts on purpose: the
   * engines are the operator's, shared by every account, and nothing but these
   * sums leaves the store.
   */
  measuredByModel(since: number): Promise<MeasuredModelCost[]>;
}
