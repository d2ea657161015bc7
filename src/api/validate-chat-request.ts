/**
 * A parsed request body -> a trusted `ChatCompletionRequest` (DESIGN section 2).
 *
 * The reference is OpenAI's `CreateChatCompletionRequest` (the OpenAPI
 * fixture in `test/fixtures/openai-openapi/`): every request valid by it is
 * accepted, except the few values taskgate cannot serve (audio output, web
 * search, n > 1), which get a 400 saying why. Beyond the schema, the rules
 * OpenAI states in its descriptions and enforces hold here too (function
 * names, metadata sizes, `tool_choice` only with tools, `top_logprobs` only
 * with `logprobs`, `stream_options` only with `stream`), plus a few limits of
 * taskgate's own (`max_tokens` at least 1, lengths of `model`, `user` and
 * message names, counts of messages and tools). Leniencies: `null` means "not
 * sent" for every optional field, and an empty `stop` or `tools` list counts
 * as none (clients send them).
 *
 * Every field is checked by hand (no schema library: this runs on every call)
 * and every 400 names the field in OpenAI's style. The result is a fresh
 * object holding only known fields; the input is never spread or assigned
 * into anything, so a `"__proto__"` key can never reach a prototype.
 *
 * Expects a body from `parseJsonObject`, which bounds nesting depth: the
 * free-form values passed through unchanged (tool `parameters`, response
 * schemas) are therefore at most 64 levels deep, and are not walked again.
 */
import type { ChatCompletionRequest, ReasoningEffort, RequestNotes, Verbosity } from './chat-types.js';
import { InvalidRequestError } from './errors.js';
import { isValidWorkloadName } from './scope.js';
import { validateMessages } from './validate-chat-messages.js';
import {
  integerInRange,
  numberInRange,
  repetitionPenalty,
  validateLogitBias,
  validateN,
  validateSeed,
  validateStop,
} from './validate-chat-sampling.js';
import { addLegacyFunctions, validateTools } from './validate-chat-tools.js';
import { validateMetadata } from './validate-metadata.js';
import { checkIgnoredField, checkModalities, IGNORED_PLATFORM_FIELDS, refuseAudio, refuseWebSearch } from './validate-platform-fields.js';
import { validateResponseFormat } from './validate-response-format.js';
import { validateFunctionCall, validateToolChoice } from './validate-tool-choice.js';
import {
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  optionalBoolean,
  optionalEnum,
  optionalString,
  ownField,
  quoteForMessage,
} from './field-checks.js';

export { MAX_METADATA_KEY_LENGTH, MAX_METADATA_PAIRS, MAX_METADATA_VALUE_LENGTH } from './validate-metadata.js';

const MAX_MODEL_LENGTH = 256;
const MAX_USER_LENGTH = 256;
const MAX_TOP_LOGPROBS = 20;
const REASONING_EFFORTS: readonly ReasoningEffort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];
const VERBOSITIES: readonly Verbosity[] = ['low', 'medium', 'high'];

/** The accepted top-level fields: OpenAI's chat-completions request, `task`, and the documented engine extras. */
const KNOWN_FIELDS = [
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'response_format',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'seed',
  'user',
  'metadata',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'reasoning_effort',
  'verbosity',
  'functions',
  'function_call',
  'store',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'safety_identifier',
  'moderation',
  'prediction',
  'modalities',
  'audio',
  'web_search_options',
  'task',
  'top_k',
  'min_p',
  'repetition_penalty',
] as const;
type KnownField = (typeof KNOWN_FIELDS)[number];
const KNOWN: ReadonlySet<string> = new Set(KNOWN_FIELDS);

/** The known fields as sent (absent ones undefined). */
type SentFields = Record<KnownField, unknown>;

export function validateChatRequest(body: Record<string, unknown>): ChatCompletionRequest {
  const sent = emptySentFields();
  collectFields(body, sent);
  const messageIgnored: string[] = [];
  const request: ChatCompletionRequest = {
    model: validateModel(sent.model),
    messages: validateMessages(sent.messages, messageIgnored),
    stream: optionalBoolean(sent.stream, 'stream') ?? false,
  };
  const ignored: string[] = [];
  checkPlatformFields(sent, ignored);

  const streamOptions = sent.stream_options;
  if (streamOptions !== undefined && streamOptions !== null) {
    if (!request.stream) {
      throw invalidValueError('stream_options', "'stream_options' is only allowed when 'stream' is true.");
    }
    if (!isJsonObject(streamOptions)) throw invalidTypeError('stream_options', 'an object', streamOptions);
    const includeUsage = optionalBoolean(ownField(streamOptions, 'include_usage'), 'stream_options.include_usage');
    request.stream_options = includeUsage === undefined ? {} : { include_usage: includeUsage };
    // Obfuscation pads chunks against a side channel of OpenAI's shared infrastructure; taskgate never adds it.
    if (optionalBoolean(ownField(streamOptions, 'include_obfuscation'), 'stream_options.include_obfuscation') !== undefined) {
      ignored.push('stream_options.include_obfuscation');
    }
  }

  const maxTokens = integerInRange(sent.max_tokens, 'max_tokens', 1, Number.MAX_SAFE_INTEGER);
  const maxCompletionTokens = integerInRange(sent.max_completion_tokens, 'max_completion_tokens', 1, Number.MAX_SAFE_INTEGER);
  if (maxTokens !== undefined && maxCompletionTokens !== undefined && maxTokens !== maxCompletionTokens) {
    throw invalidValueError(
      'max_completion_tokens',
      `conflicts with 'max_tokens' (${maxCompletionTokens} vs ${maxTokens}); send only 'max_completion_tokens'.`,
    );
  }
  // Engines take one limit; `max_completion_tokens` is OpenAI's newer name for it.
  const tokenLimit = maxCompletionTokens ?? maxTokens;
  if (tokenLimit !== undefined) request.max_tokens = tokenLimit;

  const temperature = numberInRange(sent.temperature, 'temperature', 0, 2);
  if (temperature !== undefined) request.temperature = temperature;
  const topP = numberInRange(sent.top_p, 'top_p', 0, 1);
  if (topP !== undefined) request.top_p = topP;
  const { customTools, legacyFunctions } = applyUncommonFields(request, sent, ignored);

  ignored.push(...messageIgnored);
  if (ignored.length > 0 || customTools.length > 0 || legacyFunctions) {
    request.notes = { ignoredFields: ignored, customTools: [...customTools], legacyFunctions };
  }
  return request;
}

/** Fields only a few requests send, all ignored or refused: OpenAI platform features taskgate has no use for. */
function checkPlatformFields(sent: SentFields, ignored: string[]): void {
  for (const field of IGNORED_PLATFORM_FIELDS) checkIgnoredField(field, sent[field], ignored);
  checkModalities(sent.modalities, ignored);
  refuseAudio(sent.audio);
  refuseWebSearch(sent.web_search_options);
}

/**
 * The less common fields, in the order the common ones left off; returns
 * what the tool fields make of the reply's notes.
 */
function applyUncommonFields(
  request: ChatCompletionRequest,
  sent: SentFields,
  ignored: string[],
): Pick<RequestNotes, 'customTools' | 'legacyFunctions'> {
  const presencePenalty = numberInRange(sent.presence_penalty, 'presence_penalty', -2, 2);
  if (presencePenalty !== undefined) request.presence_penalty = presencePenalty;
  const frequencyPenalty = numberInRange(sent.frequency_penalty, 'frequency_penalty', -2, 2);
  if (frequencyPenalty !== undefined) request.frequency_penalty = frequencyPenalty;

  const n = validateN(sent.n);
  if (n !== undefined) request.n = n;
  const seed = validateSeed(sent.seed);
  if (seed !== undefined) request.seed = seed;
  const stop = validateStop(sent.stop);
  if (stop !== undefined) request.stop = stop;

  const responseFormat = validateResponseFormat(sent.response_format);
  if (responseFormat !== undefined) request.response_format = responseFormat;
  const { customTools, legacyFunctions } = hasToolFields(sent) ? applyTools(request, sent, ignored) : NO_TOOLS;

  const user = optionalString(sent.user, 'user', MAX_USER_LENGTH);
  if (user !== undefined) request.user = user;
  const metadata = validateMetadata(sent.metadata);
  if (metadata !== undefined) request.metadata = metadata;
  const task = validateTask(sent.task);
  if (task !== undefined) request.task = task;

  const logitBias = validateLogitBias(sent.logit_bias);
  if (logitBias !== undefined) request.logit_bias = logitBias;
  const logprobs = optionalBoolean(sent.logprobs, 'logprobs');
  if (logprobs !== undefined) request.logprobs = logprobs;
  const topLogprobs = integerInRange(sent.top_logprobs, 'top_logprobs', 0, MAX_TOP_LOGPROBS);
  if (topLogprobs !== undefined) {
    if (logprobs !== true) throw invalidValueError('top_logprobs', "'top_logprobs' requires 'logprobs' to be true.");
    request.top_logprobs = topLogprobs;
  }
  const reasoningEffort = optionalEnum(sent.reasoning_effort, 'reasoning_effort', REASONING_EFFORTS);
  if (reasoningEffort !== undefined) request.reasoning_effort = reasoningEffort;
  const verbosity = optionalEnum(sent.verbosity, 'verbosity', VERBOSITIES);
  if (verbosity !== undefined) request.verbosity = verbosity;

  const topK = integerInRange(sent.top_k, 'top_k', -1, Number.MAX_SAFE_INTEGER);
  if (topK !== undefined) request.top_k = topK;
  const minP = numberInRange(sent.min_p, 'min_p', 0, 1);
  if (minP !== undefined) request.min_p = minP;
  const penalty = repetitionPenalty(sent.repetition_penalty);
  if (penalty !== undefined) request.repetition_penalty = penalty;
  return { customTools, legacyFunctions };
}

const NO_TOOLS: Readonly<Pick<RequestNotes, 'customTools' | 'legacyFunctions'>> = Object.freeze({
  customTools: [],
  legacyFunctions: false,
});

function hasToolFields(sent: SentFields): boolean {
  return (
    sent.tools !== undefined ||
    sent.functions !== undefined ||
    sent.tool_choice !== undefined ||
    sent.function_call !== undefined ||
    sent.parallel_tool_calls !== undefined
  );
}

/**
 * `tools`, the legacy `functions`, `tool_choice`, the legacy `function_call`
 * and `parallel_tool_calls`, as engines take them: one list of function tools
 * and one plain choice (see `validate-chat-tools.ts` and `validate-tool-choice.ts`).
 */
function applyTools(
  request: ChatCompletionRequest,
  sent: SentFields,
  ignored: string[],
): Pick<RequestNotes, 'customTools' | 'legacyFunctions'> {
  const fromTools = validateTools(sent.tools);
  const offered = addLegacyFunctions(sent.functions, fromTools);
  const toolChoice = validateToolChoice(sent.tool_choice, offered);
  const functionCall = validateFunctionCall(sent.function_call, offered);
  // `tool_choice` is the newer name; when both are sent it wins and the legacy field is reported as ignored.
  if (toolChoice !== undefined && functionCall !== undefined) ignored.push('function_call');
  const choice = toolChoice ?? functionCall;
  const tools = choice?.tools ?? offered?.tools;
  if (tools !== undefined) request.tools = tools;
  if (choice !== undefined) request.tool_choice = choice.choice;
  const parallelToolCalls = optionalBoolean(sent.parallel_tool_calls, 'parallel_tool_calls');
  // A legacy reply carries one `function_call`, so a legacy request asks for one call.
  const legacyFunctions = offered !== undefined && fromTools === undefined;
  if (parallelToolCalls !== undefined) request.parallel_tool_calls = parallelToolCalls;
  else if (legacyFunctions) request.parallel_tool_calls = false;
  return { customTools: fromTools?.customTools ?? [], legacyFunctions };
}

/**
 * One pass over the body's own keys (Object.keys, so nothing inherited is read
 * as input): known fields are picked out, any other is a 400 naming it
 * (`__proto__` is not a known field), into `sent`, which starts with every
 * known field, so it keeps one shape and reading its fields stays fast.
 */
function collectFields(body: Record<string, unknown>, sent: SentFields): void {
  for (const field of Object.keys(body)) {
    if (!KNOWN.has(field)) throw unknownParameterError(field);
    sent[field as KnownField] = body[field];
  }
}

function emptySentFields(): SentFields {
  return {
    model: undefined,
    messages: undefined,
    stream: undefined,
    stream_options: undefined,
    max_tokens: undefined,
    max_completion_tokens: undefined,
    temperature: undefined,
    top_p: undefined,
    stop: undefined,
    response_format: undefined,
    tools: undefined,
    tool_choice: undefined,
    parallel_tool_calls: undefined,
    seed: undefined,
    user: undefined,
    metadata: undefined,
    n: undefined,
    presence_penalty: undefined,
    frequency_penalty: undefined,
    logit_bias: undefined,
    logprobs: undefined,
    top_logprobs: undefined,
    reasoning_effort: undefined,
    verbosity: undefined,
    functions: undefined,
    function_call: undefined,
    store: undefined,
    service_tier: undefined,
    prompt_cache_key: undefined,
    prompt_cache_options: undefined,
    prompt_cache_retention: undefined,
    safety_identifier: undefined,
    moderation: undefined,
    prediction: undefined,
    modalities: undefined,
    audio: undefined,
    web_search_options: undefined,
    task: undefined,
    top_k: undefined,
    min_p: undefined,
    repetition_penalty: undefined,
  };
}

function unknownParameterError(field: string): InvalidRequestError {
  // A field name can be any length; a 10,000-character one is not echoed whole.
  const shown = field.length > 64 ? `${field.slice(0, 64)}…` : field;
  return new InvalidRequestError(`Unrecognized request argument supplied: ${shown}`, shown, 'unknown_parameter');
}

function validateModel(value: unknown): string {
  if (value === undefined || value === null || value === '') {
    throw new InvalidRequestError('you must provide a model parameter', 'model', 'missing_required_parameter');
  }
  if (typeof value !== 'string') throw invalidTypeError('model', 'a string', value);
  return optionalString(value, 'model', MAX_MODEL_LENGTH) ?? value;
}

function validateTask(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidTypeError('task', 'a string', value);
  if (!isValidWorkloadName(value)) {
    throw invalidValueError('task', `expected a workload name matching ^[a-z0-9_-]{1,63}$, got ${quoteForMessage(value)}.`);
  }
  return value;
}
