import { describe, expect, it } from 'vitest';
import { parseServerSentEvents } from './sse-parser.js';

const encoder = new TextEncoder();

async function* chunksOf(...pieces: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) yield typeof piece === 'string' ? encoder.encode(piece) : piece;
}

async function events(...pieces: Array<string | Uint8Array>): Promise<string[]> {
  const result: string[] = [];
  for await (const data of parseServerSentEvents(chunksOf(...pieces))) result.push(data);
  return result;
}

/** Every way of cutting `text` into `size`-byte pieces must give the same events. */
async function eventsInPiecesOf(text: string, size: number): Promise<string[]> {
  const bytes = encoder.encode(text);
  const pieces: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) pieces.push(bytes.subarray(offset, offset + size));
  return events(...pieces);
}

describe('parseServerSentEvents', () => {
  it('yields the data of each event', async () => {
    expect(await events('data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n')).toEqual(['{"a":1}', '{"b":2}', '[DONE]']);
  });

  it('handles \\r\\n, a lone \\r, and \\r\\n split across chunks', async () => {
    expect(await events('data: one\r\n\r\ndata: two\r\rdata: three\r', '\n\r', '\n')).toEqual(['one', 'two', 'three']);
  });

  it('joins multi-line data with \\n and keeps a value without the optional space', async () => {
    expect(await events('data: first\ndata:second\ndata\n\n')).toEqual(['first\nsecond\n']);
  });

  it('skips comments, other fields and events without data', async () => {
    expect(await events(': ping\n\nevent: message\nid: 7\nretry: 100\ndata: x\n\nevent: empty\n\n: bye\n\n')).toEqual(['x']);
  });

  it('reassembles events and multibyte UTF-8 split at every byte boundary', async () => {
    const text = 'data: {"content":"très 🗼 ok"}\r\n\r\ndata: {"content":"日本語"}\n\n: ping\n\ndata: [DONE]\n\n';
    const expected = ['{"content":"très 🗼 ok"}', '{"content":"日本語"}', '[DONE]'];
    for (const size of [1, 2, 3, 5, 7, 64]) expect(await eventsInPiecesOf(text, size)).toEqual(expected);
  });

  it('delivers an event left open when the stream ends, and drops a leading BOM', async () => {
    expect(await events('\uFEFFdata: a\n\ndata: [DONE]')).toEqual(['a', '[DONE]']);
    expect(await events('data: a\n')).toEqual(['a']);
    expect(await events('')).toEqual([]);
  });

  it('keeps colons inside values', async () => {
    expect(await events('data: {"url":"http://x:1"}\n\n')).toEqual(['{"url":"http://x:1"}']);
  });

  it('parses many events in one chunk in linear time', async () => {
    const event = `data: ${JSON.stringify({ choices: [{ delta: { content: 'token ' } }] })}\n\n`;
    const started = performance.now();
    const result = await events(event.repeat(20_000));
    expect(result).toHaveLength(20_000);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
