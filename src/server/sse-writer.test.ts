import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { EngineChunk } from '../engines/engine.js';
import { SsePings } from './sse-pings.js';
import { SseWriter } from './sse-writer.js';

/**
 * What a client gets when one writer writes these chunks (as one batch) and
 * ends, and the bytes still held in the socket right after the batch was
 * written (synchronously).
 */
async function serveChunks(chunks: EngineChunk[]): Promise<{ held: number; body: string }> {
  let held = -1;
  const server = createServer((_request, response) => {
    const writer = new SseWriter(response, {
      id: 'chatcmpl-1',
      created: 7,
      model: 'm',
      includeUsage: false,
      pings: new SsePings(60_000),
      stallTimeoutMs: 60_000,
    });
    writer.open({});
    void writer.writeChunks(chunks, new AbortController().signal);
    held = response.socket?.writableLength ?? -1;
    writer.done();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return { held, body: await response.text() };
  } finally {
    server.close();
  }
}

/** The body a client receives when one writer writes these chunks (as one batch) and ends. */
async function bodyOf(chunks: EngineChunk[]): Promise<string> {
  return (await serveChunks(chunks)).body;
}

const content = (text: string): EngineChunk => ({
  choices: [{ index: 0, delta: { content: text }, finish_reason: null, logprobs: undefined }],
});

describe('SseWriter', () => {
  it("writes each chunk as one event with the gateway's id, created and model, the first with its role, then [DONE]", async () => {
    const chunks = [content('Hello'), content(' world'), { choices: [{ index: 0, delta: {}, finish_reason: 'stop' as const }] }];
    expect(await bodyOf(chunks)).toBe(
      'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}\n\n' +
        'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":null}]}\n\n' +
        'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
        'data: [DONE]\n\n',
    );
  });
});

describe('SseWriter timing', () => {
  it('sends the head and the first events at once, without waiting for the end of the tick', async () => {
    const { held, body } = await serveChunks([content('Hello')]);
    expect(held).toBe(0);
    expect(body.endsWith('"finish_reason":null}]}\n\ndata: [DONE]\n\n')).toBe(true);
  });

  it('holds a first batch that ends the reply, so [DONE] and the end of the body leave in the same write', async () => {
    const { held, body } = await serveChunks([content('Hello'), { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }]);
    expect(held).toBeGreaterThan(0);
    expect(body.endsWith('"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')).toBe(true);
  });
});
