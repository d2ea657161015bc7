/**
 * Every failure of an `openai` engine's call as an error of the catalog:
 * the transport's errors before the headers, while reading a whole reply and
 * while reading a stream; an error status; a compressed body.
 *
 * Which failures are `resendable` (the engine provably did not start the
 * request) follows the rule of one generation per call (`openai-engine.ts`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  ClientAbortError,
  EngineError,
  EngineOverloadedError,
  EngineTimeoutError,
  EngineUnavailableError,
  GatewayError,
  InvalidRequestError,
} from '../api/errors.js';
import type { Logger } from '../log/logger.js';
import { describeUpstreamError } from './openai-wire.js';
import { TransportError, type StreamedReply } from './transport/engine-transport.js';

export class OpenAIFailures {
  constructor(
    private readonly id: string,
    private readonly timeouts: { connectTimeoutMs: number; idleTimeoutMs: number },
    private readonly logger: Logger,
  ) {}

  /** A compressed body is read by nothing here (taskgate asks for `identity`): a 502, and the request cancelled. */
  refuseEncoded(reply: StreamedReply): void {
    const encoding = reply.headers['content-encoding'];
    if (encoding === undefined || encoding.trim().toLowerCase() === 'identity') return;
    const error = new EngineError(
      `Engine ${this.id} sent its reply with content-encoding '${encoding}', which taskgate does not accept.`,
      undefined,
      'engine_bad_reply',
    );
    reply.cancel(error);
    throw error;
  }

  /** The engine replied with an error status. */
  statusError(status: number, headers: IncomingHttpHeaders, text: string): GatewayError {
    const { message, param } = describeUpstreamError(text, status);
    // Upstream messages are never logged: a validation error can quote the prompt.
    // 429 and 503 are refusals before any work: another replica may take the call.
    if (status === 429) return new EngineOverloadedError(`Engine ${this.id} is overloaded: ${message}`, retryAfterOf(headers) ?? 1);
    if (status === 503)
      return new EngineUnavailableError(
        `Engine ${this.id} is unavailable (HTTP 503): ${message}`,
        undefined,
        'engine_unavailable',
        retryAfterOf(headers),
      );
    if (status === 401 || status === 403) {
      // Our own credentials for the engine are wrong: a configuration error,
      // not the caller's, who would otherwise be told their request is invalid.
      this.logger.error('engine refused the configured credentials', { status });
      return new EngineError(`Engine ${this.id} refused taskgate's credentials (HTTP ${status}).`, undefined, 'engine_auth_failed');
    }
    if (status === 408) return new EngineTimeoutError(`Engine ${this.id} timed out the request: ${message}`);
    if (status >= 400 && status < 500) {
      // 404 is usually a model name the engine does not serve: a catalog
      // mistake worth a warning, though the caller still gets the message.
      if (status === 404) this.logger.warn('engine replied 404: check served_by names and base_url', { status });
      return new InvalidRequestError(message, param, 'upstream_invalid_request');
    }
    if (status >= 500) return new EngineError(`Engine ${this.id} failed (HTTP ${status}): ${message}`);
    return new EngineError(`Engine ${this.id} replied with unexpected HTTP ${status}.`, undefined, 'engine_bad_reply');
  }

  /** Connecting, sending or waiting for the headers failed. */
  beforeHeadersError(error: unknown, signal: AbortSignal, headersTimeoutMs: number): GatewayError {
    if (signal.aborted) return new ClientAbortError();
    if (error instanceof GatewayError) return error;
    const engine = `Engine ${this.id}`;
    const code = error instanceof TransportError ? error.code : undefined;
    switch (code) {
      case 'CONNECT_TIMEOUT':
        return new EngineTimeoutError(`${engine} did not accept a connection within ${this.timeouts.connectTimeoutMs} ms.`, error, true);
      case 'CONNECT_FAILED':
      case 'WRITE_FAILED':
        return new EngineUnavailableError(`${engine} cannot be reached (${causeCodeOf(error) ?? code.toLowerCase()}).`, error);
      case 'CLOSED':
        return new EngineUnavailableError(`${engine} is shutting down.`, error);
      case 'HEADERS_TIMEOUT':
        return new EngineTimeoutError(`${engine} did not start replying within ${headersTimeoutMs} ms.`, error);
      case 'BODY_TIMEOUT':
        return new EngineTimeoutError(`${engine} stopped sending its reply for ${this.timeouts.idleTimeoutMs} ms.`, error);
      case 'MALFORMED_RESPONSE':
        return new EngineError(
          `${engine} sent a reply that is not valid HTTP/1.1 (${(error as Error).message}).`,
          error,
          'engine_bad_reply',
        );
      default:
        // After the request was written: the engine may have started on it, so it is not sent again.
        return new EngineError(
          `${engine} closed the connection after it received the request, before replying.`,
          error,
          'engine_connection_closed',
        );
    }
  }

  /** Reading a whole reply's body failed. */
  duringBodyError(error: unknown, signal: AbortSignal): GatewayError {
    if (signal.aborted) return new ClientAbortError();
    if (error instanceof GatewayError) return error; // the StreamWatch's timeout
    if (error instanceof TransportError && error.code === 'BODY_TIMEOUT') {
      return new EngineTimeoutError(`Engine ${this.id} stopped sending its reply for ${this.timeouts.idleTimeoutMs} ms.`, error);
    }
    if (error instanceof TransportError && error.code === 'MALFORMED_RESPONSE') {
      return new EngineError(`Engine ${this.id} sent a reply that is not valid HTTP/1.1 (${error.message}).`, error, 'engine_bad_reply');
    }
    return new EngineError(`Engine ${this.id} closed the connection before its reply ended.`, error, 'engine_reply_truncated');
  }

  /** Reading a stream failed after the headers (our own timeouts and parse errors are already GatewayErrors). */
  duringStreamError(error: unknown, signal: AbortSignal): GatewayError {
    if (signal.aborted) return new ClientAbortError();
    if (error instanceof GatewayError) return error;
    if (error instanceof TransportError && error.code === 'MALFORMED_RESPONSE') {
      return new EngineError(`Engine ${this.id} sent a stream that is not valid HTTP/1.1 (${error.message}).`, error, 'engine_bad_reply');
    }
    return new EngineError(`Engine ${this.id} closed the stream before it finished.`, error, 'engine_stream_truncated');
  }
}

/** The system error under a transport's (`ECONNREFUSED`), when there is one. */
function causeCodeOf(error: unknown): string | undefined {
  const code = ((error as Error).cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** `retry-after` in whole seconds, when the engine sent one. */
function retryAfterOf(headers: IncomingHttpHeaders): number | undefined {
  const value = headers['retry-after'];
  const seconds = typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : undefined;
}
