/**
 * What undici's errors mean for the transport contract: whether the request
 * was sent, and which `TransportError` a failure is.
 */
import { errors } from 'undici';
import { TransportError } from './engine-transport.js';

/** Not a reply undici's parser could read, or a reply where none was asked for (`bad response`). */
export function isMalformed(error: Error, headReceived: boolean): boolean {
  const code = (error as { code?: unknown }).code;
  if (error instanceof errors.HTTPParserError) return !(headReceived && error.message.includes('EOF')); // EOF: a body cut short
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return true;
  if (error instanceof errors.SocketError) return error.message.startsWith('bad ');
  // Two content-lengths fail the parser, but undici reports them as a length mismatch before any body.
  return code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' && !headReceived;
}

export function transportErrorOf(error: Error, sent: boolean, headReceived: boolean): TransportError {
  const code = (error as { code?: unknown }).code;
  if (!sent) {
    if (code === 'UND_ERR_CONNECT_TIMEOUT')
      return new TransportError('CONNECT_TIMEOUT', `no connection to the engine: ${error.message}`, error);
    if (code === 'UND_ERR_CLOSED' || code === 'UND_ERR_DESTROYED')
      return new TransportError('CLOSED', 'the engine transport is closed', error);
    return new TransportError('CONNECT_FAILED', `could not connect to the engine: ${error.message}`, error);
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new TransportError('HEADERS_TIMEOUT', 'no reply head in time', error);
  if (code === 'UND_ERR_BODY_TIMEOUT') return new TransportError('BODY_TIMEOUT', 'no bytes of the reply in time', error);
  if (isMalformed(error, headReceived))
    return new TransportError('MALFORMED_RESPONSE', `not a valid HTTP/1.1 reply: ${error.message}`, error);
  // Once written, any other loss (closed, reset, a failed write) may come after the engine started: never a resend.
  return new TransportError(
    'CONNECTION_CLOSED',
    headReceived ? 'the engine closed the connection mid-reply' : 'the engine closed the connection before replying',
    error,
  );
}
