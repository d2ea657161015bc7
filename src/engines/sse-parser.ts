/**
 * The one server-sent-events parser (STYLE: parse SSE once). It turns the
 * bytes of an upstream response into the `data` payload of each event, as
 * specified by the WHATWG event-stream format, with the leniency real servers
 * need:
 *   - lines end in `\n`, `\r\n` or a lone `\r`; a `\r\n` split across two
 *     network chunks still counts as one line end;
 *   - multibyte UTF-8 split across chunks is decoded correctly (Node's
 *     StringDecoder, which holds an incomplete character back: 15 times
 *     faster than TextDecoder with `stream: true` on a stream's 5 KB), and
 *     a leading BOM is dropped;
 *   - several `data:` lines in one event are joined with `\n`;
 *   - comments (`: ping`) and the `event`, `id` and `retry` fields are ignored:
 *     no OpenAI-compatible server puts anything we need there;
 *   - an event still open when the stream ends is delivered rather than
 *     dropped (browsers drop it), so a server that omits the final blank line
 *     after `data: [DONE]` still ends cleanly. A truncated JSON payload then
 *     fails to parse in the caller, which is an error either way.
 */

import { StringDecoder } from 'node:string_decoder';

/**
 * The decoder, without an async generator: the openai engine drives it from
 * its own read loop (`openai-stream-reader.ts`), which saves an
 * async-generator hop per event on the hot path. Bytes go in with `push`;
 * complete events come out of `nextEvent`, each the `data` payload of an
 * event that has one, in order. Lines are found with `indexOf`, never by
 * walking characters in JavaScript.
 */
export class ServerSentEventDecoder {
  private readonly textDecoder = new StringDecoder('utf8');
  /** Nothing decoded yet: a byte-order mark would come now. */
  private atStart = true;
  /** Unparsed text; `position` marks how much of it has been consumed. */
  private buffer = '';
  private position = 0;
  /** Where the next `\r` at or after `position` is, or -1: found once per push, not once per line. */
  private carriageReturnAt = -1;
  /** The current event's data so far; null until its first `data` line. */
  private data: string | null = null;
  /** The previous text ended in `\r`: a `\n` starting the next one is part of that line end. */
  private skipLeadingLineFeed = false;
  private ended = false;

  push(bytes: Uint8Array): void {
    this.pushText(this.textDecoder.write(bytes));
  }

  /** No more bytes will come: the last line needs no line end. */
  end(): void {
    this.pushText(this.textDecoder.end());
    this.ended = true;
  }

  private pushText(text: string): void {
    if (text.length === 0) return;
    if (this.atStart) {
      this.atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.length === 0) return;
    }
    if (this.skipLeadingLineFeed) {
      this.skipLeadingLineFeed = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    this.buffer = this.position < this.buffer.length ? this.buffer.slice(this.position) + text : text;
    this.position = 0;
    this.carriageReturnAt = this.buffer.indexOf('\r');
  }

  /** The data of the next complete event, or null when more text is needed. */
  nextEvent(): string | null {
    const buffer = this.buffer;
    for (;;) {
      const start = this.position;
      let lineEnd = buffer.indexOf('\n', start);
      // A lone `\r` also ends a line. Its position is cached so a `\n`-only
      // stream (the usual case) costs one indexOf per line, not a rescan.
      if (this.carriageReturnAt !== -1 && this.carriageReturnAt < start) {
        this.carriageReturnAt = buffer.indexOf('\r', start);
      }
      const carriageReturn = this.carriageReturnAt;
      let next: number;
      if (carriageReturn !== -1 && (lineEnd === -1 || carriageReturn < lineEnd)) {
        lineEnd = carriageReturn;
        if (carriageReturn + 1 < buffer.length) {
          next = buffer.charCodeAt(carriageReturn + 1) === 10 ? carriageReturn + 2 : carriageReturn + 1;
        } else {
          // `\r` is the last character seen: its `\n` may be in the next push.
          next = carriageReturn + 1;
          this.skipLeadingLineFeed = !this.ended;
        }
      } else if (lineEnd !== -1) {
        next = lineEnd + 1;
      } else {
        if (!this.ended) return null;
        // End of stream: the unterminated last line, then the open event.
        if (start < buffer.length) {
          this.position = buffer.length;
          this.takeLine(buffer, start, buffer.length);
        }
        return this.dispatch();
      }
      this.position = next;
      if (lineEnd === start) {
        const data = this.dispatch();
        if (data !== null) return data;
      } else {
        this.takeLine(buffer, start, lineEnd);
      }
    }
  }

  private takeLine(buffer: string, start: number, end: number): void {
    // `data:` is by far the most common line; test it before anything else.
    if (buffer.startsWith('data:', start)) {
      const valueStart = buffer.charCodeAt(start + 5) === 32 ? start + 6 : start + 5;
      const value = buffer.slice(valueStart, end);
      this.data = this.data === null ? value : `${this.data}\n${value}`;
      return;
    }
    if (buffer.charCodeAt(start) === 58) return; // `:` starts a comment (keep-alive pings)
    // A field named exactly `data` with no colon is an empty data line.
    if (end - start === 4 && buffer.startsWith('data', start)) this.data = this.data === null ? '' : `${this.data}\n`;
    // Other fields (event, id, retry) carry nothing an OpenAI-compatible stream needs.
  }

  private dispatch(): string | null {
    const data = this.data;
    this.data = null;
    return data;
  }
}
