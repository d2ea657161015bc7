/**
 * The attributes of taskgate's spans, as keys encoded once (`AttributeKey`):
 * a span writes each attribute straight into its batch, copying its key's
 * bytes, with no per-span attribute object or key lookup
 * (`span-batch-encoder.ts` says why this matters at thousands of calls a
 * second).
 *
 * The GenAI names follow the OpenTelemetry GenAI semantic conventions (kept
 * here as strings: their constants in `@opentelemetry/semantic-conventions`
 * are incubating, and deprecated there since the conventions moved to their
 * own repository); `gen_ai.provider.name` replaces the older `gen_ai.system`.
 */
import type { AttributeValue } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import { ProtobufWriter } from './protobuf-writer.js';

/** An attribute's name with its encodings, made once. */
export class AttributeKey {
  /** `KeyValue.key` in protobuf: tag, length and UTF-8 bytes. */
  readonly protobuf: Buffer;
  /** The start of a `KeyValue` in the OTLP JSON mapping: `{"key":"…","value":`. */
  readonly jsonPrefix: string;

  constructor(readonly name: string) {
    const writer = new ProtobufWriter(Buffer.allocUnsafe(name.length * 3 + 8));
    writer.tag(1, 2);
    writer.string(name);
    this.protobuf = writer.takeFrom(0);
    this.jsonPrefix = `{"key":${JSON.stringify(name)},"value":`;
  }
}

/**
 * Attributes a span writes together, whose values mostly repeat call after
 * call (the models, the scope, the replica, the environment): the span sets
 * `values` (in the order of `keys`; `undefined` leaves one out) and hands the
 * group to the encoder, which may copy the bytes of the last identical values
 * instead of writing them again (`protobuf-span-encoder.ts`). At thousands
 * of calls a second most calls repeat the last one's, so this is most of a
 * span's attribute bytes written as one copy. A group belongs to one span
 * kind of one exporter: spans are written one at a time, so its `values` are
 * filled and read within one write.
 */
export class AttributeGroup {
  readonly values: (AttributeValue | undefined)[];

  constructor(readonly keys: readonly AttributeKey[]) {
    this.values = keys.map(() => undefined);
  }
}

export const GEN_AI_OPERATION_NAME = new AttributeKey('gen_ai.operation.name');
export const GEN_AI_PROVIDER_NAME = new AttributeKey('gen_ai.provider.name');
export const GEN_AI_REQUEST_MODEL = new AttributeKey('gen_ai.request.model');
export const GEN_AI_RESPONSE_MODEL = new AttributeKey('gen_ai.response.model');
export const GEN_AI_RESPONSE_ID = new AttributeKey('gen_ai.response.id');
export const GEN_AI_RESPONSE_FINISH_REASONS = new AttributeKey('gen_ai.response.finish_reasons');
export const GEN_AI_USAGE_INPUT_TOKENS = new AttributeKey('gen_ai.usage.input_tokens');
export const GEN_AI_USAGE_OUTPUT_TOKENS = new AttributeKey('gen_ai.usage.output_tokens');
export const ERROR_TYPE = new AttributeKey(ATTR_ERROR_TYPE);
export const HTTP_RESPONSE_STATUS_CODE = new AttributeKey(ATTR_HTTP_RESPONSE_STATUS_CODE);

/** The only operation taskgate serves. */
export const CHAT_OPERATION = 'chat';
/** `gen_ai.provider.name` of the call's own span: the caller's provider is taskgate (engine spans name the engine's type). */
export const GATEWAY_PROVIDER = 'taskgate';

export const TASKGATE_PROJECT = new AttributeKey('taskgate.project');
export const TASKGATE_WORKLOAD = new AttributeKey('taskgate.workload');
export const TASKGATE_ROUTE_REASON = new AttributeKey('taskgate.route.reason');
export const TASKGATE_REQUEST_ID = new AttributeKey('taskgate.request_id');
export const TASKGATE_REPLICA = new AttributeKey('taskgate.replica');
export const TASKGATE_STREAM = new AttributeKey('taskgate.stream');
export const TASKGATE_ENVIRONMENT = new AttributeKey('taskgate.environment');
export const TASKGATE_COST_USD = new AttributeKey('taskgate.cost_usd');
/** On an engine span: the guard's second call, after the routed model's reply failed it. */
export const TASKGATE_GUARD_REASK = new AttributeKey('taskgate.guard.reask');
/** On a replay's root span: the router's shadow replay (or judge call), not a caller's call. */
export const TASKGATE_REPLAY = new AttributeKey('taskgate.replay');
