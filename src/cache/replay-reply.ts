/**
 * A kept reply -> what a new call gets, as if an engine had just answered:
 *   - `replayCompletion`: the `chat.completion` body of a call without
 *     `stream`, built as the handler builds a live one (same fields, same
 *     order; choices through `replyChoices`, so the caller's tool form holds);
 *   - `replayChunks`: the chunks of a stream, as an engine yields them, for
 *     the one SSE writer (`server/sse-writer.ts`) to write. The writer adds
 *     what every stream gets: the fresh id, `created` and model as each
 *     event's prefix, the caller's tool form (`ReplyChunkShaper`), the
 *     metadata on the first event, the usage chunk only when
 *     `stream_options.include_usage` asked for it, and `data: [DONE]`. So a
 *     replayed stream is written by the same code, byte for byte in the same
 *     shape, as a live one, and this module writes no SSE of its own.
 *
 * The chunks, in order: the role (`{"role":"assistant","content":""}`,
 * content null for a reply without text); the reasoning, the content and the
 * refusal, each in pieces (the recorded pieces when the reply kept them,
 * else cut after a word once 16 characters are in, at most 64); each tool
 * call as OpenAI streams one (a first delta with `index`, `id`, `type` and
 * `function.name` and empty arguments, then pieces of the arguments); the
 * finish reason in a chunk of its own; the usage in a chunk without choices.
 * Every chunk carries the original's `system_fingerprint` when it had one.
 * A reply with log probabilities streams its content whole, with them.
 */
import { replyChoices } from '../api/chat-reply.js';
import type { ChatCompletion, ChunkChoice, ChunkDelta, FinishReason, RequestNotes, Usage } from '../api/chat-types.js';
import type { CachedReply } from './response-cache.js';

export interface ReplayOptions {
  /** The new call's completion id (`chatcmpl-…`). */
  id: string;
  /** The new call's Unix seconds. */
  created: number;
  /** How the new request wrote its tools (`ChatCompletionRequest.notes`). */
  notes?: RequestNotes;
  /** The new request's metadata, echoed as on a live reply. */
  metadata?: Record<string, string>;
}

/**
 * A stream chunk as an engine yields one: structurally the `EngineChunk` of
 * `engines/engine.ts` (without its optional precomputed JSON), declared here
 * so that the cache needs nothing from the engines.
 */
export interface ReplayChunk {
  choices: ChunkChoice[];
  usage?: Usage | null;
  system_fingerprint?: string | null;
}

/** The `chat.completion` body; shares objects with `reply`, so it is for writing out, not for changing. */
export function replayCompletion(reply: CachedReply, options: ReplayOptions): ChatCompletion {
  const choice = { index: 0, message: reply.message, finish_reason: reply.finishReason, logprobs: reply.logprobs ?? null };
  const body: ChatCompletion = {
    id: options.id,
    object: 'chat.completion',
    created: options.created,
    model: reply.model,
    choices: replyChoices([choice], options.notes),
    usage: reply.usage,
  };
  if (reply.systemFingerprint !== undefined) body.system_fingerprint = reply.systemFingerprint;
  if (options.metadata !== undefined) body.metadata = options.metadata;
  return body;
}

/** The chunks of the stream: new chunk and choice objects each time (the writer may change the first in place); usage and log probabilities are the reply's own. */
export function replayChunks(reply: CachedReply): ReplayChunk[] {
  const { message } = reply;
  const whole = reply.logprobs != null;
  const choices: ChunkChoice[] = [choiceWith({ role: 'assistant', content: message.content === null ? null : '' })];
  if (message.reasoning_content !== undefined) {
    for (const piece of textPieces(message.reasoning_content)) choices.push(choiceWith({ reasoning_content: piece }));
  }
  const textStart = choices.length;
  if (message.content !== null && message.content !== '') {
    const pieces = whole ? [message.content] : (recordedPieces(reply) ?? textPieces(message.content));
    for (const piece of pieces) choices.push(choiceWith({ content: piece }));
  }
  if (message.refusal != null && message.refusal !== '') {
    for (const piece of whole ? [message.refusal] : textPieces(message.refusal)) choices.push(choiceWith({ refusal: piece }));
  }
  /** The first chunk of content or refusal: where log probabilities go. */
  const firstText = choices.length > textStart ? choices[textStart] : undefined;
  const calls = message.tool_calls ?? [];
  calls.forEach((call, index) => {
    choices.push(
      choiceWith({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }),
    );
    for (const piece of textPieces(call.function.arguments))
      choices.push(choiceWith({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  const finishReason: FinishReason = reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
  const finish: ChunkChoice = { index: 0, delta: {}, finish_reason: finishReason };
  choices.push(finish);
  if (whole) (firstText ?? finish).logprobs = reply.logprobs;

  const chunks: ReplayChunk[] = choices.map((choice) => ({ choices: [choice] }));
  chunks.push({ choices: [], usage: reply.usage });
  if (reply.systemFingerprint !== undefined) for (const chunk of chunks) chunk.system_fingerprint = reply.systemFingerprint;
  return chunks;
}

/** A piece of a stream: one choice, keys in the order engines and the writer's fast path use. */
function choiceWith(delta: ChunkDelta): ChunkChoice {
  return { index: 0, delta, finish_reason: null };
}

/** The content as the original stream delivered it, when the reply kept that and it still adds up to the content. */
function recordedPieces(reply: CachedReply): readonly string[] | undefined {
  const pieces = reply.contentPieces;
  return pieces !== undefined && pieces.length > 0 && pieces.join('') === reply.message.content
    ? pieces.filter((piece) => piece !== '')
    : undefined;
}

/** A piece ends after a whitespace once it holds this many characters... */
const PIECE_LENGTH = 16;
/** ...or here, inside a long word. */
const MAX_PIECE_LENGTH = 64;

/** `text` cut into word-sized pieces that join to it, never inside a surrogate pair. */
export function textPieces(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + PIECE_LENGTH);
    while (end < text.length && end - start < MAX_PIECE_LENGTH && !isWhitespace(text.charCodeAt(end - 1))) end++;
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end++;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
