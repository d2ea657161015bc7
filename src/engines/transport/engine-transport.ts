/**
 * The transport contract: how the `openai` engine sends one HTTP request to an
 * engine server (vLLM, SGLang, llama.cpp server, a proxy in front of them) and
 * reads its reply as it arrives. Two implementations pass one suite of wire
 * cases on real sockets (`test/contracts/engine-transport-contract.ts`):
 *
 *   - `http1`: taskgate's own keep-alive HTTP/1.1 client (`http1-transport.ts`),
 *     the default: a request is one write of text made ahead, which keeps a
 *     stream's first byte sooner than undici (measured: docs/benchmarks.md);
 *   - `undici`: the reference (`undici-transport.ts`), Node's own HTTP client.
 *
 * What every transport owes the engine above it, and through it the user:
 *
 *   - One generation per request. A request is written once. It is never sent
 *     again on its own, on another connection or later: after its bytes were
 *     written the engine may have started generating, so a connection that
 *     closes before the reply is `CONNECTION_CLOSED`, not a silent resend.
 *     `TransportError.requestSent` tells the engine pool whether the request
 *     provably never reached the engine (so it may go to another replica).
 *   - Strict framing (RFC 9112). A reply with both `transfer-encoding` and
 *     `content-length`, two lengths, a folded header, a bad status line, a
 *     head over 64 KiB, bytes after a complete reply: `MALFORMED_RESPONSE`,
 *     and its connection is closed, never reused. Bytes that arrive on an idle
 *     connection retire it too.
 *   - Nothing waits forever. A connect, the reply's head and (when asked) each
 *     gap in its body are timed; `signal` aborting, or `cancel`, closes the
 *     connection, so the engine sees the client go and stops generating.
 *   - An idle connection the engine has closed is noticed and dropped before
 *     it is reused; connections are reused only within the server's
 *     keep-alive hint less a second (else 4 s).
 *
 * Bounding the calls in flight and the queue before them is not the
 * transport's job: the engine does it once for both (`concurrency-gate.ts`).
 */
import { validateHeaderName, validateHeaderValue, type IncomingHttpHeaders } from 'node:http';

export interface EngineTransport {
  /**
   * Sends `body` (none for a GET) with the method, path and headers of
   * `request`; resolves once the reply's head is in, rejects with a
   * `TransportError` (or `signal`'s reason when it aborted) when connecting,
   * writing or waiting for the head fails.
   */
  send(request: PreparedRequest, body: string | null, signal: AbortSignal, timeouts: RequestTimeouts): Promise<StreamedReply>;
  /** Fails requests not yet sent, waits for those in flight, then closes every connection. */
  close(): Promise<void>;
}

export interface TransportOptions {
  /** `http:` or `https:`, host and port of the engine. */
  origin: URL;
  /** Connections kept to the engine at most; requests beyond them wait for one. */
  maxConnections: number;
  connectTimeoutMs: number;
}

export type TransportKind = 'http1' | 'undici';

export interface RequestTimeouts {
  /** From the request's write to the reply's head. */
  headersMs: number;
  /** The longest wait for the body's next bytes after the head; 0 for none (the caller times the body). */
  bodyIdleMs: number;
}

/** A reply read as it arrives. */
export interface StreamedReply {
  readonly statusCode: number;
  /** Lower-case names; repeated fields joined with `, `. */
  readonly headers: IncomingHttpHeaders;
  /** Every buffer that arrived since the last read (waiting for one when none has), or null once the body has ended. */
  read(): Promise<Buffer[] | null>;
  /** The rest of the body as text. */
  text(): Promise<string>;
  /** Stops the reply: the request is cancelled (the engine sees its connection close), what was queued is dropped, and reads reject with `reason`. */
  cancel(reason: Error): void;
}

/** A reply's whole body as text, read through its `read` (what `StreamedReply.text` does in every transport). */
export async function readText(reply: Pick<StreamedReply, 'read'>): Promise<string> {
  const parts: Buffer[] = [];
  for (let buffers = await reply.read(); buffers !== null; buffers = await reply.read()) parts.push(...buffers);
  return Buffer.concat(parts).toString('utf8');
}

/**
 * A request's method, path and headers, checked once when the engine is made
 * (a configured header cannot smuggle a line break): the hot path adds only
 * the body. `head` is the same as HTTP/1.1 text, up to the body's length.
 */
export class PreparedRequest {
  readonly head: string;

  constructor(
    readonly method: 'GET' | 'POST',
    readonly path: string,
    readonly headers: Readonly<Record<string, string>>,
    host: string,
  ) {
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n`;
    for (const [name, value] of Object.entries(headers)) {
      validateHeaderName(name);
      validateHeaderValue(name, value);
      head += `${name}: ${value}\r\n`;
    }
    this.head = head;
  }
}

export type TransportErrorCode =
  /** Refused, reset or unreachable while connecting: nothing was sent. */
  | 'CONNECT_FAILED'
  | 'CONNECT_TIMEOUT'
  /** Writing the request failed: the engine cannot have read it whole. */
  | 'WRITE_FAILED'
  /** The request was written and the connection closed before the reply (or mid-reply). */
  | 'CONNECTION_CLOSED'
  | 'HEADERS_TIMEOUT'
  | 'BODY_TIMEOUT'
  /** Not a valid HTTP/1.1 reply (see the framing rules above). */
  | 'MALFORMED_RESPONSE'
  /** The transport is closing: the request was not sent. */
  | 'CLOSED';

const notSent: ReadonlySet<TransportErrorCode> = new Set(['CONNECT_FAILED', 'CONNECT_TIMEOUT', 'WRITE_FAILED', 'CLOSED']);

export class TransportError extends Error {
  /** False only when the engine provably never got the request: it may then go to another replica. */
  readonly requestSent: boolean;

  constructor(
    readonly code: TransportErrorCode,
    message: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'TransportError';
    this.requestSent = !notSent.has(code);
  }
}
