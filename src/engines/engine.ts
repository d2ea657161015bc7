/**
 * The Engine contract: what taskgate needs from anything that generates chat
 * replies. An OpenAI-compatible HTTP server (vLLM, SGLang, llama.cpp server,
 * Ollama, TGI) is one `openai` engine configured by URL; the in-process CPU
 * engine is another implementation of the same two methods.
 *
 * Engines know nothing of scopes, keys, catalogs or traces. They take
 * generation parameters with the model named as the engine knows it, and return
 * typed objects: a whole reply, or a stream of chunks. The gateway owns ids,
 * `created`, the canonical model name and the wire format sent to clients.
 *
 * Errors: an engine throws `GatewayError`s from `src/api/errors.ts`:
 *   - `InvalidRequestError` when the engine rejected the request itself (4xx,
 *     e.g. context length exceeded): never retried, shown to the caller as 400
 *     with the engine's message;
 *   - `EngineError` (502) for 5xx replies, anything unparseable, and a
 *     connection closed after the request was sent (`engine_connection_closed`);
 *   - `EngineUnavailableError` (503) when it cannot be reached or refused the
 *     call before working on it (429, 503, its queue full: `EngineOverloadedError`);
 *   - `EngineTimeoutError` (504) when it is too slow to connect, to start
 *     replying, or between two chunks;
 *   - `ClientAbortError` when `signal` aborted the call.
 * `error.resendable` is true only when the engine provably did not start the
 * call: the pool may then send it to another replica, and only then, so a
 * call never costs two generations. Nothing is resent once anything has
 * reached the client.
 */
import type { ChatChoice, ChunkChoice, GenerationParameters, Usage } from '../api/chat-types.js';

export interface EngineRequest extends GenerationParameters {
  /** The model's name on this engine (`served_by[].name`), not the catalog id. */
  model: string;
}

/** A whole reply. `usage` is null only when the engine did not report it. */
export interface EngineCompletion {
  choices: ChatChoice[];
  usage: Usage | null;
  system_fingerprint?: string | null;
}

/**
 * One streamed event. Choices carry deltas; the engine's own `id`, `model` and
 * `created` are dropped (the gateway sets its own). A chunk with empty
 * `choices` and a `usage` is the final usage report. Engines always collect
 * usage, whether or not the client asked for it, so traces have token counts.
 */
export interface EngineChunk {
  choices: ChunkChoice[];
  usage?: Usage | null;
  system_fingerprint?: string | null;
}

export interface Engine {
  /** The `engines[].id` from the config; shown in traces as the replica. */
  readonly id: string;

  /** A whole reply. Rejects with a `GatewayError`. */
  complete(request: EngineRequest, signal: AbortSignal): Promise<EngineCompletion>;

  /**
   * A stream of chunks, in batches: each item holds the chunks that arrived
   * together (the events of one network read, never none), so a burst of
   * events costs the gateway one step and one write to the client, not one
   * each. The request is sent when iteration starts; errors surface from
   * `next()`, after the chunks that came before them. Stopping iteration
   * early (`return()`), or aborting `signal`, cancels the generation upstream
   * and frees its resources at once.
   */
  stream(request: EngineRequest, signal: AbortSignal): AsyncIterable<EngineChunk[]>;

  /** Resolves when the engine can take calls (used by `/readyz`); rejects with the reason. */
  checkReady(signal: AbortSignal): Promise<void>;

  /**
   * Why the engine cannot serve `model` (its name on this engine) at the
   * moment although it is configured to, e.g. "not downloaded" for a CPU
   * model without its file; null when it can. `/readyz` is ready only while
   * some model can answer. Engines that serve whatever they are asked (HTTP
   * upstreams) leave it out.
   */
  unavailableReason?(model: string): string | null;

  /** Closes connections and frees resources. */
  close(): Promise<void>;

  /**
   * Calls generating and calls waiting, per model, for `/metrics`; engines
   * without a queue of their own (HTTP engines: the pool counts their calls in
   * flight) leave it out.
   */
  occupancy?(): Array<{ model: string; inFlight: number; queued: number }>;
}
