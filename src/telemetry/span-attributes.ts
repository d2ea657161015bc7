/**
 * Attribute names of taskgate's spans. The GenAI ones follow the OpenTelemetry
 * GenAI semantic conventions (kept here as strings: the constants of
 * `@opentelemetry/semantic-conventions` for them are incubating and
 * deprecated there since the conventions moved to their own repository);
 * `gen_ai.provider.name` replaces the older `gen_ai.system`.
 */
export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const GEN_AI_RESPONSE_ID = 'gen_ai.response.id';
export const GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';

/** The only operation taskgate serves. */
export const CHAT_OPERATION = 'chat';
/** `gen_ai.provider.name` of the call's own span: the caller's provider is taskgate (engine spans name the engine's type). */
export const GATEWAY_PROVIDER = 'taskgate';

export const TASKGATE_PROJECT = 'taskgate.project';
export const TASKGATE_WORKLOAD = 'taskgate.workload';
export const TASKGATE_ROUTE_REASON = 'taskgate.route.reason';
export const TASKGATE_REQUEST_ID = 'taskgate.request_id';
export const TASKGATE_REPLICA = 'taskgate.replica';
export const TASKGATE_STREAM = 'taskgate.stream';
export const TASKGATE_ENVIRONMENT = 'taskgate.environment';
export const TASKGATE_COST_USD = 'taskgate.cost_usd';
/** On an engine span: the guard's second call, after the routed model's reply failed it. */
export const TASKGATE_GUARD_REASK = 'taskgate.guard.reask';
/** On a replay's root span: the router's shadow replay (or judge call), not a caller's call. */
export const TASKGATE_REPLAY = 'taskgate.replay';
