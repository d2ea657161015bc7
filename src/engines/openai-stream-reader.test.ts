import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../api/errors.js';
import type { EngineChunk } from './engine.js';
import { OpenAIStreamReader } from './openai-stream-reader.js';
import { StreamWatch } from './stream-watch.js';

const watches: StreamWatch[] = [];
afterEach(() => {
  for (const watch of watches.splice(0)) watch.stop();
});

function readerOf(): OpenAIStreamReader {
  const watch = new StreamWatch({ cancel: () => {} }, 'e', 60_000, 60_000, 60_000, 60_000);
  watches.push(watch);
  return new OpenAIStreamReader('e', watch);
}

const event = (content: string, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: finish }] })}\n\n`;
const texts = (batch: EngineChunk[]): string[] => batch.map((chunk) => chunk.choices[0]?.delta.content ?? '');

describe('OpenAIStreamReader', () => {
  it('gives one batch per read, whatever the reads cut, and ends cleanly after [DONE]', () => {
    const body = Buffer.from(`${event('Grüße ')}${event('😀', 'stop')}data: [DONE]\n\n`);
    for (const size of [1, 3, 7, body.length]) {
      const reader = readerOf();
      const seen: string[] = [];
      for (let offset = 0; offset < body.length; offset += size) {
        reader.push([body.subarray(offset, offset + size)]);
        seen.push(...texts(reader.batch()));
      }
      reader.push(null);
      expect(reader.batch()).toEqual([]);
      expect(seen).toEqual(['Grüße ', '😀']);
      expect(reader.sawDone).toBe(true);
      expect(() => reader.checkEnd()).not.toThrow();
    }
  });

  it('joins the buffers of one read and ignores events after [DONE]', () => {
    const reader = readerOf();
    reader.push([Buffer.from(event('a').slice(0, 10)), Buffer.from(event('a').slice(10)), Buffer.from(`data: [DONE]\n\n${event('late')}`)]);
    expect(texts(reader.batch())).toEqual(['a']);
  });

  it('keeps an event that fails to parse for after the batch before it', () => {
    const reader = readerOf();
    reader.push([Buffer.from(`${event('a')}data: {not json\n\n${event('b')}`)]);
    expect(texts(reader.batch())).toEqual(['a']);
    expect(reader.failure?.error).toBeInstanceOf(EngineError);
  });

  it('takes a body that ends without [DONE] once every choice has finished, and calls anything else truncated or empty', () => {
    const finished = readerOf();
    finished.push([Buffer.from(event('a', 'stop'))]);
    finished.push(null);
    finished.batch();
    expect(() => finished.checkEnd()).not.toThrow();
    const truncated = readerOf();
    truncated.push([Buffer.from(event('a'))]);
    truncated.push(null);
    truncated.batch();
    expect(() => truncated.checkEnd()).toThrow(expect.objectContaining({ code: 'engine_stream_truncated' }) as Error);
    const empty = readerOf();
    empty.push([Buffer.from(': ping\n\n')]);
    empty.push(null);
    empty.batch();
    expect(() => empty.checkEnd()).toThrow(expect.objectContaining({ code: 'engine_bad_reply' }) as Error);
  });
});
