/**
 * A kept reply's text -> a `CachedReply`, or null when the text is not one.
 *
 * Both back ends keep replies as JSON text (memory to measure them and to
 * keep a copy no caller shares; Redis because it holds strings). Text read
 * back from a shared Redis may have been written by another version of
 * taskgate or by something else entirely, so its shape is checked before it
 * is replayed: a value that is not a reply is a miss, not a 500. The check
 * covers what replay reads; the rest (usage details, logprobs) is passed on
 * as stored.
 */
import type { CachedReply } from './response-cache.js';

export function parseCachedReply(text: string): CachedReply | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return isCachedReply(value) ? value : null;
}

function isCachedReply(value: unknown): value is CachedReply {
  if (!isObject(value)) return false;
  const { model, message, finishReason, usage, costUsd, createdAt, systemFingerprint, contentPieces } = value;
  return (
    typeof model === 'string' &&
    isMessage(message) &&
    (finishReason === null || typeof finishReason === 'string') &&
    isObject(usage) &&
    typeof usage.prompt_tokens === 'number' &&
    typeof usage.completion_tokens === 'number' &&
    typeof usage.total_tokens === 'number' &&
    typeof costUsd === 'number' &&
    typeof createdAt === 'number' &&
    (systemFingerprint === undefined || typeof systemFingerprint === 'string') &&
    (contentPieces === undefined || (Array.isArray(contentPieces) && contentPieces.every((piece) => typeof piece === 'string')))
  );
}

function isMessage(value: unknown): boolean {
  if (!isObject(value) || value.role !== 'assistant') return false;
  const { content, refusal, reasoning_content: reasoning, tool_calls: calls } = value;
  return (
    (content === null || typeof content === 'string') &&
    (refusal === undefined || refusal === null || typeof refusal === 'string') &&
    (reasoning === undefined || typeof reasoning === 'string') &&
    (calls === undefined || (Array.isArray(calls) && calls.every(isToolCall)))
  );
}

function isToolCall(value: unknown): boolean {
  if (!isObject(value) || typeof value.id !== 'string' || value.type !== 'function' || !isObject(value.function)) return false;
  return typeof value.function.name === 'string' && typeof value.function.arguments === 'string';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
