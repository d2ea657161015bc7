/**
 * An HTTP/1.1 response, parsed as its bytes arrive: the head (status and
 * headers, informational 1xx heads skipped), then the body framed by
 * `transfer-encoding: chunked`, `content-length`, or the end of the
 * connection. Pure: bytes in, callbacks out, no I/O (`http1-transport.ts`
 * owns the sockets). It reads what engines send (uvicorn for vLLM and SGLang,
 * cpp-httplib for llama.cpp, Go for Ollama, Node), and refuses, strictly (RFC
 * 9112), what could make two parties read one reply differently: both
 * `transfer-encoding` and `content-length`, two lengths, a folded header, a
 * field name that is not a token, a head over `maxHeadBytes`, and any byte
 * after the reply's end. No trailers are kept.
 */
import type { IncomingHttpHeaders } from 'node:http';

export interface ResponseHead {
  statusCode: number;
  /** Lower-case names; repeated fields joined with `, `. */
  headers: IncomingHttpHeaders;
  /** Whether the connection may carry another request once this body has ended. */
  keepAlive: boolean;
  /** The server's `keep-alive: timeout=N`, in ms, when it sent one. */
  keepAliveTimeoutMs: number | null;
}

export interface ResponseEvents {
  onHead(head: ResponseHead): void;
  /** A piece of the body: a view of the bytes pushed (Node gives each socket read its own memory). */
  onBody(bytes: Buffer): void;
  /** The body is complete; nothing after it belongs to this response. */
  onEnd(): void;
}

/** The bytes are not an HTTP/1.x response this parser can read. */
export class MalformedResponseError extends Error {
  readonly code = 'MALFORMED_RESPONSE';
}

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const maxHeadBytes = 64 * 1024;

type State = 'head' | 'chunk-size' | 'chunk-data' | 'chunk-data-end' | 'trailers' | 'length' | 'until-close' | 'done';

export class ResponseParser {
  private state: State = 'head';
  private pending: Buffer | null = null;
  /** Body bytes still to come: of the current chunk, or of a `content-length` body. */
  private remaining = 0;

  constructor(private readonly events: ResponseEvents) {}

  /** Whether the body has ended (framed by length or chunks). */
  get done(): boolean {
    return this.state === 'done';
  }

  /** Feeds bytes from the socket; throws MalformedResponseError (then nothing more is parsed). */
  push(bytes: Buffer): void {
    if (this.state === 'done') throw new MalformedResponseError('bytes after the end of the response');
    const data = this.pending === null ? bytes : Buffer.concat([this.pending, bytes]);
    this.pending = null;
    let offset = 0;
    while (offset < data.length && this.state !== 'done') {
      switch (this.state) {
        case 'head': {
          const end = data.indexOf(HEAD_END, offset);
          if (end === -1) {
            if (data.length - offset > maxHeadBytes) throw new MalformedResponseError(`a response head over ${maxHeadBytes} bytes`);
            this.pending = data.subarray(offset);
            return;
          }
          const head = parseHead(data.toString('latin1', offset, end));
          offset = end + HEAD_END.length;
          if (head.statusCode < 200) continue; // 100 Continue, 103 Early Hints: the real head follows
          this.state = bodyStateOf(head, this);
          this.events.onHead(head);
          break;
        }
        case 'chunk-size': {
          const end = data.indexOf(CRLF, offset);
          if (end === -1) {
            if (data.length - offset > 1024) throw new MalformedResponseError('a chunk size line over 1024 bytes');
            this.pending = data.subarray(offset);
            return;
          }
          const size = chunkSize(data, offset, end);
          offset = end + CRLF.length;
          this.remaining = size;
          this.state = size === 0 ? 'trailers' : 'chunk-data';
          break;
        }
        case 'chunk-data':
        case 'length': {
          const take = Math.min(this.remaining, data.length - offset);
          this.remaining -= take;
          const piece = data.subarray(offset, offset + take);
          offset += take;
          if (this.remaining === 0) this.state = this.state === 'length' ? 'done' : 'chunk-data-end';
          this.events.onBody(piece);
          break;
        }
        case 'chunk-data-end': {
          if (data.length - offset < CRLF.length) {
            this.pending = data.subarray(offset);
            return;
          }
          if (data[offset] !== 0x0d || data[offset + 1] !== 0x0a) throw new MalformedResponseError('a chunk not ended by CRLF');
          offset += CRLF.length;
          this.state = 'chunk-size';
          break;
        }
        case 'trailers': {
          const end = data.indexOf(CRLF, offset);
          if (end === -1) {
            if (data.length - offset > maxHeadBytes) throw new MalformedResponseError('trailers over 64 KiB');
            this.pending = data.subarray(offset);
            return;
          }
          // A trailer line is skipped; the empty line ends the body.
          const empty = end === offset;
          offset = end + CRLF.length;
          if (empty) this.state = 'done';
          break;
        }
        case 'until-close':
          this.events.onBody(offset === 0 ? data : data.subarray(offset));
          return;
      }
    }
    if (this.state !== 'done') return;
    // What follows a complete reply on the same read is no reply of ours: a
    // second reading of the stream (request smuggling) or a broken server.
    if (offset < data.length) throw new MalformedResponseError('bytes after the end of the response');
    this.events.onEnd();
  }

  /** The connection ended: completes a body that runs to the end of it; returns false when a framed body was cut short. */
  finish(): boolean {
    if (this.state === 'until-close') {
      this.state = 'done';
      this.events.onEnd();
      return true;
    }
    return this.state === 'done';
  }

  /** For `bodyStateOf`: the length of a `content-length` body. */
  expect(length: number): void {
    this.remaining = length;
  }
}

function bodyStateOf(head: ResponseHead, parser: ResponseParser): State {
  const { headers, statusCode } = head;
  if (statusCode === 204 || statusCode === 304) return 'done';
  const encoding = headers['transfer-encoding'];
  const length = headers['content-length'];
  if (encoding !== undefined && length !== undefined) throw new MalformedResponseError('both transfer-encoding and content-length');
  if (encoding !== undefined) {
    // Only `chunked` is read, and it must come last (RFC 9112, 6.1).
    if (!encoding.toLowerCase().trimEnd().endsWith('chunked'))
      throw new MalformedResponseError(`a transfer-encoding it cannot read (${encoding})`);
    return 'chunk-size';
  }
  if (length !== undefined) {
    // Two content-length fields are joined with ", " and fail here too.
    if (length.length > 15 || !isDigits(length)) throw new MalformedResponseError('a malformed or repeated content-length');
    const bytes = Number(length);
    parser.expect(bytes);
    return bytes === 0 ? 'done' : 'length';
  }
  head.keepAlive = false;
  return 'until-close';
}

/** A chunk's size line (`1a3`, maybe `1a3;name=value`), from `start` to `end` (its CRLF). */
function chunkSize(data: Buffer, start: number, end: number): number {
  let size = 0;
  let index = start;
  for (; index < end; index++) {
    const digit = hexValue(data[index] as number);
    if (digit === -1) break;
    size = size * 16 + digit;
  }
  if (index === start || index - start > 12) throw new MalformedResponseError('a malformed chunk size');
  while (index < end && (data[index] === 0x20 || data[index] === 0x09)) index++;
  if (index < end && data[index] !== 0x3b) throw new MalformedResponseError('a malformed chunk size');
  return size;
}

/** Whether `text` is one or more ASCII digits and nothing else (Number() also takes `1e3`, `0x10`, `+5` and spaces). */
function isDigits(text: string): boolean {
  if (text.length === 0) return false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}

/** Whether `text` from `start` to `end` is an RFC 9110 token (a field name). */
function isToken(text: string, start: number, end: number): boolean {
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index);
    const plain = (code >= 0x30 && code <= 0x39) || ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a);
    if (!plain && "!#$%&'*+-.^_`|~".indexOf(text[index] as string) === -1) return false;
  }
  return true;
}

/** Whether a field value holds no control character but tab (a bare LF or CR would end the line for another reader). */
function isFieldValue(value: string): boolean {
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return false;
  }
  return true;
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/** The head's text, without its final empty line: a scan by lines, no regular expressions (they are slow on cold caches). */
function parseHead(text: string): ResponseHead {
  const lineEnd = text.indexOf('\r\n');
  const statusLine = lineEnd === -1 ? text : text.slice(0, lineEnd);
  const statusText = statusLine.slice(9, 12);
  const statusCode = Number(statusText);
  if (
    !statusLine.startsWith('HTTP/1.') ||
    (statusLine[7] !== '0' && statusLine[7] !== '1') ||
    statusLine[8] !== ' ' ||
    statusText.length !== 3 ||
    !isDigits(statusText) ||
    statusCode < 100 ||
    (statusLine.length > 12 && statusLine[12] !== ' ')
  ) {
    throw new MalformedResponseError('a status line that is not HTTP/1.x');
  }
  const headers: IncomingHttpHeaders = {};
  for (let start = lineEnd === -1 ? text.length : lineEnd + 2; start < text.length;) {
    const end = text.indexOf('\r\n', start);
    const stop = end === -1 ? text.length : end;
    const colon = text.indexOf(':', start);
    if (colon <= start || colon > stop) throw new MalformedResponseError('a malformed header line');
    // A line that starts with a space or tab continues the one before (obs-fold): refused, as is a name with a space before its colon.
    if (!isToken(text, start, colon))
      throw new MalformedResponseError(
        text.charCodeAt(start) === 0x20 || text.charCodeAt(start) === 0x09 ? 'a folded header line' : 'a malformed header name',
      );
    const name = text.slice(start, colon).toLowerCase();
    const value = text.slice(colon + 1, stop).trim();
    if (!isFieldValue(value)) throw new MalformedResponseError('a header value with a control character');
    const before = headers[name];
    (headers as Record<string, string>)[name] = before === undefined ? value : `${String(before)}, ${value}`;
    start = stop + 2;
  }
  const connection = headers.connection?.toLowerCase() ?? '';
  const keepAlive = statusLine[7] === '1' ? !connection.includes('close') : connection.includes('keep-alive');
  return { statusCode, headers, keepAlive, keepAliveTimeoutMs: keepAliveTimeoutOf(headers['keep-alive']) };
}

/** `keep-alive: timeout=5, max=100` -> 5000. */
function keepAliveTimeoutOf(value: string | string[] | undefined): number | null {
  if (typeof value !== 'string') return null;
  const at = value.toLowerCase().indexOf('timeout=');
  if (at === -1) return null;
  const seconds = Number.parseInt(value.slice(at + 8), 10);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
}
