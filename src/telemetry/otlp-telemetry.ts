/**
 * Telemetry on: taskgate's call and engine spans, each writing itself the
 * moment it ends into a bounded batch (OTLP protobuf or JSON;
 * `span-batch-encoder.ts` says why not the SDK's span objects), and the
 * official OTLP/HTTP export delegate shipping the batches. Loaded only when
 * an endpoint is configured.
 *
 * Official packages do what they are for: the W3C propagator reads the
 * caller's `traceparent` / `tracestate`, the resource is the SDK's default
 * (`telemetry.sdk.*`) with `service.name`, and the export delegate brings the
 * endpoint, `OTEL_EXPORTER_OTLP_HEADERS` merged into the configured headers,
 * the timeout, retries with backoff on 429/502/503/504 and gzip when
 * `OTEL_EXPORTER_OTLP_COMPRESSION` asks. Sampling is the SDK default's
 * (parent-based, always on): a caller's sampled-out trace is not recorded.
 */
import { defaultTextMapGetter, isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { IncomingHttpHeaders } from 'node:http';
import type { Usage } from '../api/chat-types.js';
import type { GatewayError } from '../api/errors.js';
import type { Trace } from '../store/store.js';
import type { TelemetryOptions } from './create-telemetry.js';
import { createUnrecordedSpans } from './disabled-telemetry.js';
import { createJsonSpanEncoder } from './json-span-encoder.js';
import { createProtobufSpanEncoder } from './protobuf-span-encoder.js';
import * as attribute from './span-attributes.js';
import type { EncodedSpans, EndedSpan, SpanBatchEncoder, SpanLink, SpanSource } from './span-batch-encoder.js';
import { createSpanExportQueue, type SpanExportQueue } from './span-export-queue.js';
import { createSpanIds, type SpanIds } from './span-ids.js';
import type { AttemptedReplica, CallOrigin, CallSpan, EngineOutcome, EngineSpan, RouteReason, Telemetry, TelemetrySettings } from './telemetry.js';

/** How long one export may take, retries included, before it counts as failed (its spans dropped). */
const EXPORT_TIMEOUT_MS = 10_000;
/** Spans held at once, waiting or being exported; past it new spans are dropped and counted. */
const MAX_QUEUE_SIZE = 2048;
/** Spans per export request. */
const MAX_BATCH_SIZE = 512;
/** Longest a span waits for its batch (a full batch goes at once). */
const SCHEDULED_DELAY_MS = 1000;

export function createOtlpTelemetry(settings: TelemetrySettings, options: TelemetryOptions): Telemetry {
  const json = settings.protocol === 'http/json';
  const source: SpanSource = {
    resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName })).attributes,
    scope: { name: 'taskgate' },
  };
  const queue = createSpanExportQueue(json ? createJsonSpanEncoder(source) : createProtobufSpanEncoder(source), createExporter(settings, json), {
    maxQueueSize: MAX_QUEUE_SIZE,
    maxBatchSize: MAX_BATCH_SIZE,
    scheduledDelayMs: SCHEDULED_DELAY_MS,
  });
  const recorder: SpanRecorder = {
    ids: createSpanIds(),
    queue,
    engineType: (replica) => (replica === null ? undefined : options.engineTypes.get(replica)),
  };
  const propagator = new W3CTraceContextPropagator();
  const unrecorded = createUnrecordedSpans();
  options.logger.info('telemetry: exporting spans over OTLP/HTTP', { url: settings.tracesUrl, protocol: settings.protocol, service_name: settings.serviceName });

  return {
    enabled: true,
    startCall(headers, startedAt) {
      const caller = callerSpanContext(propagator, headers);
      if (caller !== null && (caller.traceFlags & TraceFlags.SAMPLED) === 0) return unrecorded.callSpan;
      return new RecordingCallSpan(recorder, caller, startedAt);
    },
    startReplay(model, origin, scope) {
      const links: SpanLink[] = origin?.span == null ? [] : [{ traceId: origin.span.traceId, spanId: origin.span.spanId, traceFlags: origin.span.traceFlags, isRemote: true }];
      const replayTrace: TraceOf = { traceId: recorder.ids.traceId(), traceState: null, traceFlags: TraceFlags.SAMPLED };
      return new RecordingEngineSpan(recorder, replayTrace, null, model, false, { requestId: origin?.requestId, scope, links });
    },
    stats: () => queue.stats(),
    flush: () => queue.flush(),
    shutdown: () => queue.shutdown(),
  };
}

/**
 * The official OTLP/HTTP export delegate (what `@opentelemetry/exporter-trace-otlp-*`
 * are made of), shipping the bodies our encoders made; responses (partial
 * success) are read by the official deserializers.
 */
function createExporter(settings: TelemetrySettings, json: boolean): OTLPExporterBase<EncodedSpans> {
  const configuration = convertLegacyHttpOptions({ url: settings.tracesUrl, headers: settings.headers, timeoutMillis: EXPORT_TIMEOUT_MS }, 'TRACES', 'v1/traces', {
    'Content-Type': json ? 'application/json' : 'application/x-protobuf',
  });
  const responses = json ? JsonTraceSerializer : ProtobufTraceSerializer;
  const serializer = { serializeRequest: (batch: EncodedSpans) => batch.body, deserializeResponse: (data: Uint8Array) => responses.deserializeResponse(data) };
  const counter = { name: 'span' as const, countItems: (batch: EncodedSpans) => batch.spanCount };
  return new OTLPExporterBase(createOtlpHttpExportDelegate(configuration, serializer, 'otlp_http_span_exporter', counter, undefined));
}

/** The caller's span context from a valid `traceparent` (and its `tracestate`), else null. */
function callerSpanContext(propagator: W3CTraceContextPropagator, headers: IncomingHttpHeaders): SpanContext | null {
  if (headers.traceparent === undefined) return null;
  const context = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter));
  return context !== undefined && isSpanContextValid(context) ? context : null;
}

/** What every recording span shares. */
interface SpanRecorder {
  ids: SpanIds;
  queue: SpanExportQueue;
  /** `gen_ai.provider.name` of an engine span: the engine's type, by replica. */
  engineType(replica: string | null): string | undefined;
}

/** The trace a span belongs to. */
interface TraceOf {
  traceId: string;
  traceState: string | null;
  traceFlags: number;
}

/** What marks a replay's span: the call it replays (its request id and a link to its span, when known) and the call's scope. */
interface ReplayOf {
  requestId: string | undefined;
  scope: { project: string; workload: string } | undefined;
  links: SpanLink[];
}

const NO_LINKS: readonly SpanLink[] = [];

const now = () => performance.timeOrigin + performance.now();

/**
 * The span of one chat call (kind SERVER), the caller's child when it sent a
 * `traceparent`; written when the call ends, together with its engine spans
 * that ended before it (one pass through the encoder, not one a span).
 */
class RecordingCallSpan implements CallSpan, EndedSpan {
  private readonly trace: TraceOf;
  readonly spanId: string;
  /** Engine spans that ended before the call, written with it. */
  private readonly children: RecordingEngineSpan[] = [];
  private routeReason: RouteReason | null = null;
  private finished: Trace | null = null;
  private error: GatewayError | null = null;
  private endTime = 0;

  constructor(
    private readonly recorder: SpanRecorder,
    private readonly caller: SpanContext | null,
    private readonly startTime: number,
  ) {
    this.trace =
      caller === null
        ? { traceId: recorder.ids.traceId(), traceState: null, traceFlags: TraceFlags.SAMPLED }
        : { traceId: caller.traceId, traceState: caller.traceState?.serialize() ?? null, traceFlags: caller.traceFlags };
    this.spanId = recorder.ids.spanId();
  }

  origin(requestId: string): CallOrigin {
    return { requestId, span: { traceId: this.trace.traceId, spanId: this.spanId, traceFlags: this.trace.traceFlags } };
  }

  setRouteReason(reason: RouteReason): void {
    this.routeReason = reason;
  }

  startEngineCall(model: string, reask = false): EngineSpan {
    return new RecordingEngineSpan(this.recorder, this.trace, this, model, reask, null);
  }

  end(finished: Trace, error: GatewayError | null): void {
    if (this.finished !== null) return;
    this.finished = finished;
    this.error = error;
    this.endTime = now();
    this.recorder.queue.add(this);
  }

  /** Takes an engine span that ended, to write it with the call's; false once the call has ended (the engine span then goes on its own). */
  adopt(child: RecordingEngineSpan): boolean {
    if (this.finished !== null) return false;
    this.children.push(child);
    return true;
  }

  get spanCount(): number {
    return 1 + this.children.length;
  }

  writeTo(encoder: SpanBatchEncoder): void {
    const { finished, error, trace } = this;
    if (finished === null) return;
    for (const child of this.children) child.writeTo(encoder);
    encoder.beginSpan({
      traceId: trace.traceId,
      spanId: this.spanId,
      parentSpanId: this.caller?.spanId ?? null,
      traceState: trace.traceState,
      name: finished.requestedModel === null ? attribute.CHAT_OPERATION : `${attribute.CHAT_OPERATION} ${finished.requestedModel}`,
      kind: SpanKind.SERVER,
      startTime: this.startTime,
      endTime: this.endTime,
    });
    encoder.attribute(attribute.GEN_AI_OPERATION_NAME, attribute.CHAT_OPERATION);
    encoder.attribute(attribute.GEN_AI_PROVIDER_NAME, attribute.GATEWAY_PROVIDER);
    if (finished.requestedModel !== null) encoder.attribute(attribute.GEN_AI_REQUEST_MODEL, finished.requestedModel);
    if (finished.servedModel !== null) encoder.attribute(attribute.GEN_AI_RESPONSE_MODEL, finished.servedModel);
    if (finished.requestedModel !== null && finished.status === 'ok') encoder.attribute(attribute.GEN_AI_RESPONSE_ID, `chatcmpl-${finished.requestId.slice(4)}`);
    if (finished.finishReason !== null) encoder.attribute(attribute.GEN_AI_RESPONSE_FINISH_REASONS, [finished.finishReason]);
    encoder.attribute(attribute.GEN_AI_USAGE_INPUT_TOKENS, finished.promptTokens);
    encoder.attribute(attribute.GEN_AI_USAGE_OUTPUT_TOKENS, finished.completionTokens);
    if (finished.project !== null) encoder.attribute(attribute.TASKGATE_PROJECT, finished.project);
    if (finished.workload !== null) encoder.attribute(attribute.TASKGATE_WORKLOAD, finished.workload);
    if (this.routeReason !== null) encoder.attribute(attribute.TASKGATE_ROUTE_REASON, this.routeReason);
    if (finished.replica !== null) encoder.attribute(attribute.TASKGATE_REPLICA, finished.replica);
    encoder.attribute(attribute.TASKGATE_REQUEST_ID, finished.requestId);
    encoder.attribute(attribute.TASKGATE_ENVIRONMENT, finished.environment);
    encoder.attribute(attribute.TASKGATE_STREAM, finished.stream);
    encoder.attribute(attribute.TASKGATE_COST_USD, finished.costUsd);
    encoder.attribute(attribute.HTTP_RESPONSE_STATUS_CODE, finished.httpStatus);
    if (error !== null) encoder.attribute(attribute.ERROR_TYPE, error.code);
    encoder.endSpan({
      status: error === null ? SpanStatusCode.UNSET : SpanStatusCode.ERROR,
      statusMessage: error?.message,
      links: NO_LINKS,
      traceFlags: trace.traceFlags,
      parentIsRemote: this.caller !== null,
    });
  }
}

/** An engine call's span (kind CLIENT): a call's child (written with the call), or the root of a replay's own trace (written when it ends). */
class RecordingEngineSpan implements EngineSpan, EndedSpan {
  readonly spanCount = 1;
  private readonly spanId: string;
  private readonly startTime = now();
  private endTime = 0;
  private outcome: EngineOutcome | null = null;

  constructor(
    private readonly recorder: SpanRecorder,
    private readonly trace: TraceOf,
    private readonly parent: RecordingCallSpan | null,
    private readonly model: string,
    private readonly reask: boolean,
    private readonly replay: ReplayOf | null,
  ) {
    this.spanId = recorder.ids.spanId();
  }

  end(outcome: EngineOutcome): void {
    if (this.outcome !== null) return;
    this.outcome = outcome;
    this.endTime = now();
    if (this.parent === null || !this.parent.adopt(this)) this.recorder.queue.add(this);
  }

  writeTo(encoder: SpanBatchEncoder): void {
    const { outcome, replay } = this;
    if (outcome === null) return;
    encoder.beginSpan({
      traceId: this.trace.traceId,
      spanId: this.spanId,
      parentSpanId: this.parent?.spanId ?? null,
      traceState: this.trace.traceState,
      name: `${attribute.CHAT_OPERATION} ${this.model}`,
      kind: SpanKind.CLIENT,
      startTime: this.startTime,
      endTime: this.endTime,
    });
    encoder.attribute(attribute.GEN_AI_OPERATION_NAME, attribute.CHAT_OPERATION);
    encoder.attribute(attribute.GEN_AI_REQUEST_MODEL, this.model);
    const provider = this.recorder.engineType(outcome.replica);
    if (provider !== undefined) encoder.attribute(attribute.GEN_AI_PROVIDER_NAME, provider);
    if (outcome.replica !== null) encoder.attribute(attribute.TASKGATE_REPLICA, outcome.replica);
    if (this.reask) encoder.attribute(attribute.TASKGATE_GUARD_REASK, true);
    if (replay !== null) {
      encoder.attribute(attribute.TASKGATE_REPLAY, true);
      if (replay.requestId !== undefined) encoder.attribute(attribute.TASKGATE_REQUEST_ID, replay.requestId);
      if (replay.scope !== undefined) {
        encoder.attribute(attribute.TASKGATE_PROJECT, replay.scope.project);
        encoder.attribute(attribute.TASKGATE_WORKLOAD, replay.scope.workload);
      }
    }
    const failed = 'error' in outcome;
    if (failed) encoder.attribute(attribute.ERROR_TYPE, errorType(outcome.error));
    else {
      encoder.attribute(attribute.GEN_AI_RESPONSE_MODEL, this.model);
      if (outcome.usage !== null) {
        encoder.attribute(attribute.GEN_AI_USAGE_INPUT_TOKENS, outcome.usage.prompt_tokens);
        encoder.attribute(attribute.GEN_AI_USAGE_OUTPUT_TOKENS, outcome.usage.completion_tokens);
      }
      if (outcome.finishReason !== null) encoder.attribute(attribute.GEN_AI_RESPONSE_FINISH_REASONS, [outcome.finishReason]);
    }
    encoder.endSpan({
      status: failed ? SpanStatusCode.ERROR : SpanStatusCode.UNSET,
      statusMessage: failed ? (outcome.error instanceof Error ? outcome.error.message : String(outcome.error)) : undefined,
      links: replay?.links ?? NO_LINKS,
      traceFlags: this.trace.traceFlags,
      parentIsRemote: false,
    });
  }
}

/** `error.type`: the error's stable code when it has one, else its class name. */
function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.name : 'unknown';
}
