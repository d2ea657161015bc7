/**
 * Telemetry on: an OpenTelemetry TracerProvider of this gateway's own (never
 * registered globally), an OTLP/HTTP exporter (protobuf or JSON) and the
 * bounded batch processor that counts what it drops. Loaded only when an
 * endpoint is configured.
 *
 * What the SDK would otherwise read from `OTEL_*` variables itself (endpoint,
 * protocol, sampler, batch sizes) is passed explicitly, from the settings the
 * config loader resolved. Left to the SDK: `OTEL_EXPORTER_OTLP_HEADERS`,
 * which the exporter merges into the same headers it was given, and the span
 * limits (`OTEL_SPAN_ATTRIBUTE_*`), which taskgate does not need to set.
 */
import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, ParentBasedSampler } from '@opentelemetry/sdk-trace-base';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Trace } from '../store/store.js';
import { createBoundedSpanProcessor } from './bounded-span-processor.js';
import type { TelemetryOptions } from './create-telemetry.js';
import * as attribute from './span-attributes.js';
import type { AttemptedReplica, CallSpan, EngineOutcome, EngineSpan, RouteReason, Telemetry, TelemetrySettings } from './telemetry.js';

/** How long one export may take, retries included, before it counts as failed (its spans dropped). */
const EXPORT_TIMEOUT_MS = 10_000;
/** Spans held at once, waiting or being exported; past it new spans are dropped and counted. */
const MAX_QUEUE_SIZE = 2048;
/** Longest a span waits for its batch (a batch of 512 goes at once). */
const SCHEDULED_DELAY_MS = 1000;

export function createOtlpTelemetry(settings: TelemetrySettings, options: TelemetryOptions): Telemetry {
  const exporterConfig = { url: settings.tracesUrl, headers: settings.headers, timeoutMillis: EXPORT_TIMEOUT_MS };
  const exporter = settings.protocol === 'http/json' ? new JsonExporter(exporterConfig) : new ProtobufExporter(exporterConfig);
  const processor = createBoundedSpanProcessor(exporter, {
    maxQueueSize: MAX_QUEUE_SIZE,
    scheduledDelayMs: SCHEDULED_DELAY_MS,
    exportTimeoutMs: EXPORT_TIMEOUT_MS,
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }),
    // A caller's sampled-out trace stays sampled out; a call without a traceparent is always recorded.
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('taskgate');
  const propagator = new W3CTraceContextPropagator();
  options.logger.info('telemetry: exporting spans over OTLP/HTTP', { url: settings.tracesUrl, protocol: settings.protocol, service_name: settings.serviceName });
  const engineType = (replica: string | null) => (replica === null ? undefined : options.engineTypes.get(replica));

  return {
    enabled: true,
    startCall(headers, startedAt) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const span = tracer.startSpan(attribute.CHAT_OPERATION, { kind: SpanKind.SERVER, startTime: startedAt }, parent);
      return recordingCallSpan(tracer, span, engineType);
    },
    startReplay(model, origin, scope) {
      const links: Link[] = origin?.span == null ? [] : [{ context: { ...origin.span, isRemote: true } }];
      const attributes: Attributes = { ...chatAttributes(model), [attribute.TASKGATE_REPLAY]: true };
      if (origin !== undefined) attributes[attribute.TASKGATE_REQUEST_ID] = origin.requestId;
      if (scope !== undefined) {
        attributes[attribute.TASKGATE_PROJECT] = scope.project;
        attributes[attribute.TASKGATE_WORKLOAD] = scope.workload;
      }
      const span = tracer.startSpan(`${attribute.CHAT_OPERATION} ${model}`, { kind: SpanKind.CLIENT, root: true, links, attributes });
      return recordingEngineSpan(span, model, engineType);
    },
    stats: () => processor.stats(),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

function chatAttributes(model: string): Attributes {
  return { [attribute.GEN_AI_OPERATION_NAME]: attribute.CHAT_OPERATION, [attribute.GEN_AI_REQUEST_MODEL]: model };
}

function recordingCallSpan(tracer: Tracer, span: Span, engineType: (replica: string | null) => string | undefined): CallSpan {
  // Children are started in the call span's context without making it the active one: no async-context machinery involved.
  const parent: Context = trace.setSpan(ROOT_CONTEXT, span);
  let routeReason: RouteReason | null = null;
  const startEngine = (model: string, reask: boolean) => {
    const attributes = chatAttributes(model);
    if (reask) attributes[attribute.TASKGATE_GUARD_REASK] = true;
    return recordingEngineSpan(tracer.startSpan(`${attribute.CHAT_OPERATION} ${model}`, { kind: SpanKind.CLIENT, attributes }, parent), model, engineType);
  };
  return {
    origin(requestId) {
      const { traceId, spanId, traceFlags } = span.spanContext();
      return { requestId, span: span.isRecording() ? { traceId, spanId, traceFlags } : null };
    },
    setRouteReason(reason) {
      routeReason = reason;
    },
    engineCall(model, attempt: AttemptedReplica, reask, work) {
      const engine = startEngine(model, reask);
      work.then(
        (result) => engine.end({ replica: result.replica, usage: result.completion.usage, finishReason: result.completion.choices[0]?.finish_reason ?? null }),
        (error: unknown) => engine.end({ replica: attempt.replica, error }),
      );
      return work;
    },
    startEngineCall: (model) => startEngine(model, false),
    end(finished, error) {
      if (finished.requestedModel !== null) span.updateName(`${attribute.CHAT_OPERATION} ${finished.requestedModel}`);
      span.setAttributes(callAttributes(finished, routeReason));
      if (error !== null) {
        span.setAttribute(ATTR_ERROR_TYPE, error.code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      }
      span.end();
    },
  };
}

function callAttributes(finished: Trace, routeReason: RouteReason | null): Attributes {
  const attributes: Attributes = {
    [attribute.GEN_AI_OPERATION_NAME]: attribute.CHAT_OPERATION,
    [attribute.GEN_AI_PROVIDER_NAME]: attribute.GATEWAY_PROVIDER,
    [attribute.GEN_AI_USAGE_INPUT_TOKENS]: finished.promptTokens,
    [attribute.GEN_AI_USAGE_OUTPUT_TOKENS]: finished.completionTokens,
    [attribute.TASKGATE_REQUEST_ID]: finished.requestId,
    [attribute.TASKGATE_ENVIRONMENT]: finished.environment,
    [attribute.TASKGATE_STREAM]: finished.stream,
    [attribute.TASKGATE_COST_USD]: finished.costUsd,
    [ATTR_HTTP_RESPONSE_STATUS_CODE]: finished.httpStatus,
  };
  const optional: Array<[string, string | null]> = [
    [attribute.GEN_AI_REQUEST_MODEL, finished.requestedModel],
    [attribute.GEN_AI_RESPONSE_MODEL, finished.servedModel],
    [attribute.TASKGATE_PROJECT, finished.project],
    [attribute.TASKGATE_WORKLOAD, finished.workload],
    [attribute.TASKGATE_ROUTE_REASON, routeReason],
    [attribute.TASKGATE_REPLICA, finished.replica],
  ];
  for (const [name, value] of optional) if (value !== null) attributes[name] = value;
  if (finished.finishReason !== null) attributes[attribute.GEN_AI_RESPONSE_FINISH_REASONS] = [finished.finishReason];
  if (finished.requestedModel !== null && finished.status === 'ok') attributes[attribute.GEN_AI_RESPONSE_ID] = `chatcmpl-${finished.requestId.slice(4)}`;
  return attributes;
}

function recordingEngineSpan(span: Span, model: string, engineType: (replica: string | null) => string | undefined): EngineSpan {
  return {
    end(outcome: EngineOutcome) {
      const provider = engineType(outcome.replica);
      if (provider !== undefined) span.setAttribute(attribute.GEN_AI_PROVIDER_NAME, provider);
      if (outcome.replica !== null) span.setAttribute(attribute.TASKGATE_REPLICA, outcome.replica);
      if ('error' in outcome) {
        const error = outcome.error;
        const type = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : error instanceof Error ? error.name : 'unknown';
        span.setAttribute(ATTR_ERROR_TYPE, type);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      } else {
        span.setAttribute(attribute.GEN_AI_RESPONSE_MODEL, model);
        if (outcome.usage !== null) {
          span.setAttribute(attribute.GEN_AI_USAGE_INPUT_TOKENS, outcome.usage.prompt_tokens);
          span.setAttribute(attribute.GEN_AI_USAGE_OUTPUT_TOKENS, outcome.usage.completion_tokens);
        }
        if (outcome.finishReason !== null) span.setAttribute(attribute.GEN_AI_RESPONSE_FINISH_REASONS, [outcome.finishReason]);
      }
      span.end();
    },
  };
}
