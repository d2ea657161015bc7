/**
 * A parsed request body -> a trusted `ChatCompletionRequest` (DESIGN section 2).
 *
 * Every field is checked by hand (no schema library: this runs on every call)
 * and every 400 names the field in OpenAI's style. The result is a fresh
 * object holding only known fields; the input is never spread or assigned
 * into anything, so a `"__proto__"` key can never reach a prototype.
 *
 * Expects a body from `parseJsonObject`, which bounds nesting depth: the
 * free-form values passed through unchanged (tool `parameters`, response
 * schemas, non-text content parts) are therefore at most 64 levels deep, and
 * are not walked again here.
 */
import type { ChatCompletionRequest } from './chat-types.js';
import { InvalidRequestError } from './errors.js';
import { isValidWorkloadName } from './scope.js';
import { validateMessages } from './validate-chat-messages.js';
import { integerInRange, numberInRange, repetitionPenalty, validateLogitBias, validateStop } from './validate-chat-sampling.js';
import { validateResponseFormat, validateToolChoice, validateTools } from './validate-chat-tools.js';
import {
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  optionalBoolean,
  optionalString,
  ownField,
  quoteForMessage,
} from './field-checks.js';

const MAX_MODEL_LENGTH = 256;
const MAX_USER_LENGTH = 256;
export const MAX_METADATA_PAIRS = 16;
export const MAX_METADATA_KEY_LENGTH = 64;
export const MAX_METADATA_VALUE_LENGTH = 512;
const MAX_TOP_LOGPROBS = 20;

/** Metadata keys refused outright: harmless in a null-prototype object, but a trap for any code that copies it. */
const RESERVED_METADATA_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The accepted top-level fields as sent (`undefined` when absent): the OpenAI
 * chat-completions fields, `task`, and the documented engine extras.
 */
interface SentFields {
  model: unknown; messages: unknown; stream: unknown; stream_options: unknown; max_tokens: unknown;
  max_completion_tokens: unknown; temperature: unknown; top_p: unknown; stop: unknown; response_format: unknown;
  tools: unknown; tool_choice: unknown; parallel_tool_calls: unknown; seed: unknown; user: unknown;
  metadata: unknown; n: unknown; presence_penalty: unknown; frequency_penalty: unknown; logit_bias: unknown;
  logprobs: unknown; top_logprobs: unknown; task: unknown; top_k: unknown; min_p: unknown; repetition_penalty: unknown;
}

export function validateChatRequest(body: Record<string, unknown>): ChatCompletionRequest {
  const sent = collectFields(body);
  const request: ChatCompletionRequest = {
    model: validateModel(sent.model),
    messages: validateMessages(sent.messages),
    stream: optionalBoolean(sent.stream, 'stream') ?? false,
  };

  const streamOptions = sent.stream_options;
  if (streamOptions !== undefined && streamOptions !== null) {
    if (!request.stream) {
      throw invalidValueError('stream_options', "'stream_options' is only allowed when 'stream' is true.");
    }
    if (!isJsonObject(streamOptions)) throw invalidTypeError('stream_options', 'an object', streamOptions);
    const includeUsage = optionalBoolean(ownField(streamOptions, 'include_usage'), 'stream_options.include_usage');
    request.stream_options = includeUsage === undefined ? {} : { include_usage: includeUsage };
  }

  const maxTokens = integerInRange(sent.max_tokens, 'max_tokens', 1, Number.MAX_SAFE_INTEGER);
  const maxCompletionTokens = integerInRange(
    sent.max_completion_tokens, 'max_completion_tokens', 1, Number.MAX_SAFE_INTEGER,
  );
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
  const presencePenalty = numberInRange(sent.presence_penalty, 'presence_penalty', -2, 2);
  if (presencePenalty !== undefined) request.presence_penalty = presencePenalty;
  const frequencyPenalty = numberInRange(sent.frequency_penalty, 'frequency_penalty', -2, 2);
  if (frequencyPenalty !== undefined) request.frequency_penalty = frequencyPenalty;

  const n = integerInRange(sent.n, 'n', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  if (n !== undefined) {
    if (n !== 1) throw invalidValueError('n', `only n=1 is supported, got ${n}.`);
    request.n = n;
  }
  const seed = integerInRange(sent.seed, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  if (seed !== undefined) request.seed = seed;
  const stop = validateStop(sent.stop);
  if (stop !== undefined) request.stop = stop;

  const responseFormat = validateResponseFormat(sent.response_format);
  if (responseFormat !== undefined) request.response_format = responseFormat;
  const tools = validateTools(sent.tools);
  if (tools !== undefined) request.tools = tools;
  const toolChoice = validateToolChoice(sent.tool_choice, tools);
  if (toolChoice !== undefined) request.tool_choice = toolChoice;
  const parallelToolCalls = optionalBoolean(sent.parallel_tool_calls, 'parallel_tool_calls');
  if (parallelToolCalls !== undefined) request.parallel_tool_calls = parallelToolCalls;

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

  const topK = integerInRange(sent.top_k, 'top_k', -1, Number.MAX_SAFE_INTEGER);
  if (topK !== undefined) request.top_k = topK;
  const minP = numberInRange(sent.min_p, 'min_p', 0, 1);
  if (minP !== undefined) request.min_p = minP;
  const penalty = repetitionPenalty(sent.repetition_penalty);
  if (penalty !== undefined) request.repetition_penalty = penalty;

  return request;
}

/**
 * One pass over the body's own keys (Object.keys, so nothing inherited is read
 * as input): known fields are picked out, any other is a 400 naming it. Faster
 * than a lookup per known field, most of which are absent.
 */
function collectFields(body: Record<string, unknown>): SentFields {
  const sent: SentFields = {
    model: undefined, messages: undefined, stream: undefined, stream_options: undefined, max_tokens: undefined,
    max_completion_tokens: undefined, temperature: undefined, top_p: undefined, stop: undefined,
    response_format: undefined, tools: undefined, tool_choice: undefined, parallel_tool_calls: undefined,
    seed: undefined, user: undefined, metadata: undefined, n: undefined, presence_penalty: undefined,
    frequency_penalty: undefined, logit_bias: undefined, logprobs: undefined, top_logprobs: undefined,
    task: undefined, top_k: undefined, min_p: undefined, repetition_penalty: undefined,
  };
  for (const field of Object.keys(body)) {
    const value = body[field];
    switch (field) {
      case 'model': sent.model = value; break;
      case 'messages': sent.messages = value; break;
      case 'stream': sent.stream = value; break;
      case 'stream_options': sent.stream_options = value; break;
      case 'max_tokens': sent.max_tokens = value; break;
      case 'max_completion_tokens': sent.max_completion_tokens = value; break;
      case 'temperature': sent.temperature = value; break;
      case 'top_p': sent.top_p = value; break;
      case 'stop': sent.stop = value; break;
      case 'response_format': sent.response_format = value; break;
      case 'tools': sent.tools = value; break;
      case 'tool_choice': sent.tool_choice = value; break;
      case 'parallel_tool_calls': sent.parallel_tool_calls = value; break;
      case 'seed': sent.seed = value; break;
      case 'user': sent.user = value; break;
      case 'metadata': sent.metadata = value; break;
      case 'n': sent.n = value; break;
      case 'presence_penalty': sent.presence_penalty = value; break;
      case 'frequency_penalty': sent.frequency_penalty = value; break;
      case 'logit_bias': sent.logit_bias = value; break;
      case 'logprobs': sent.logprobs = value; break;
      case 'top_logprobs': sent.top_logprobs = value; break;
      case 'task': sent.task = value; break;
      case 'top_k': sent.top_k = value; break;
      case 'min_p': sent.min_p = value; break;
      case 'repetition_penalty': sent.repetition_penalty = value; break;
      default:
        throw unknownParameterError(field);
    }
  }
  return sent;
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
  if (value.length > MAX_MODEL_LENGTH) {
    throw invalidValueError('model', `expected at most ${MAX_MODEL_LENGTH} characters, got ${value.length}.`);
  }
  return value;
}

function validateTask(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidTypeError('task', 'a string', value);
  if (!isValidWorkloadName(value)) {
    throw invalidValueError('task', `expected a workload name matching ^[a-z0-9_-]{1,63}$, got ${quoteForMessage(value)}.`);
  }
  return value;
}

/**
 * Up to 16 string pairs, copied into an object without a prototype: no key
 * can reach Object.prototype, whatever code later reads or copies it.
 */
function validateMetadata(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw invalidTypeError('metadata', 'an object of string key-value pairs', value);
  const keys = Object.keys(value);
  if (keys.length > MAX_METADATA_PAIRS) {
    throw invalidValueError('metadata', `expected at most ${MAX_METADATA_PAIRS} key-value pairs, got ${keys.length}.`);
  }
  const metadata: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const key of keys) {
    if (key.length === 0 || key.length > MAX_METADATA_KEY_LENGTH) {
      throw invalidValueError(
        'metadata',
        `keys must be 1 to ${MAX_METADATA_KEY_LENGTH} characters, got ${key.length === 0 ? 'an empty key' : quoteForMessage(key)}.`,
      );
    }
    if (RESERVED_METADATA_KEYS.has(key)) {
      throw invalidValueError('metadata', `the key '${key}' is reserved; use another name.`);
    }
    const entry = value[key];
    if (typeof entry !== 'string') throw invalidTypeError(`metadata.${key}`, 'a string', entry);
    if (entry.length > MAX_METADATA_VALUE_LENGTH) {
      throw invalidValueError(
        `metadata.${key}`,
        `expected at most ${MAX_METADATA_VALUE_LENGTH} characters, got ${entry.length}.`,
      );
    }
    metadata[key] = entry;
  }
  return metadata;
}
