/**
 * The ResponseCache contract: whole replies of earlier calls, kept under a
 * key that covers everything that changes a reply (`cache-key.ts`), so a
 * repeated call can be answered without an engine (`replay-reply.ts` renders
 * a kept reply as a `chat.completion` or as a stream).
 *
 * Two back ends keep it, and both run one suite
 * (`test/contracts/response-cache-contract.ts`):
 *   - `memory/`: this process's replies, least recently used first out,
 *     bounded in bytes. Answers synchronously: a hit costs no tick.
 *   - `redis/`: replies in Redis, shared by every process naming the same
 *     Redis, each with Redis's own expiry (`SET … PX`). While Redis does not
 *     answer, every lookup is a miss and `degraded()` says why; it is used
 *     again as soon as it answers.
 *
 * Rules every back end keeps:
 *   - Nothing throws or rejects, and no call waits on a back end that is
 *     away: a cache that cannot answer answers "miss". A cache is an
 *     optimisation; losing it costs engine time, never a call.
 *   - Writes are fire and forget, in order: a `get` issued after a `set` or
 *     `delete` of the same cache sees it (memory at once; Redis because one
 *     connection runs commands in the order they were sent).
 *   - An entry lives at most its `ttlSeconds`; it may go sooner (evicted to
 *     make room, or a Redis that lost its data).
 *   - Keys are opaque strings (taskgate passes `cacheKey(…)`, a SHA-256 in
 *     hex); values come back equal to what was stored, as JSON would carry
 *     them (a member set to `undefined` comes back absent).
 */
import type { AssistantMessage, ChoiceLogprobs, FinishReason, Usage } from '../api/chat-types.js';

/**
 * One kept reply: what is needed to answer the same call again as the
 * original was answered, and what the trace of a hit records. Plain JSON
 * (no Dates, no Maps, no undefined that matters), so Redis keeps it as text.
 */
export interface CachedReply {
  /**
   * The catalog id of the model that gave the reply (the reply's `model`).
   * Usually the model the key names; another when the per-call guard had a
   * stronger model answer instead.
   */
  model: string;
  /**
   * The reply's message as the engine gave it: custom-tool calls as function
   * calls with `{"input": …}` arguments, no legacy `function_call`. Replay
   * puts it in the form the new request wrote (its `RequestNotes`), which
   * is why two requests that differ only in that form share an entry.
   * Includes `tool_calls`, `refusal` and `reasoning_content` when the
   * original had them.
   */
  message: AssistantMessage;
  /** As the engine gave it; null when it gave none (replay then says "tool_calls" or "stop", as a live reply does). */
  finishReason: FinishReason | null;
  /** The choice's log probabilities, when the request asked for them (`logprobs` is part of the key). */
  logprobs?: ChoiceLogprobs | null;
  /** The original call's usage, replayed as it was (a hit's trace counts no tokens: that is the server's part). */
  usage: Usage;
  /** What the original call cost in USD: a hit's trace records it as the cost saved. */
  costUsd: number;
  /** When the original call finished (epoch ms). */
  createdAt: number;
  /** The engine's `system_fingerprint`, when it sent one. */
  systemFingerprint?: string;
  /**
   * The content as the original stream delivered it, piece by piece, when it
   * was recorded. Replay streams these pieces (they must join to
   * `message.content`); without them it cuts the content itself.
   */
  contentPieces?: string[];
}

/** Counters for `/metrics`: this process's view. */
export interface CacheStats {
  /** Entries held; null when the back end cannot say cheaply (Redis: shared by the fleet, counted nowhere here). */
  entries: number | null;
  /** Bytes the entries take (their JSON text in UTF-8, plus their keys); null as for `entries`. */
  bytes: number | null;
  /** Lookups of this process that found an entry. */
  hits: number;
  /** Lookups of this process that found none (never stored, expired, evicted, or the back end away). */
  misses: number;
  /** Entries dropped to make room for newer ones (expiry is not eviction); null when the back end evicts on its own (Redis's `maxmemory` policy). */
  evictions: number | null;
}

export interface ResponseCache {
  /**
   * The reply kept under `key`, or null. Counts a hit or a miss. Memory
   * answers synchronously, so a hit adds no tick to the call; Redis with a
   * promise that never rejects: an outage, a timeout or an unreadable value
   * is a miss. The reply returned must not be modified (memory hands out
   * its one frozen copy).
   */
  get(key: string): CachedReply | null | Promise<CachedReply | null>;

  /**
   * Keeps `reply` under `key` for `ttlSeconds` (fractions allowed; nothing is
   * kept unless it is positive and finite), replacing what the key held.
   * Fire and forget: returns at once, never throws; a reply the back end
   * will not keep (memory: larger than a quarter of its bound) is dropped,
   * and the key then holds nothing.
   */
  set(key: string, reply: CachedReply, ttlSeconds: number): void;

  /** Forgets the entry under `key`, if any. Fire and forget, never throws. */
  delete(key: string): void;

  stats(): CacheStats;

  /**
   * Null while the cache works as configured; else why not, for `/readyz`
   * (`degraded: ["cache"]`) and the logs. Memory is never degraded.
   */
  degraded(): string | null;

  /** Drops connections and timers; entries of a memory cache are gone. Calls after close are misses and no-ops. */
  close(): Promise<void>;
}
