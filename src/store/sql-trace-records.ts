/**
 * The `traces` table's rows (`store.ts`) as both SQL back ends read and
 * write them (`sql-records.ts` says how rows map to records): metadata and
 * attempts as JSON, `stream` and `cached` as the dialect keeps a boolean
 * (SQLite 0/1, PostgreSQL BOOLEAN), which the back end converts itself.
 */
import { selectList } from './sql-records.js';
import type { Trace } from './store.js';

/** The column of each property, in the order both back ends insert them. */
const traceColumnOf: { readonly [Property in keyof Trace]-?: string } = {
  requestId: 'request_id',
  accountId: 'account_id',
  keyId: 'key_id',
  environment: 'environment',
  project: 'project',
  workload: 'workload',
  user: 'end_user',
  requestedModel: 'requested_model',
  servedModel: 'served_model',
  routeReason: 'route_reason',
  routeShare: 'route_share',
  replica: 'replica',
  attempts: 'attempts',
  status: 'status',
  errorClass: 'error_class',
  errorMessage: 'error_message',
  httpStatus: 'http_status',
  finishReason: 'finish_reason',
  promptTokens: 'prompt_tokens',
  completionTokens: 'completion_tokens',
  costUsd: 'cost_usd',
  cached: 'cached',
  costSavedUsd: 'cost_saved_usd',
  engineSeconds: 'engine_seconds',
  measuredCostUsd: 'measured_cost_usd',
  latencyMs: 'latency_ms',
  ttftMs: 'ttft_ms',
  stream: 'stream',
  metadata: 'metadata',
  startedAt: 'started_at',
  requestBody: 'request_body',
  replyBody: 'reply_body',
};

/** The properties in insertion order; `traceInsertColumns` names their columns in the same order. */
export const traceProperties = Object.keys(traceColumnOf) as ReadonlyArray<keyof Trace>;
export const traceInsertColumns = traceProperties.map((property) => traceColumnOf[property]).join(', ');
export const traceColumns = selectList<Trace>(traceColumnOf);

/** A trace as stored; `Flag` is how the dialect keeps a boolean. */
export type TraceRow<Flag> = Omit<Trace, 'stream' | 'cached' | 'metadata' | 'attempts'> & {
  stream: Flag;
  cached: Flag;
  metadata: string | null;
  attempts: string | null;
};

/**
 * A trace's values as both back ends store them, in `traceProperties` order:
 * metadata and attempts as JSON, `stream` and `cached` as the dialect keeps
 * them. The properties are read by name, not looked up by a key in a loop (a
 * megamorphic load each, on every stored call).
 */
export function traceValues<Flag>(trace: Trace, stream: Flag, cached: Flag): unknown[] {
  return [
    trace.requestId,
    trace.accountId,
    trace.keyId,
    trace.environment,
    trace.project,
    trace.workload,
    trace.user,
    trace.requestedModel,
    trace.servedModel,
    trace.routeReason,
    trace.routeShare,
    trace.replica,
    trace.attempts === null ? null : JSON.stringify(trace.attempts),
    trace.status,
    trace.errorClass,
    trace.errorMessage,
    trace.httpStatus,
    trace.finishReason,
    trace.promptTokens,
    trace.completionTokens,
    trace.costUsd,
    cached,
    trace.costSavedUsd ?? null,
    trace.engineSeconds,
    trace.measuredCostUsd,
    trace.latencyMs,
    trace.ttftMs,
    stream,
    trace.metadata === null ? null : JSON.stringify(trace.metadata),
    trace.startedAt,
    trace.requestBody,
    trace.replyBody,
  ];
}

export function fromTraceRow(row: TraceRow<unknown>, stream: boolean, cached: boolean): Trace {
  return {
    ...row,
    stream,
    cached,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, string>),
    attempts: row.attempts === null ? null : (JSON.parse(row.attempts) as Trace['attempts']),
  };
}
