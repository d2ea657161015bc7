import { describe, expect, it } from 'vitest';
import { ServerSentEventDecoder } from './sse-parser.js';

const encoder = new TextEncoder();

/**
 * The events of a body read in these pieces, with the decoder driven as
 * `OpenAIStreamReader` drives it: one `push` per read, every complete event
 * taken after it, then `end` and the events it completes.
 */
function events(...pieces: Array<string | Uint8Array>): string[] {
  const decoder = new ServerSentEventDecoder();
  const result: string[] = [];
  for (const piece of pieces) {
    decoder.push(typeof piece === 'string' ? Buffer.from(piece) : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength));
    for (let data = decoder.nextEvent(); data !== null; data = decoder.nextEvent()) result.push(data);
  }
  decoder.end();
  for (let data = decoder.nextEvent(); data !== null; data = decoder.nextEvent()) result.push(data);
  return result;
}

/** Every way of cutting `text` into `size`-byte pieces must give the same events. */
function eventsInPiecesOf(text: string, size: number): string[] {
  const bytes = encoder.encode(text);
  const pieces: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) pieces.push(bytes.subarray(offset, offset + size));
  return events(...pieces);
}

describe('ServerSentEventDecoder', () => {
  it('yields the data of each event', () => {
    expect(events('data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n')).toEqual(['{"a":1}', '{"b":2}', '[DONE]']);
  });

  it('handles \\r\\n, a lone \\r, and \\r\\n split across chunks', () => {
    expect(events('data: one\r\n\r\ndata: two\r\rdata: three\r', '\n\r', '\n')).toEqual(['one', 'two', 'three']);
  });

  it('joins multi-line data with \\n and keeps a value without the optional space', () => {
    expect(events('data: first\ndata:second\ndata\n\n')).toEqual(['first\nsecond\n']);
  });

  it('skips comments, other fields and events without data', () => {
    expect(events(': ping\n\nevent: message\nid: 7\nretry: 100\ndata: x\n\nevent: empty\n\n: bye\n\n')).toEqual(['x']);
  });

  it('reassembles events and multibyte UTF-8 split at every byte boundary', () => {
    const text = 'data: {"content":"très 🗼 ok"}\r\n\r\ndata: {"content":"日本語"}\n\n: ping\n\ndata: [DONE]\n\n';
    const expected = ['{"content":"très 🗼 ok"}', '{"content":"日本語"}', '[DONE]'];
    for (const size of [1, 2, 3, 5, 7, 64]) expect(eventsInPiecesOf(text, size)).toEqual(expected);
  });

  it('delivers an event left open when the stream ends, and drops a leading BOM', () => {
    expect(events('\uFEFFdata: a\n\ndata: [DONE]')).toEqual(['a', '[DONE]']);
    expect(events('data: a\n')).toEqual(['a']);
    expect(events('')).toEqual([]);
  });

  it('keeps colons inside values', () => {
    expect(events('data: {"url":"http://x:1"}\n\n')).toEqual(['{"url":"http://x:1"}']);
  });

  it('parses many events in one chunk in linear time', () => {
    const event = `data: ${JSON.stringify({ choices: [{ delta: { content: 'token ' } }] })}\n\n`;
    const started = performance.now();
    const result = events(event.repeat(20_000));
    expect(result).toHaveLength(20_000);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
