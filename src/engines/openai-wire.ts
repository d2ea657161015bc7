/**
 * The OpenAI chat-completions wire format as real servers speak it: request
 * serialisation, and parsing of replies, stream events and error bodies into
 * the Engine contract's types. Pure functions, no I/O; `openai-engine.ts` does
 * the transport.
 *
 * Servers differ (vLLM, SGLang, llama.cpp server, Ollama, TGI, Azure); each
 * quirk tolerated here is commented where it is handled.
 */
import type {
  AssistantMessage,
  ChatChoice,
  ChatMessage,
  ChunkChoice,
  ChunkDelta,
  FinishReason,
  ToolCall,
  ToolCallDelta,
  Usage,
} from '../api/chat-types.js';
import { EngineError } from '../api/errors.js';
import type { EngineChunk, EngineCompletion, EngineRequest } from './engine.js';

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Asked of every stream so traces get token counts even when the client did not ask. */
const includeUsage = { include_usage: true } as const;

/**
 * The request body. Fields are listed one by one, so nothing the gateway keeps
 * for itself (task, metadata, a stray `stream`) can leak upstream, and
 * undefined fields vanish in JSON.stringify.
 */
export function serializeChatRequest(request: EngineRequest, stream: boolean): string {
  return JSON.stringify({
    model: request.model,
    messages: withSystemForDeveloper(request.messages),
    stream,
    stream_options: stream ? includeUsage : undefined,
    max_tokens: request.max_tokens,
    temperature: request.temperature,
    top_p: request.top_p,
    stop: request.stop,
    seed: request.seed,
    response_format: request.response_format,
    tools: request.tools,
    tool_choice: request.tool_choice,
    parallel_tool_calls: request.parallel_tool_calls,
    user: request.user,
    n: request.n,
    presence_penalty: request.presence_penalty,
    frequency_penalty: request.frequency_penalty,
    logit_bias: request.logit_bias,
    logprobs: request.logprobs,
    top_logprobs: request.top_logprobs,
    top_k: request.top_k,
    min_p: request.min_p,
    repetition_penalty: request.repetition_penalty,
  });
}

/**
 * `developer` is OpenAI's newer name for `system`. Open-weight chat templates
 * (Qwen, Llama, Mistral as served by vLLM, SGLang and llama.cpp) only know
 * `system`, and some drop an unknown role without a word, so the instructions
 * would silently vanish. The array is copied only when such a message exists.
 */
function withSystemForDeveloper(messages: ChatMessage[]): ChatMessage[] {
  let mapped: ChatMessage[] | null = null;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role !== 'developer') continue;
    mapped ??= messages.slice();
    mapped[index] = { ...message, role: 'system' };
  }
  return mapped ?? messages;
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
      message: assistantMessageOf(choice.message),
      finish_reason: finishReasonOf(choice.finish_reason),
      logprobs: choice.logprobs ?? undefined,
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
function assistantMessageOf(message: JsonObject): AssistantMessage {
  const result: AssistantMessage = {
    role: 'assistant',
    content: typeof message.content === 'string' ? message.content : null,
  };
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) result.tool_calls = message.tool_calls as ToolCall[];
  const reasoning = reasoningOf(message);
  if (reasoning !== undefined) result.reasoning_content = reasoning;
  if (typeof message.refusal === 'string') result.refusal = message.refusal;
  return result;
}

/** vLLM and SGLang say `reasoning_content`; Ollama, OpenRouter and newer vLLM say `reasoning`. */
function reasoningOf(value: JsonObject): string | undefined {
  const reasoning = typeof value.reasoning_content === 'string' ? value.reasoning_content : value.reasoning;
  return typeof reasoning === 'string' ? reasoning : undefined;
}

/**
 * The contract's finish reasons. Older TGI says `eos_token` or
 * `stop_sequence`, proxies in front of other APIs may say `max_tokens`; an
 * unknown reason is reported as `stop` so clients that switch on the OpenAI
 * values keep working.
 */
export function finishReasonOf(value: unknown): FinishReason | null {
  switch (value) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
    case 'function_call':
      return value;
    case null:
    case undefined:
    case '':
      return null;
    case 'max_tokens':
      return 'length';
    default:
      return typeof value === 'string' ? 'stop' : null;
  }
}

/** Usage when it has the two counts that matter; `total_tokens` is filled in when missing. */
function usageOf(value: unknown): Usage | null {
  if (!isObject(value)) return null;
  const promptTokens = value.prompt_tokens;
  const completionTokens = value.completion_tokens;
  if (typeof promptTokens !== 'number' || typeof completionTokens !== 'number') return null;
  if (typeof value.total_tokens === 'number') return value as Usage;
  return { ...value, prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
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
    return { choices: [{ index: choice.index, delta, finish_reason: choice.finish_reason }], usage: undefined, system_fingerprint: completion.system_fingerprint };
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
      logprobs: choice.logprobs ?? undefined,
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
  if (Array.isArray(toolCalls) && toolCalls.length > 0) result.tool_calls = toolCallDeltasOf(toolCalls);
  const reasoning = reasoningOf(delta);
  if (reasoning !== undefined) result.reasoning_content = reasoning;
  if (typeof delta.refusal === 'string') result.refusal = delta.refusal;
  return result;
}

/** Some servers omit `index` on tool-call deltas when there is one call; the position stands in. */
function toolCallDeltasOf(toolCalls: unknown[]): ToolCallDelta[] {
  for (let position = 0; position < toolCalls.length; position++) {
    const toolCall = toolCalls[position];
    if (isObject(toolCall) && typeof toolCall.index !== 'number') toolCall.index = position;
  }
  return toolCalls as ToolCallDelta[];
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
    const messages = detail.map((item) => (isObject(item) && typeof item.msg === 'string' ? item.msg : '')).filter((item) => item.length > 0);
    if (messages.length > 0) return { message: clip(messages.join('; ')), param };
  }
  return { message: '', param };
}

function clip(message: string): string {
  return message.length > maxMessageLength ? `${message.slice(0, maxMessageLength)}…` : message;
}
