/**
 * What taskgate sends an OpenAI-compatible server: the method, path and
 * headers of its three requests, made once per engine, and the body of a
 * chat call, written per call. Pure, no I/O; `openai-engine.ts` sends them,
 * and `openai-wire.ts` reads what comes back.
 */
import type { ChatMessage } from '../api/chat-types.js';
import type { EngineRequest } from './engine.js';
import { PreparedRequest } from './transport/engine-transport.js';

/** A chat call, JSON or streamed, and the readiness check (`GET …/models`): method, path and headers made once. */
export interface OpenAIRequests {
  json: PreparedRequest;
  stream: PreparedRequest;
  ready: PreparedRequest;
  /** The readiness check's path, named in its error. */
  modelsPath: string;
}

/** The requests to the engine at `url` (ending in `/v1`; `/chat/completions` and `/models` are appended). */
export function prepareOpenAIRequests(url: URL, headers: Record<string, string> | undefined, apiKey: string | undefined): OpenAIRequests {
  const prefix = url.pathname.replace(/\/+$/, '');
  const completionsPath = `${prefix}/chat/completions`;
  const modelsPath = `${prefix}/models`;
  // `identity`: a proxy in front of the engine must not compress what taskgate reads as it arrives.
  const common: Record<string, string> = { ...headers, 'content-type': 'application/json', 'accept-encoding': 'identity' };
  if (apiKey !== undefined) common.authorization = `Bearer ${apiKey}`;
  return {
    json: new PreparedRequest('POST', completionsPath, { ...common, accept: 'application/json' }, url.host),
    stream: new PreparedRequest('POST', completionsPath, { ...common, accept: 'text/event-stream' }, url.host),
    ready: new PreparedRequest('GET', modelsPath, { ...common, accept: 'application/json' }, url.host),
    modelsPath,
  };
}

/**
 * The fields a request may carry besides the model, messages and stream, in
 * the order they go upstream. Listed one by one, so nothing the gateway keeps
 * for itself (task, metadata, a stray `stream`) can leak upstream.
 */
const forwardedFields = [
  'max_tokens',
  'temperature',
  'top_p',
  'stop',
  'seed',
  'response_format',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'user',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'reasoning_effort',
  'verbosity',
  'top_k',
  'min_p',
  'repetition_penalty',
] as const satisfies ReadonlyArray<keyof EngineRequest>;

/**
 * The request body: what JSON.stringify writes for an object of the model,
 * the messages, `stream` (and `stream_options` asking for usage, so traces get
 * token counts even when the client did not ask) and each forwarded field
 * that is set, in that order. Written field by field: an object of two dozen
 * properties, nearly all undefined, took JSON.stringify as long again as the
 * messages (measured: docs/benchmarks.md).
 */
export function serializeChatRequest(request: EngineRequest, stream: boolean): string {
  let body = `{"model":${JSON.stringify(request.model)},"messages":${JSON.stringify(withSystemForDeveloper(request.messages))},"stream":${stream}`;
  if (stream) body += ',"stream_options":{"include_usage":true}';
  for (const field of forwardedFields) {
    const value = field === 'seed' ? seedForWire(request.seed) : request[field];
    if (value !== undefined) body += `,"${field}":${JSON.stringify(value)}`;
  }
  return `${body}}`;
}

/**
 * The largest double below 2^63. A seed of ±2^63 (what int64's extremes parse
 * to) prints as ±9223372036854776000, outside int64, and servers that check
 * the range (vLLM) would refuse it; this one prints as 9223372036854775000.
 */
const LARGEST_SEED_ON_WIRE = 9_223_372_036_854_774_784;

function seedForWire(seed: number | undefined): number | undefined {
  return seed === undefined ? undefined : Math.min(Math.max(seed, -LARGEST_SEED_ON_WIRE), LARGEST_SEED_ON_WIRE);
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
