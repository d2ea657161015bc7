/**
 * The spans of a record (`span-record.ts`), written into the batch: a call's
 * span (kind SERVER) after its engine calls' (kind CLIENT, its children), or
 * an engine call alone (a replay: the root of a trace of its own, marked and
 * linked to the call it replays). Runs in the span worker; the GenAI
 * attributes are named in `span-attributes.ts`, and docs/telemetry.md lists
 * them.
 *
 * Ids the request thread did not send are drawn here. Attributes that mostly
 * repeat from one call to the next go out as groups (`AttributeGroup`), so a
 * run of alike calls writes most of each span as one copy.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import * as attribute from './span-attributes.js';
import type { SpanBatchEncoder, SpanLink } from './span-batch-encoder.js';
import { spanIdHex, traceIdHex, type SpanId, type SpanIdSource, type TraceId } from './span-ids.js';
import type { EngineCallRecord, SpanRecord } from './span-record.js';

/** A call span's attributes that mostly repeat from one call to the next; the rest (ids, tokens, cost) go one by one. */
const CALL_GROUP_KEYS = [
  attribute.GEN_AI_OPERATION_NAME,
  attribute.GEN_AI_PROVIDER_NAME,
  attribute.GEN_AI_REQUEST_MODEL,
  attribute.GEN_AI_RESPONSE_MODEL,
  attribute.GEN_AI_RESPONSE_FINISH_REASONS,
  attribute.TASKGATE_PROJECT,
  attribute.TASKGATE_WORKLOAD,
  attribute.TASKGATE_ROUTE_REASON,
  attribute.TASKGATE_REPLICA,
  attribute.TASKGATE_ENVIRONMENT,
  attribute.TASKGATE_STREAM,
  attribute.HTTP_RESPONSE_STATUS_CODE,
  attribute.ERROR_TYPE,
];

/** An engine span's, likewise. */
const ENGINE_GROUP_KEYS = [
  attribute.GEN_AI_OPERATION_NAME,
  attribute.GEN_AI_REQUEST_MODEL,
  attribute.GEN_AI_PROVIDER_NAME,
  attribute.TASKGATE_REPLICA,
  attribute.TASKGATE_GUARD_REASK,
  attribute.GEN_AI_RESPONSE_MODEL,
  attribute.GEN_AI_RESPONSE_FINISH_REASONS,
  attribute.ERROR_TYPE,
];

const NO_LINKS: readonly SpanLink[] = [];

export interface SpanWriters {
  /** How many spans `write` writes for the record. */
  spanCount(record: SpanRecord): number;
  write(encoder: SpanBatchEncoder, record: SpanRecord): void;
}

/** `engineTypes`: `gen_ai.provider.name` of an engine span, the engine's type by replica (engine id). */
export function createSpanWriters(ids: SpanIdSource, engineTypes: ReadonlyMap<string, string>): SpanWriters {
  const callGroup = new attribute.AttributeGroup(CALL_GROUP_KEYS);
  const engineGroup = new attribute.AttributeGroup(ENGINE_GROUP_KEYS);
  const spanName = lastOf((model: string) => `${attribute.CHAT_OPERATION} ${model}`);
  const finishReasons = lastOf((reason: string) => [reason]);

  function engineSpan(
    encoder: SpanBatchEncoder,
    record: SpanRecord,
    engineCall: EngineCallRecord,
    traceId: TraceId,
    parent: SpanId | null,
  ): void {
    const replay = record.kind === 'engine-call' && record.parent === null;
    const model = engineCall.model ?? '';
    encoder.beginSpan({
      traceId,
      spanId: ids.spanId(),
      parentSpanId: parent,
      traceState: record.traceState,
      name: spanName(model),
      kind: SpanKind.CLIENT,
      startTime: engineCall.startTime,
      endTime: engineCall.endTime,
    });
    const { values } = engineGroup;
    values[0] = attribute.CHAT_OPERATION;
    values[1] = model;
    values[2] = engineCall.replica === null ? undefined : engineTypes.get(engineCall.replica);
    values[3] = engineCall.replica ?? undefined;
    values[4] = engineCall.reask ? true : undefined;
    values[5] = engineCall.failed ? undefined : model;
    values[6] = engineCall.finishReason === null ? undefined : finishReasons(engineCall.finishReason);
    values[7] = engineCall.errorType ?? undefined;
    encoder.attributes(engineGroup);
    if (engineCall.hasUsage) {
      encoder.attribute(attribute.GEN_AI_USAGE_INPUT_TOKENS, engineCall.promptTokens);
      encoder.attribute(attribute.GEN_AI_USAGE_OUTPUT_TOKENS, engineCall.completionTokens);
    }
    if (replay) {
      encoder.attribute(attribute.TASKGATE_REPLAY, true);
      if (record.requestId !== null) encoder.attribute(attribute.TASKGATE_REQUEST_ID, record.requestId);
      if (record.project !== null) encoder.attribute(attribute.TASKGATE_PROJECT, record.project);
      if (record.workload !== null) encoder.attribute(attribute.TASKGATE_WORKLOAD, record.workload);
    }
    const { link } = record;
    encoder.endSpan({
      status: engineCall.failed ? SpanStatusCode.ERROR : SpanStatusCode.UNSET,
      statusMessage: engineCall.errorMessage ?? undefined,
      links:
        replay && link !== null
          ? [{ traceId: traceIdHex(link.traceId), spanId: spanIdHex(link.spanId), traceFlags: link.traceFlags, isRemote: true }]
          : NO_LINKS,
      traceFlags: record.traceFlags,
      parentIsRemote: false,
    });
  }

  function callSpan(encoder: SpanBatchEncoder, record: SpanRecord): void {
    const traceId = record.traceId ?? ids.traceId();
    const spanId = record.spanId ?? ids.spanId();
    for (let index = 0; index < record.engineCallCount; index++)
      engineSpan(encoder, record, record.engineCalls[index] as EngineCallRecord, traceId, spanId);
    encoder.beginSpan({
      traceId,
      spanId,
      parentSpanId: record.parent,
      traceState: record.traceState,
      name: record.requestedModel === null ? attribute.CHAT_OPERATION : spanName(record.requestedModel),
      kind: SpanKind.SERVER,
      startTime: record.startTime,
      endTime: record.endTime,
    });
    const { values } = callGroup;
    values[0] = attribute.CHAT_OPERATION;
    values[1] = attribute.GATEWAY_PROVIDER;
    values[2] = record.requestedModel ?? undefined;
    values[3] = record.servedModel ?? undefined;
    values[4] = record.finishReason === null ? undefined : finishReasons(record.finishReason);
    values[5] = record.project ?? undefined;
    values[6] = record.workload ?? undefined;
    values[7] = record.routeReason ?? undefined;
    values[8] = record.replica ?? undefined;
    values[9] = record.environment ?? undefined;
    values[10] = record.stream;
    values[11] = record.httpStatus;
    values[12] = record.errorCode ?? undefined;
    encoder.attributes(callGroup);
    const requestId = record.requestId ?? '';
    if (record.requestedModel !== null && record.succeeded)
      encoder.attribute(attribute.GEN_AI_RESPONSE_ID, `chatcmpl-${requestId.slice(4)}`);
    encoder.attribute(attribute.GEN_AI_USAGE_INPUT_TOKENS, record.promptTokens);
    encoder.attribute(attribute.GEN_AI_USAGE_OUTPUT_TOKENS, record.completionTokens);
    encoder.attribute(attribute.TASKGATE_REQUEST_ID, requestId);
    encoder.attribute(attribute.TASKGATE_COST_USD, record.costUsd);
    encoder.endSpan({
      status: record.errorCode === null ? SpanStatusCode.UNSET : SpanStatusCode.ERROR,
      statusMessage: record.errorMessage ?? undefined,
      links: NO_LINKS,
      traceFlags: record.traceFlags,
      parentIsRemote: record.parent !== null,
    });
  }

  return {
    spanCount: (record) => (record.kind === 'call' ? 1 + record.engineCallCount : 1),
    write(encoder, record) {
      if (record.kind === 'call') callSpan(encoder, record);
      else engineSpan(encoder, record, record.engineCalls[0] as EngineCallRecord, record.traceId ?? ids.traceId(), record.parent);
    },
  };
}

/** `make(key)`, keeping the last one made: a run of calls alike makes it once. */
function lastOf<Value>(make: (key: string) => Value): (key: string) => Value {
  let lastKey: string | null = null;
  let last: Value | undefined;
  return (key) => {
    if (key !== lastKey || last === undefined) {
      lastKey = key;
      last = make(key);
    }
    return last;
  };
}
