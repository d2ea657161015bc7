/**
 * The response cache's key: a SHA-256 (hex) of the canonical JSON
 * (`canonical-json.ts`) of everything that changes a reply:
 *   - the account (entries are never shared between accounts) and the
 *     key's environment (production and staging never answer each other);
 *   - the model that will serve the call, after routing: the requested name
 *     is not in the key, since two names served by one model get one reply
 *     and one name routed to two models gets two;
 *   - every field of the validated request that reaches the engine, as the
 *     engine gets it (`KEY_FIELDS` below), less `user`.
 *
 * Left out, because they do not change what the engine answers:
 *   - `stream`, `stream_options`: how the reply travels; replay renders a
 *     kept reply either way (`replay-reply.ts`);
 *   - `user`: OpenAI's end-user id, for abuse monitoring; no engine
 *     generates from it;
 *   - `metadata`, `task`: labels for traces and the workload's name (the
 *     workload decides whether the cache is used, not what a reply holds);
 *     a hit echoes the new request's metadata;
 *   - `model`: see above;
 *   - `notes`: how the caller wrote tools (custom tools, legacy `functions`)
 *     and which fields were ignored. Engines see the translated form, which
 *     is in the key; replay puts the reply back into the caller's form.
 *
 * `max_completion_tokens` is not a field of its own past validation: it
 * arrives as `max_tokens`, so the two spellings of one limit share entries.
 * Values are keyed as validated, so an absent field and its default (no
 * `temperature` and `temperature: 1`) are different keys: engines may not
 * default as OpenAI does.
 */
import { createHash } from 'node:crypto';
import type { ChatCompletionRequest } from '../api/chat-types.js';
import { canonicalJson } from './canonical-json.js';

/**
 * Every field of the validated request, and whether it is in the key. A
 * record over all of `ChatCompletionRequest`'s fields, so a field added to
 * the request does not compile here until someone decides.
 */
const KEY_FIELDS: Record<keyof ChatCompletionRequest, boolean> = {
  messages: true,
  max_tokens: true,
  temperature: true,
  top_p: true,
  stop: true,
  seed: true,
  response_format: true,
  tools: true,
  tool_choice: true,
  parallel_tool_calls: true,
  n: true,
  presence_penalty: true,
  frequency_penalty: true,
  logit_bias: true,
  logprobs: true,
  top_logprobs: true,
  reasoning_effort: true,
  verbosity: true,
  top_k: true,
  min_p: true,
  repetition_penalty: true,
  user: false,
  model: false,
  stream: false,
  stream_options: false,
  task: false,
  metadata: false,
  notes: false,
};

export type RequestField = keyof ChatCompletionRequest;

/** The request fields in the key. */
export const CACHE_KEY_FIELDS: readonly RequestField[] = fieldsWhere(true);
/** The request fields left out of the key (see the file's comment for why). */
export const FIELDS_NOT_IN_CACHE_KEY: readonly RequestField[] = fieldsWhere(false);

/**
 * Bumped when what the key covers or how it is written changes, so entries
 * written by another version (in a shared Redis) are never read as this
 * version's.
 */
const KEY_VERSION = 1;

export interface CacheKeyInput {
  accountId: string;
  /** The calling key's environment ('production' or 'staging'). */
  environment: string;
  /** The catalog id of the model that will serve the call (after routing). */
  model: string;
  request: ChatCompletionRequest;
}

export function cacheKey(input: CacheKeyInput): string {
  const request: Record<string, unknown> = {};
  for (const field of CACHE_KEY_FIELDS) request[field] = input.request[field];
  const keyed = { version: KEY_VERSION, account: input.accountId, environment: input.environment, model: input.model, request };
  return createHash('sha256').update(canonicalJson(keyed)).digest('hex');
}

/**
 * Whether the request asks for repeatable output (`temperature: 0`, or a
 * `seed`): the calls a workload caches unless it says to cache every call.
 */
export function isRepeatable(request: Pick<ChatCompletionRequest, 'temperature' | 'seed'>): boolean {
  return request.temperature === 0 || request.seed !== undefined;
}

function fieldsWhere(keyed: boolean): RequestField[] {
  return (Object.keys(KEY_FIELDS) as RequestField[]).filter((field) => KEY_FIELDS[field] === keyed);
}
