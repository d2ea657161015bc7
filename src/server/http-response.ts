/**
 * Writing replies. `sendError` is the one place an error becomes the OpenAI
 * error body with its status and headers; `rawErrorReply` is the same body for
 * the few refusals made on a bare socket, before there is a request object.
 *
 * A reply sent before the request's body has fully arrived (a refused key, a
 * 413, a 415) closes the connection, and first reads and discards what is
 * still coming, up to `lingerLimits` (RFC 9112 section 9.6): closing a socket
 * with unread bytes resets it, and a client still writing its body would get a
 * broken pipe instead of the reply, and retry a call that can never succeed.
 */
import { STATUS_CODES, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { toErrorBody, type GatewayError } from '../api/errors.js';
import type { Metrics } from '../tracking/metrics.js';
import { bodyStillArriving } from './read-body.js';

/** How much of an unread body a reply waits for before it closes the connection anyway. */
export const lingerLimits = { bytes: 64 * 1024 * 1024, ms: 5_000 } as const;

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders): void {
  sendJsonText(response, status, JSON.stringify(body), headers);
}

export function sendJsonText(response: ServerResponse, status: number, text: string, headers: OutgoingHttpHeaders, drainBody = true): void {
  if (response.headersSent || response.destroyed) return;
  headers['content-type'] = 'application/json';
  headers['content-length'] = Buffer.byteLength(text);
  if (!bodyStillArriving(response.req)) {
    response.writeHead(status, headers);
    response.end(text);
    return;
  }
  headers.connection = 'close';
  response.writeHead(status, headers);
  response.write(text);
  if (drainBody) endAfterBody(response);
  else response.end();
}

export function sendError(response: ServerResponse, error: GatewayError, headers: OutgoingHttpHeaders): void {
  if (error.headers !== undefined) Object.assign(headers, error.headers);
  // After a timeout the body is not worth waiting for: the reply goes out and the connection closes.
  sendJsonText(response, error.status, JSON.stringify(toErrorBody(error)), headers, error.status !== 408);
}

/** A complete HTTP/1.1 reply carrying `error`, for a socket no request object owns. Closes the connection. */
export function rawErrorReply(error: GatewayError, requestId: string): string {
  const body = JSON.stringify(toErrorBody(error));
  const extra = Object.entries(error.headers ?? {})
    .filter(([name]) => name !== 'connection')
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\n${extra}connection: close\r\n\r\n${body}`
  );
}

/** The reply is written; end it (which closes the connection) once the body is read, or the limits are reached. */
function endAfterBody(response: ServerResponse): void {
  const request = response.req;
  let discarded = 0;
  const timer = setTimeout(finish, lingerLimits.ms);
  timer.unref();
  function onData(chunk: Buffer): void {
    discarded += chunk.length;
    if (discarded > lingerLimits.bytes) finish();
  }
  function finish(): void {
    clearTimeout(timer);
    request.off('data', onData);
    request.off('end', finish);
    request.off('close', finish);
    if (!response.writableEnded) response.end();
  }
  request.on('data', onData);
  request.once('end', finish);
  request.once('close', finish);
  request.resume();
}

/** The Prometheus text, on the main port (behind a key) or the metrics address. */
export async function sendMetrics(metrics: Metrics, response: ServerResponse, headers: OutgoingHttpHeaders): Promise<void> {
  const { contentType, body } = await metrics.render();
  response.writeHead(200, { ...headers, 'content-type': contentType });
  response.end(body);
}
