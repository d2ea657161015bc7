/**
 * The error catalog. Every failure taskgate reports is a `GatewayError` with an
 * HTTP status, a stable `code` (what clients and traces key on), the OpenAI
 * error `type`, the offending `param` when there is one, whether retrying the
 * same call elsewhere can help, and the underlying `cause`.
 *
 * `toErrorBody` is the one place that turns an error into the OpenAI error body
 * `{"error": {"message", "type", "param", "code"}}`; anything that is not a
 * `GatewayError` becomes a 500 whose message reveals nothing internal.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'engine_error'
  | 'server_error';

/**
 * Every `error.code` taskgate sends, in one closed list: clients and traces key
 * on these, so a new one is added here, deliberately, never made up at a call
 * site. Grouped by who answers: the request, the caller's key, the engines,
 * the gateway itself.
 */
export type ErrorCode =
  // The request
  | 'invalid_request'
  | 'invalid_body'
  | 'invalid_json'
  | 'empty_body'
  | 'json_too_deep'
  | 'invalid_type'
  | 'invalid_value'
  | 'missing_required_parameter'
  | 'unknown_parameter'
  | 'unsupported_parameter'
  | 'unsupported_schema'
  | 'array_above_max_length'
  | 'context_length_exceeded'
  | 'invalid_scope_header'
  | 'invalid_cursor'
  | 'invalid_eval_contract'
  | 'not_found'
  | 'unknown_path'
  | 'model_not_found'
  | 'project_not_found'
  | 'workload_not_found'
  | 'trace_not_found'
  | 'key_not_found'
  | 'method_not_allowed'
  | 'request_too_large'
  | 'request_headers_too_large'
  | 'request_timeout'
  | 'malformed_http'
  | 'unsupported_media_type'
  | 'unsupported_content'
  | 'cross_site_request'
  | 'client_closed'
  | 'client_stalled'
  // The caller's key
  | 'invalid_api_key'
  | 'permission_denied'
  | 'rate_limit_exceeded'
  | 'budget_exceeded'
  | 'budget_unavailable'
  // The engines
  | 'engine_error'
  | 'engine_bad_reply'
  | 'engine_connection_closed'
  | 'engine_auth_failed'
  | 'engine_reply_truncated'
  | 'engine_stream_stopped'
  | 'engine_stream_truncated'
  | 'engine_not_installed'
  | 'model_load_failed'
  | 'no_models_configured'
  | 'engine_unavailable'
  | 'engine_overloaded'
  | 'engine_timeout'
  | 'no_healthy_replica'
  | 'upstream_invalid_request'
  | 'model_not_downloaded'
  | 'model_downloading'
  // The gateway
  | 'store_unavailable'
  | 'metrics_unavailable'
  | 'internal_error';

export interface GatewayErrorOptions {
  status: number;
  code: ErrorCode;
  type: ErrorType;
  param?: string | null;
  /** True when the same call may succeed on another replica or later. */
  retryable?: boolean;
  /**
   * True only when no engine began this call (it was never sent, or the
   * engine refused it before working on it): the pool may then send it to
   * another replica without costing a second generation.
   */
  resendable?: boolean;
  cause?: unknown;
  /** Extra response headers, e.g. `retry-after`. */
  headers?: Record<string, string>;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly retryable: boolean;
  readonly resendable: boolean;
  readonly headers: Record<string, string> | undefined;

  constructor(message: string, options: GatewayErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status;
    this.code = options.code;
    this.type = options.type;
    this.param = options.param ?? null;
    this.retryable = options.retryable ?? false;
    this.resendable = options.resendable ?? false;
    this.headers = options.headers;
  }
}

/** 400: the request is malformed; `param` names the field. */
export class InvalidRequestError extends GatewayError {
  constructor(message: string, param: string | null = null, code: ErrorCode = 'invalid_request', cause?: unknown) {
    super(message, { status: 400, code, type: 'invalid_request_error', param, cause });
  }
}

/**
 * 401: missing, malformed, unknown or revoked key. One message for all of them,
 * so a caller cannot tell a revoked key from one that never existed.
 */
export class AuthenticationError extends GatewayError {
  constructor() {
    super('Invalid API key. Send "Authorization: Bearer <key>" with a taskgate key.', {
      status: 401,
      code: 'invalid_api_key',
      type: 'authentication_error',
    });
  }
}

/** 403: the key is valid but its role does not allow this action. */
export class PermissionError extends GatewayError {
  constructor(message: string) {
    super(message, { status: 403, code: 'permission_denied', type: 'permission_error' });
  }
}

/** 404: unknown model, path or resource (including another account's). */
export class NotFoundError extends GatewayError {
  constructor(message: string, code: ErrorCode = 'not_found', param: string | null = null) {
    super(message, { status: 404, code, type: 'not_found_error', param });
  }
}

export class MethodNotAllowedError extends GatewayError {
  constructor(method: string, path: string, allowed: readonly string[]) {
    super(`Method ${method} is not allowed on ${path}; use ${allowed.join(' or ')}.`, {
      status: 405,
      code: 'method_not_allowed',
      type: 'invalid_request_error',
      headers: { allow: allowed.join(', ') },
    });
  }
}

export class PayloadTooLargeError extends GatewayError {
  constructor(limitBytes: number) {
    super(`Request body is larger than the limit of ${limitBytes} bytes.`, {
      status: 413,
      code: 'request_too_large',
      type: 'invalid_request_error',
    });
  }
}

/** 408: the request (headers or body) did not arrive in time; the connection is closed. */
export class RequestTimeoutError extends GatewayError {
  constructor(timeoutMs: number) {
    super(`The request did not arrive within ${timeoutMs} ms (server.request_timeout_ms). Send the whole body at once.`, {
      status: 408,
      code: 'request_timeout',
      type: 'invalid_request_error',
      headers: { connection: 'close' },
    });
  }
}

/** 431: the request's headers are over the HTTP parser's limit. */
export class HeadersTooLargeError extends GatewayError {
  constructor(limitBytes: number) {
    super(`Request headers are larger than the limit of ${limitBytes} bytes.`, {
      status: 431,
      code: 'request_headers_too_large',
      type: 'invalid_request_error',
    });
  }
}

/** 400 from the HTTP parser: the bytes are not a valid HTTP/1.1 request (a control byte in a header, a bad request line). */
export class MalformedHttpError extends GatewayError {
  constructor(reason: string) {
    super(`The request is not valid HTTP/1.1: ${reason}.`, { status: 400, code: 'malformed_http', type: 'invalid_request_error' });
  }
}

/**
 * 408: a connection that spent over a second without sending a whole request,
 * closed as one of the oldest such when its address, or the server, held more
 * of them than allowed. Never sent to a connection for being new.
 */
export class SlowConnectionShedError extends GatewayError {
  constructor(cap: 'address' | 'total', limit: number) {
    const held =
      cap === 'address'
        ? `this address held more than ${limit} (server.max_slow_connections_per_address)`
        : `the server held more than ${limit} (server.max_slow_connections)`;
    super(
      `This connection spent over a second without sending a whole request, and ${held}: the oldest of them are closed. Send the whole request at once.`,
      {
        status: 408,
        code: 'request_timeout',
        type: 'invalid_request_error',
        headers: { connection: 'close' },
      },
    );
  }
}

export class UnsupportedMediaTypeError extends GatewayError {
  constructor(contentType: string | undefined) {
    super(`Content-Type must be application/json${contentType ? `, got "${contentType.slice(0, 100)}"` : ''}.`, {
      status: 415,
      code: 'unsupported_media_type',
      type: 'invalid_request_error',
    });
  }
}

export class RateLimitError extends GatewayError {
  constructor(limitPerMinute: number, retryAfterSeconds: number, budget: 'requests' | 'tokens' = 'requests') {
    super(`Rate limit of ${limitPerMinute} ${budget} per minute reached for this key. Retry after ${retryAfterSeconds} s.`, {
      status: 429,
      code: 'rate_limit_exceeded',
      type: 'rate_limit_error',
      retryable: true,
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

/**
 * 502: the engine answered with a server error or something that is not a
 * valid reply, or closed the connection after it had the request
 * (`engine_connection_closed`). An engine's 4xx (e.g. context length
 * exceeded) is not this: it is an `InvalidRequestError` carrying the
 * engine's message. Never resent: the engine may have generated.
 */
export class EngineError extends GatewayError {
  constructor(message: string, cause?: unknown, code: ErrorCode = 'engine_error') {
    super(message, { status: 502, code, type: 'engine_error', retryable: true, cause });
  }
}

/**
 * 503: no replica can take the call (refused, circuit open, queue full, no
 * engine). No engine started it, so it may go to another replica.
 */
export class EngineUnavailableError extends GatewayError {
  constructor(message: string, cause?: unknown, code: ErrorCode = 'engine_unavailable', retryAfterSeconds?: number) {
    super(message, {
      status: 503,
      code,
      type: 'engine_error',
      retryable: true,
      resendable: true,
      cause,
      headers: retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

/**
 * 503: every slot of the engine is taken and its queue is full. Another
 * replica may have room (retryable), but a busy replica is not a broken one:
 * the pool does not count it against the replica's circuit.
 */
export class EngineOverloadedError extends EngineUnavailableError {
  constructor(message: string, retryAfterSeconds: number) {
    super(message, undefined, 'engine_overloaded', retryAfterSeconds);
  }
}

/**
 * 503: the model is configured but its weights are not on disk yet. Not a
 * failure of the replica and not worth retrying, elsewhere or later: the
 * message says which command fetches the file, and `x-should-retry: false`
 * stops the official SDKs from retrying it with backoff.
 */
export class ModelNotDownloadedError extends GatewayError {
  constructor(message: string) {
    super(message, { status: 503, code: 'model_not_downloaded', type: 'engine_error', headers: { 'x-should-retry': 'false' } });
  }
}

/** 503: the model's file is being downloaded right now; retrying after `retry-after` is the right thing to do. */
export class ModelDownloadingError extends GatewayError {
  constructor(message: string, retryAfterSeconds: number) {
    super(message, { status: 503, code: 'model_downloading', type: 'engine_error', headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

/**
 * 504: the engine did not connect, start or continue replying in time.
 * `resendable` only for a connect that timed out: the request never left.
 */
export class EngineTimeoutError extends GatewayError {
  constructor(message: string, cause?: unknown, resendable = false) {
    super(message, { status: 504, code: 'engine_timeout', type: 'engine_error', retryable: true, resendable, cause });
  }
}

/** The caller went away; nothing is sent, the trace records an abort. */
export class ClientAbortError extends GatewayError {
  constructor() {
    super('The client closed the connection.', { status: 499, code: 'client_closed', type: 'invalid_request_error' });
  }
}

/**
 * A streaming caller read nothing for `server.stream_stall_timeout_ms`: it is
 * disconnected and its generation cancelled, so it holds no engine slot.
 * Traced like a client that went away, with this code.
 */
export class ClientStalledError extends GatewayError {
  constructor(stallTimeoutMs: number) {
    super(`The client read nothing of the stream for ${stallTimeoutMs} ms; it was disconnected.`, {
      status: 499,
      code: 'client_stalled',
      type: 'invalid_request_error',
    });
  }
}

export class InternalError extends GatewayError {
  constructor(cause?: unknown) {
    super('Internal error. Quote the x-request-id header when reporting it.', {
      status: 500,
      code: 'internal_error',
      type: 'server_error',
      cause,
    });
  }
}

/** Any thrown value as a GatewayError; unknown values become a 500. */
export function asGatewayError(error: unknown): GatewayError {
  return error instanceof GatewayError ? error : new InternalError(error);
}

export interface ErrorBody {
  error: { message: string; type: ErrorType; param: string | null; code: ErrorCode };
}

export function toErrorBody(error: GatewayError): ErrorBody {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
}
