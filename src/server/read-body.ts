/**
 * Reads a JSON request body within a byte limit and a time limit. A declared
 * length over the limit is refused before a byte is read; an undeclared
 * (chunked) body is refused as soon as it crosses the limit, so no oversized
 * body is buffered. A body still arriving after `timeoutMs` (a client sending
 * it a byte at a time) is a 408.
 */
import type { IncomingMessage } from 'node:http';
import { ClientAbortError, PayloadTooLargeError, RequestTimeoutError, UnsupportedMediaTypeError } from '../api/errors.js';
import { bufferedBody } from '../fast-path/buffered-body.js';

export interface BodyLimits {
  maxBytes: number;
  /** 0 for no time limit. */
  timeoutMs: number;
}

export function checkJsonContentType(request: IncomingMessage): void {
  const type = request.headers['content-type'];
  if (type === undefined) throw new UnsupportedMediaTypeError(undefined);
  const semicolon = type.indexOf(';');
  const media = (semicolon === -1 ? type : type.slice(0, semicolon)).trim().toLowerCase();
  if (media !== 'application/json') throw new UnsupportedMediaTypeError(type);
}

/** Whether bytes of the request's body are yet to be received. A request without a body may not be marked complete yet. */
export function bodyStillArriving(request: IncomingMessage): boolean {
  if (request.complete) return false;
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The body as text, after checking it is declared JSON; the text itself when it is already in (see `readBody`). */
export function readJsonBody(request: IncomingMessage, limits: BodyLimits): string | Promise<string> {
  checkJsonContentType(request);
  return readBody(request, limits);
}

/**
 * The body as text: the text itself when the whole body is already buffered
 * (the usual case, so the caller goes on without a tick), else a promise.
 */
export function readBody(request: IncomingMessage, limits: BodyLimits): string | Promise<string> {
  const { maxBytes } = limits;
  const declaredHeader = request.headers['content-length'];
  const declared = declaredHeader === undefined ? -1 : Number(declaredHeader);
  if (declared > maxBytes) return Promise.reject(new PayloadTooLargeError(maxBytes));
  // A body that came with its head is usually buffered whole by now: taken at once (fast-path/buffered-body.ts).
  return bufferedBody(request) ?? readBodyByEvents(request, limits);
}

/** The body as text through its 'data' and 'end' events: the plain way, and `bufferedBody`'s reference. */
export function readBodyByEvents(request: IncomingMessage, limits: BodyLimits): Promise<string> {
  const { maxBytes, timeoutMs } = limits;
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const timer = timeoutMs > 0 ? setTimeout(() => stop(new RequestTimeoutError(timeoutMs)), timeoutMs) : null;
    function onData(part: Buffer): void {
      size += part.length;
      if (size > maxBytes) stop(new PayloadTooLargeError(maxBytes));
      else parts.push(part);
    }
    function onEnd(): void {
      cleanUp();
      resolve(parts.length === 1 ? (parts[0] as Buffer).toString('utf8') : Buffer.concat(parts, size).toString('utf8'));
    }
    function onClose(): void {
      cleanUp();
      reject(new ClientAbortError());
    }
    function stop(error: Error): void {
      cleanUp();
      request.pause();
      reject(error);
    }
    function cleanUp(): void {
      if (timer !== null) clearTimeout(timer);
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('close', onClose);
      request.off('error', onClose);
    }
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('close', onClose);
    request.on('error', onClose);
  });
}
