import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MalformedResponseError, ResponseParser, type ResponseHead } from './http1-response-parser.js';

interface Parsed {
  heads: ResponseHead[];
  body: string;
  ends: number;
  parser: ResponseParser;
}

/** Feeds `pieces` in order; collects what the parser reports. */
function parse(...pieces: string[]): Parsed {
  const parsed: Parsed = { heads: [], body: '', ends: 0, parser: undefined as unknown as ResponseParser };
  const parts: Buffer[] = [];
  parsed.parser = new ResponseParser({
    onHead: (head) => parsed.heads.push(head),
    onBody: (bytes) => parts.push(Buffer.from(bytes)),
    onEnd: () => (parsed.ends += 1),
  });
  for (const piece of pieces) parsed.parser.push(Buffer.from(piece, 'utf8'));
  parsed.body = Buffer.concat(parts).toString('utf8');
  return parsed;
}

/** One chunk of chunked encoding. */
const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

const sseStream =
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\nkeep-alive: timeout=5\r\n\r\n' +
  chunk('data: {"a":"héllo wörld"}\n\n') +
  chunk('data: [DONE]\n\n') +
  '0\r\n\r\n';

describe('ResponseParser', () => {
  it('reads a chunked stream: head, body, end, keep-alive and its hint', () => {
    const { heads, body, ends } = parse(sseStream);
    expect(heads).toHaveLength(1);
    expect(heads[0]).toMatchObject({ statusCode: 200, keepAlive: true, keepAliveTimeoutMs: 5_000 });
    expect(heads[0]?.headers['content-type']).toBe('text/event-stream');
    expect(body).toBe('data: {"a":"héllo wörld"}\n\ndata: [DONE]\n\n');
    expect(ends).toBe(1);
  });

  it('reads the same whatever the reads are cut at (bytes, lines, UTF-8 characters)', () => {
    const bytes = Buffer.from(sseStream, 'utf8');
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), (cuts) => {
        const at = [0, ...cuts.sort((a, b) => a - b), bytes.length];
        const parts: Buffer[] = [];
        let ends = 0;
        const parser = new ResponseParser({
          onHead: () => undefined,
          onBody: (piece) => parts.push(Buffer.from(piece)),
          onEnd: () => (ends += 1),
        });
        for (let index = 1; index < at.length; index++) parser.push(bytes.subarray(at[index - 1], at[index]));
        expect(Buffer.concat(parts).toString('utf8')).toBe('data: {"a":"héllo wörld"}\n\ndata: [DONE]\n\n');
        expect(ends).toBe(1);
      }),
    );
  });

  it('reads a content-length body and stops at its end', () => {
    const { heads, body, ends, parser } = parse('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel', 'lo');
    expect(heads[0]?.statusCode).toBe(200);
    expect(body).toBe('hello');
    expect(ends).toBe(1);
    expect(parser.done).toBe(true);
  });

  it('skips informational heads (100 Continue, 103) before the real one', () => {
    const { heads, body } = parse(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok',
    );
    expect(heads.map((head) => head.statusCode)).toEqual([201]);
    expect(body).toBe('ok');
  });

  it('has no body for 204 and a zero length', () => {
    expect(parse('HTTP/1.1 204 No Content\r\n\r\n').ends).toBe(1);
    expect(parse('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n').ends).toBe(1);
  });

  it('reads a body without length to the end of the connection, and that connection is not kept', () => {
    const parsed = parse('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"a":', '1}');
    expect(parsed.heads[0]?.keepAlive).toBe(false);
    expect(parsed.body).toBe('{"a":1}');
    expect(parsed.ends).toBe(0);
    expect(parsed.parser.finish()).toBe(true);
    expect(parsed.ends).toBe(1);
  });

  it('reports a framed body cut short by the connection', () => {
    expect(parse('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhel').parser.finish()).toBe(false);
    expect(parse('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel').parser.finish()).toBe(false);
  });

  it('keeps the connection as HTTP/1.1 and 1.0 say, and joins repeated fields', () => {
    expect(parse('HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 0\r\n\r\n').heads[0]?.keepAlive).toBe(false);
    expect(parse('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n').heads[0]?.keepAlive).toBe(false);
    expect(parse('HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n').heads[0]?.keepAlive).toBe(true);
    expect(parse('HTTP/1.1 200 OK\r\nx-a: 1\r\nX-A: 2\r\ncontent-length: 0\r\n\r\n').heads[0]?.headers['x-a']).toBe('1, 2');
  });

  it('skips chunk extensions and trailers', () => {
    const { body, ends } = parse('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3;name=value\r\nabc\r\n0\r\nx-checksum: 1\r\n\r\n');
    expect(body).toBe('abc');
    expect(ends).toBe(1);
  });

  it('refuses what is not an HTTP/1.x response it can read', () => {
    expect(() => parse('SSH-2.0-OpenSSH\r\n\r\n')).toThrow(MalformedResponseError);
    expect(() => parse('HTTP/1.1 200 OK\r\nno colon here\r\n\r\n')).toThrow(MalformedResponseError);
    expect(() => parse('HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n')).toThrow(MalformedResponseError);
    expect(() => parse('HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n')).toThrow(MalformedResponseError);
    for (const length of ['1e3', '0x10', '+5', '5 5', ''])
      expect(() => parse(`HTTP/1.1 200 OK\r\ncontent-length: ${length}\r\n\r\n`)).toThrow(MalformedResponseError);
    expect(() => parse('HTTP/1.1 1e2 OK\r\ncontent-length: 0\r\n\r\n')).toThrow(MalformedResponseError);
    expect(() => parse('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n')).toThrow(MalformedResponseError);
    expect(() => parse('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nabc')).toThrow(MalformedResponseError);
    expect(() => parse(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(70_000)}`)).toThrow(MalformedResponseError);
  });

  it('refuses what two readers could frame differently (RFC 9112): both framings, two lengths, folds, odd names and values', () => {
    const refused = [
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 2\r\n\r\nok',
      'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok',
      'HTTP/1.1 200 OK\r\nx-a: 1\r\n  x-b: 2\r\ncontent-length: 0\r\n\r\n',
      'HTTP/1.1 200 OK\r\nx-a: 1\r\n\tcontinued\r\ncontent-length: 0\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length : 0\r\n\r\n',
      'HTTP/1.1 200 OK\r\nx-a: one\ntwo\r\ncontent-length: 0\r\n\r\n',
      'HTTP/1.1 2000 OK\r\ncontent-length: 0\r\n\r\n',
      'HTTP/2 200\r\ncontent-length: 0\r\n\r\n',
      'HTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n',
    ];
    for (const reply of refused) expect(() => parse(reply), JSON.stringify(reply)).toThrow(MalformedResponseError);
  });

  it('refuses bytes after a complete reply, in the same read or a later one, before reporting its end', () => {
    const sameRead = parse.bind(null, 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n');
    expect(sameRead).toThrow(MalformedResponseError);
    let ends = 0;
    const parser = new ResponseParser({ onHead: () => undefined, onBody: () => undefined, onEnd: () => (ends += 1) });
    expect(() => parser.push(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\nX'))).toThrow(
      MalformedResponseError,
    );
    expect(ends).toBe(0);
    const complete = parse('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    expect(() => complete.parser.push(Buffer.from('x'))).toThrow(MalformedResponseError);
  });
});
