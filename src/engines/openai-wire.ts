/**
 * The OpenAI chat-completions wire format as real servers speak it, on the
 * way back: parsing of replies, stream events and error bodies into the
 * Engine contract's types. Pure functions, no I/O; `openai-request.ts`
 * writes what goes upstream and `openai-engine.ts` does the transport.
 *
 * Servers differ (vLLM, SGLang, llama.cpp server, Ollama, TGI, Azure); each
 * quirk tolerated here is commented where it is handled.
 */
import { randomBytes } from 'node:crypto';
import type {
  AssistantMessage,
  ChatChoice,
  ChoiceLogprobs,
  ChunkChoice,
  ChunkDelta,
  ToolCall,
  ToolCallDelta,
  Usage,
} from '../api/chat-types.js';
import { EngineError } from '../api/errors.js';
import type { EngineChunk, EngineCompletion } from './engine.js';
import { finishReasonOf } from './finish-reason.js';
import { readQuickStreamEvent } from './quick-stream-event.js';

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function badReply(engineId: string, what: string, cause?: unknown): EngineError {
  return new EngineError(`Engine ${engineId} sent ${what}.`, cause, 'engine_bad_reply');
}

/** A whole reply (`stream: false`). Throws EngineError when it is not a chat completion. */
export function parseChatCompletion(text: string, engineId: string): EngineCompletion {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw badReply(engineId, 'a reply that is not JSON', error);
  }
  if (!isObject(body)) throw badReply(engineId, 'a reply that is not a JSON object');
  // Some servers and proxies report failures as a 200 carrying an error object.
  if (isErrorBody(body)) throw new EngineError(`Engine ${engineId} failed: ${errorMessageOf(body).message || 'no message'}`);
  const upstreamChoices = body.choices;
  if (!Array.isArray(upstreamChoices) || upstreamChoices.length === 0) {
    throw badReply(engineId, 'a reply without choices');
  }
  const choices: ChatChoice[] = new Array<ChatChoice>(upstreamChoices.length);
  for (let position = 0; position < upstreamChoices.length; position++) {
    const choice: unknown = upstreamChoices[position];
    if (!isObject(choice) || !isObject(choice.message)) throw badReply(engineId, 'a choice without a message');
    choices[position] = {
      index: typeof choice.index === 'number' ? choice.index : position,
      message: assistantMessageOf(choice.message, engineId),
      finish_reason: finishReasonOf(choice.finish_reason),
      logprobs: logprobsOf(choice.logprobs),
    };
  }
  return {
    choices,
    usage: usageOf(body.usage),
    system_fingerprint: typeof body.system_fingerprint === 'string' ? body.system_fingerprint : undefined,
  };
}

/**
 * A fresh message with only the contract's fields: vLLM also sends
 * `function_call: null`, `audio: null`, `reasoning_content: null` and
 * `tool_calls: []` on every plain reply, and an empty array is truthy to a
 * JavaScript client checking `message.tool_calls`.
 */
function assistantMessageOf(message: JsonObject, engineId: string): AssistantMessage {
  const result: AssistantMessage = {
    role: 'assistant',
    content: typeof message.content === 'string' ? message.content : null,
  };
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) result.tool_calls = toolCallsOf(message.tool_calls, engineId);
  const reasoning = reasoningOf(message);
  if (reasoning !== undefined) result.reasoning_content = reasoning;
  if (typeof message.refusal === 'string') result.refusal = message.refusal;
  return result;
}

/**
 * Tool calls rebuilt with the fields OpenAI's `ChatCompletionMessageToolCall`
 * requires. Tolerated: a missing `type` or `id` (older Ollama; an id is made
 * up), `arguments` sent as a JSON object instead of its text (Ollama), and a
 * custom call (`{type: "custom", custom: {name, input}}`), which becomes the
 * function form engines are offered custom tools in.
 */
function toolCallsOf(calls: unknown[], engineId: string): ToolCall[] {
  return calls.map((call) => {
    if (!isObject(call)) throw badReply(engineId, 'a tool call that is not an object');
    const id = typeof call.id === 'string' && call.id.length > 0 ? call.id : `call_${randomBytes(12).toString('base64url')}`;
    if (call.type === 'custom' && isObject(call.custom) && typeof call.custom.name === 'string') {
      const input = typeof call.custom.input === 'string' ? call.custom.input : '';
      return { id, type: 'function', function: { name: call.custom.name, arguments: JSON.stringify({ input }) } };
    }
    const definition = call.function;
    if (!isObject(definition) || typeof definition.name !== 'string') throw badReply(engineId, 'a tool call without a function name');
    return { id, type: 'function', function: { name: definition.name, arguments: argumentsText(definition.arguments) } };
  });
}

function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined || value === null ? '{}' : JSON.stringify(value);
}

/**
 * Log probabilities in OpenAI's shape, `{content, refusal}` with both lists
 * present (vLLM sends `content` only); undefined when there are none.
 */
function logprobsOf(value: unknown): ChoiceLogprobs | undefined {
  if (!isObject(value)) return undefined;
  return { content: Array.isArray(value.content) ? value.content : null, refusal: Array.isArray(value.refusal) ? value.refusal : null };
}

/** vLLM and SGLang say `reasoning_content`; Ollama, OpenRouter and newer vLLM say `reasoning`. */
function reasoningOf(value: JsonObject): string | undefined {
  const reasoning = typeof value.reasoning_content === 'string' ? value.reasoning_content : value.reasoning;
  return typeof reasoning === 'string' ? reasoning : undefined;
}

/**
 * Usage when it has the two counts that matter, rebuilt as OpenAI's
 * `CompletionUsage`: integer counts, `total_tokens` filled in when missing,
 * and the two detail objects with their integer counts only. vLLM sends
 * `prompt_tokens_details: null`, which is not a valid `CompletionUsage`, and
 * servers add fields of their own; both are dropped.
 */
function usageOf(value: unknown): Usage | null {
  if (!isObject(value)) return null;
  const promptTokens = tokenCount(value.prompt_tokens);
  const completionTokens = tokenCount(value.completion_tokens);
  if (promptTokens === undefined || completionTokens === undefined) return null;
  const usage: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: tokenCount(value.total_tokens) ?? promptTokens + completionTokens,
  };
  for (const field of ['prompt_tokens_details', 'completion_tokens_details'] as const) {
    const details = value[field];
    if (!isObject(details)) continue;
    const counts: Record<string, number> = {};
    for (const [name, count] of Object.entries(details)) {
      const checked = tokenCount(count);
      if (checked !== undefined && name !== '__proto__') counts[name] = checked;
    }
    if (Object.keys(counts).length > 0) usage[field] = counts;
  }
  return usage;
}

function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

/**
 * A whole reply as the chunks a stream would have carried: for a server that
 * ignores `stream: true` and answers with JSON (seen from servers and proxies
 * without streaming support).
 */
export function completionAsChunks(completion: EngineCompletion): EngineChunk[] {
  const chunks: EngineChunk[] = completion.choices.map((choice) => {
    const delta: ChunkDelta = { role: 'assistant', content: choice.message.content ?? '' };
    if (choice.message.reasoning_content !== undefined) delta.reasoning_content = choice.message.reasoning_content;
    if (choice.message.tool_calls !== undefined) {
      delta.tool_calls = choice.message.tool_calls.map((toolCall, index) => ({ index, ...toolCall }));
    }
    return {
      choices: [{ index: choice.index, delta, finish_reason: choice.finish_reason }],
      usage: undefined,
      system_fingerprint: completion.system_fingerprint,
    };
  });
  if (completion.usage !== null) chunks.push({ choices: [], usage: completion.usage, system_fingerprint: undefined });
  return chunks;
}

/** `[DONE]` ends a stream; everything else is a JSON event. */
export const streamDone = '[DONE]';

/**
 * One stream event as an EngineChunk, or null for an event that carries
 * nothing (the Azure placeholder first chunk with empty `choices`, `id` and
 * `model`). Throws EngineError for an error event or an unparseable one.
 */
export function parseStreamEvent(data: string, engineId: string): EngineChunk | null {
  // Most events are plain text deltas, read with one regular expression (quick-stream-event.ts).
  return readQuickStreamEvent(data) ?? parseStreamEventFully(data, engineId);
}

/** `parseStreamEvent` by JSON.parse, for every event the quick reader leaves: the reference it is tested against. */
export function parseStreamEventFully(data: string, engineId: string): EngineChunk | null {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch (error) {
    throw badReply(engineId, 'a stream event that is not JSON', error);
  }
  if (!isObject(event)) throw badReply(engineId, 'a stream event that is not a JSON object');
  // vLLM reports a failure during generation as `data: {"error": {...}}` (or,
  // in older releases, `{"object": "error", ...}`), then sends `[DONE]` as if
  // all went well. Its `code` is 400 whatever went wrong (vLLM's default for
  // streamed errors), so it says nothing about whose fault it was: always an
  // EngineError, never a clean end.
  if (isErrorBody(event)) {
    throw new EngineError(`Engine ${engineId} failed during the stream: ${errorMessageOf(event).message || 'no message'}`);
  }
  const usage = usageOf(event.usage);
  const upstreamChoices = event.choices;
  // Usage arrives in a final chunk with empty `choices`; an empty chunk
  // without usage is a placeholder (Azure sends one first) and is skipped.
  if (!Array.isArray(upstreamChoices) || upstreamChoices.length === 0) {
    return usage === null ? null : { choices: [], usage, system_fingerprint: undefined };
  }
  const choices: ChunkChoice[] = new Array<ChunkChoice>(upstreamChoices.length);
  for (let position = 0; position < upstreamChoices.length; position++) {
    const choice: unknown = upstreamChoices[position];
    if (!isObject(choice)) throw badReply(engineId, 'a stream choice that is not an object');
    // `finish_reason` may come on a chunk that still carries content (vLLM,
    // llama.cpp): both are kept, the content is never dropped.
    choices[position] = {
      index: typeof choice.index === 'number' ? choice.index : position,
      delta: isObject(choice.delta) ? chunkDeltaOf(choice.delta) : {},
      finish_reason: finishReasonOf(choice.finish_reason),
      logprobs: logprobsOf(choice.logprobs),
    };
  }
  return {
    choices,
    usage: usage ?? undefined,
    system_fingerprint: typeof event.system_fingerprint === 'string' ? event.system_fingerprint : undefined,
  };
}

function chunkDeltaOf(delta: JsonObject): ChunkDelta {
  const result: ChunkDelta = {};
  if (delta.role === 'assistant') result.role = 'assistant';
  if (typeof delta.content === 'string') result.content = delta.content;
  // vLLM and SGLang send `tool_calls: []` on plain content deltas: dropped.
  const toolCalls = delta.tool_calls;
  const deltas = Array.isArray(toolCalls) ? toolCallDeltasOf(toolCalls) : [];
  if (deltas.length > 0) result.tool_calls = deltas;
  const reasoning = reasoningOf(delta);
  if (reasoning !== undefined) result.reasoning_content = reasoning;
  if (typeof delta.refusal === 'string') result.refusal = delta.refusal;
  return result;
}

/**
 * Tool-call deltas rebuilt with OpenAI's `ChatCompletionMessageToolCallChunk`
 * fields. Some servers omit `index` when there is one call (the position
 * stands in), and Ollama may send `arguments` as an object.
 */
function toolCallDeltasOf(toolCalls: unknown[]): ToolCallDelta[] {
  const deltas: ToolCallDelta[] = [];
  for (let position = 0; position < toolCalls.length; position++) {
    const toolCall = toolCalls[position];
    if (!isObject(toolCall)) continue;
    const delta: ToolCallDelta = { index: typeof toolCall.index === 'number' ? toolCall.index : position };
    if (typeof toolCall.id === 'string') delta.id = toolCall.id;
    if (toolCall.type === 'function') delta.type = 'function';
    const definition = toolCall.function;
    if (isObject(definition)) {
      const part: NonNullable<ToolCallDelta['function']> = {};
      if (typeof definition.name === 'string') part.name = definition.name;
      if (definition.arguments !== undefined && definition.arguments !== null) part.arguments = argumentsText(definition.arguments);
      delta.function = part;
    }
    deltas.push(delta);
  }
  return deltas;
}

function isErrorBody(body: JsonObject): boolean {
  return (body.error !== undefined && body.error !== null) || body.object === 'error';
}

/** The longest upstream message passed on; a stack trace or an HTML page is cut here. */
const maxMessageLength = 1_000;

/**
 * The message and `param` of an upstream error, whatever its shape: OpenAI and
 * llama.cpp `{error: {message, type, param, code}}`, vLLM
 * `{object: "error", message, type, code: 400}` (numeric code), Ollama and TGI
 * `{error: "…"}`, FastAPI `{detail: "…"}` or `{detail: [{msg}]}`, or plain text.
 */
export function describeUpstreamError(text: string, status: number): { message: string; param: string | null } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (isObject(body)) {
    const described = errorMessageOf(body);
    if (described.message.length > 0) return described;
  }
  const plain = text.trim();
  return { message: plain.length > 0 ? clip(plain) : `HTTP ${status}`, param: null };
}

function errorMessageOf(body: JsonObject): { message: string; param: string | null } {
  const error = body.error;
  const source = isObject(error) ? error : body;
  const param = typeof source.param === 'string' ? source.param : null;
  if (typeof error === 'string' && error.length > 0) return { message: clip(error), param };
  if (typeof source.message === 'string' && source.message.length > 0) return { message: clip(source.message), param };
  const detail = body.detail;
  if (typeof detail === 'string') return { message: clip(detail), param };
  if (Array.isArray(detail)) {
    const messages = detail
      .map((item) => (isObject(item) && typeof item.msg === 'string' ? item.msg : ''))
      .filter((item) => item.length > 0);
    if (messages.length > 0) return { message: clip(messages.join('; ')), param };
  }
  return { message: '', param };
}

function clip(message: string): string {
  return message.length > maxMessageLength ? `${message.slice(0, maxMessageLength)}…` : message;
}
