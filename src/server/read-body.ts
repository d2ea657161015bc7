/**
 * Reads a JSON request body up to a byte limit. A declared length over the
 * limit is refused before a byte is read; an undeclared (chunked) body is
 * refused as soon as it crosses the limit, so no oversized body is buffered.
 */
import type { IncomingMessage } from 'node:http';
import { ClientAbortError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../api/errors.js';

export function checkJsonContentType(request: IncomingMessage): void {
  const type = request.headers['content-type'];
  if (type === undefined) throw new UnsupportedMediaTypeError(undefined);
  const semicolon = type.indexOf(';');
  const media = (semicolon === -1 ? type : type.slice(0, semicolon)).trim().toLowerCase();
  if (media !== 'application/json') throw new UnsupportedMediaTypeError(type);
}

export function readBody(request: IncomingMessage, limitBytes: number): Promise<string> {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limitBytes) return Promise.reject(new PayloadTooLargeError(limitBytes));

  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    function onData(part: Buffer): void {
      size += part.length;
      if (size > limitBytes) {
        cleanUp();
        request.pause();
        reject(new PayloadTooLargeError(limitBytes));
        return;
      }
      parts.push(part);
    }
    function onEnd(): void {
      cleanUp();
      resolve(parts.length === 1 ? (parts[0] as Buffer).toString('utf8') : Buffer.concat(parts, size).toString('utf8'));
    }
    function onClose(): void {
      cleanUp();
      reject(new ClientAbortError());
    }
    function cleanUp(): void {
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
