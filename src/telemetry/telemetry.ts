/**
 * The OpenTelemetry contract: what the hot path and the router ask of
 * taskgate's span export (docs/telemetry.md says how to receive it).
 *
 * One span per chat call (kind SERVER, named `chat <requested model>`), with
 * the GenAI semantic conventions' attributes (`span-attributes.ts`) and
 * taskgate's own (`taskgate.project`, `taskgate.workload`,
 * `taskgate.route.reason`, …). Its children: one span per engine call (kind
 * CLIENT, with the replica), the guard's re-ask marked
 * `taskgate.guard.reask = true`. A shadow replay of the router is a trace of
 * its own (it runs later, often after the call's trace has been closed by the
 * caller's tooling), marked `taskgate.replay = true`, carrying the call's
 * request id and a span link to the call's span when that call was traced.
 *
 * Off (no endpoint configured) every method returns a shared no-op object:
 * nothing of OpenTelemetry is loaded or called on the hot path. On
 * (`otlp-telemetry.ts`), an ended call leaves a short record in shared
 * memory, and a worker thread writes and exports the spans: ending a span
 * never waits for the network or for encoding, and spans that do not fit
 * the ring or the export queue, or whose export fails, are dropped and
 * counted (`stats`, shown in `/metrics`).
 *
 * Nothing is registered globally (no `trace.setGlobalTracerProvider`): each
 * `createTelemetry` owns its worker, so two gateways in one process (tests)
 * export apart.
 */
import type { ScopeNames } from '../api/scope.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { Usage } from '../api/chat-types.js';
import type { GatewayError } from '../api/errors.js';
import type { Trace } from '../store/store.js';

/** Where and how spans are exported: resolved once from the config and the `OTEL_*` variables (`src/config/telemetry-settings.ts`). */
export interface TelemetrySettings {
  /** The full URL spans are POSTed to (`…/v1/traces`). */
  tracesUrl: string;
  protocol: 'http/protobuf' | 'http/json';
  /** Sent with every export request (an API key of the collector or vendor). */
  headers: Record<string, string>;
  /** `service.name` of the resource (`OTEL_SERVICE_NAME`, default `taskgate`). */
  serviceName: string;
}

/** Why the call was served by the model it was (`taskgate.route.reason`). */
export type RouteReason =
  /** No route: the model asked for serves. */
  | 'requested'
  /** The router's certified (cheaper) model serves. */
  | 'routed'
  /** Drawn into a certified share of the workload's calls that a cheaper model serves. */
  | 'split'
  /** Picked by a share's per-call policy (a model on the request's features), then drawn into the share of the calls it picks that a cheaper model serves. */
  | 'policy'
  /** The operator pinned the route to a model. */
  | 'pinned'
  /** The route's model cannot take the call's content (an image): the model asked for serves. */
  | 'content'
  /** The route's model has no engine in this process: the model asked for serves. */
  | 'no_engine'
  /** The routed model's reply failed the inline guard and a stronger model was asked again. */
  | 'guard_fallback';

/** What a replay needs to point back at the production call it replays (plain data: it travels with the sample, across processes too). */
export interface CallOrigin {
  requestId: string;
  /** The call span's context, for a span link; null when the call was not traced (telemetry off, or the caller's trace not sampled). */
  span: { traceId: string; spanId: string; traceFlags: number } | null;
}

/** What an engine call ended with: its reply's usage and finish reason, or the error it failed with. */
export type EngineOutcome =
  { replica: string | null; usage: Usage | null; finishReason: string | null } | { replica: string | null; error: unknown };

/** An engine call's span (or a replay's): ended exactly once. */
export interface EngineSpan {
  end(outcome: EngineOutcome): void;
}

/** Any object the engine pool fills with the replica it tried (a call's `CallTrace`): read when the engine span ends on an error. */
export interface AttemptedReplica {
  replica: string | null;
}

export interface CallSpan {
  /** The call's span context for the replay it may become, with its request id. */
  origin(requestId: string): CallOrigin;
  setRouteReason(reason: RouteReason): void;
  /**
   * A child span for one engine call, which the caller ends when the call
   * ends: a whole (JSON) reply when it arrives or fails, a stream when its
   * last chunk is read. `reask` marks the guard's second call.
   */
  startEngineCall(model: string, reask?: boolean): EngineSpan;
  /**
   * Ends the call's span from its finished trace: attributes, and an error
   * status with the error's code (`error.type`) when the call failed.
   */
  end(trace: Trace, error: GatewayError | null): void;
}

export interface Telemetry {
  /** Whether spans are exported. */
  readonly enabled: boolean;
  /**
   * The span of one chat call, started at `startedAt` (epoch milliseconds),
   * continuing the caller's W3C `traceparent` / `tracestate` when the headers
   * carry a valid one (a caller's unsampled trace is not recorded).
   */
  startCall(headers: IncomingHttpHeaders, startedAt: number): CallSpan;
  /** The root span of one shadow replay (or judge call) of the router on `model`, linked to the call it replays when known. */
  startReplay(model: string, origin: CallOrigin | undefined, scope: ScopeNames | undefined): EngineSpan;
  /** Spans exported, and dropped (queue full or export failed), since start; spans waiting in the queue. */
  stats(): TelemetryStats;
  /** Exports what is queued now (tests; `shutdown` does it too). */
  flush(): Promise<void>;
  /** Exports what is queued (bounded by the exporter's timeout), then stops. */
  shutdown(): Promise<void>;
}

export interface TelemetryStats {
  exported: number;
  dropped: number;
  queued: number;
}
