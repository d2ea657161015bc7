import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { schemaErrors } from '../../test/helpers/openai-schemas.js';
import type { RequestNotes } from '../api/chat-types.js';
import { SsePings } from '../server/sse-pings.js';
import { SseWriter } from '../server/sse-writer.js';
import { replayChunks, replayCompletion, textPieces, type ReplayOptions } from './replay-reply.js';
import type { CachedReply } from './response-cache.js';

const options: ReplayOptions = { id: 'chatcmpl-replayed', created: 1_780_000_123 };

function reply(overrides: Partial<CachedReply> = {}): CachedReply {
  return {
    model: 'qwen2.5-0.5b-instruct',
    message: { role: 'assistant', content: 'The capital of France is Paris, a city on the Seine with two million people.' },
    finishReason: 'stop',
    usage: { prompt_tokens: 14, completion_tokens: 19, total_tokens: 33 },
    costUsd: 0.00002,
    createdAt: 1_780_000_000_000,
    ...overrides,
  };
}

const toolReply = reply({
  message: {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris", "unit": "celsius", "days": 3}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ],
  },
  finishReason: 'tool_calls',
});

const refusalReply = reply({
  message: { role: 'assistant', content: null, refusal: "I'm sorry, but I can't help with making anything dangerous like that." },
  finishReason: 'stop',
});

interface StreamOptions {
  notes?: RequestNotes;
  metadata?: Record<string, string>;
  includeUsage?: boolean;
}

/** What a client receives when the one SSE writer writes a replayed reply (as the handler would: one batch, then done). */
async function streamed(cached: CachedReply, streamOptions: StreamOptions = {}): Promise<string> {
  const server = createServer((_request, response) => {
    const writer = new SseWriter(response, {
      id: options.id,
      created: options.created,
      model: cached.model,
      metadata: streamOptions.metadata,
      notes: streamOptions.notes,
      includeUsage: streamOptions.includeUsage ?? false,
      pings: new SsePings(60_000),
      stallTimeoutMs: 60_000,
    });
    writer.open({});
    void writer.writeChunks(replayChunks(cached), new AbortController().signal);
    writer.done();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return await response.text();
  } finally {
    server.close();
  }
}

interface Chunk {
  id: string;
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: Record<string, unknown> & { tool_calls?: Array<Record<string, unknown>> };
    finish_reason: string | null;
    logprobs?: unknown;
  }>;
  usage?: unknown;
  system_fingerprint?: string;
  metadata?: unknown;
}

/** The stream's chunks; checks it ends with `[DONE]` and holds nothing else. */
function chunksOf(body: string): Chunk[] {
  const events = body.split('\n\n');
  expect(events.pop()).toBe('');
  expect(events.pop()).toBe('data: [DONE]');
  return events.map((event) => {
    expect(event.startsWith('data: {')).toBe(true);
    return JSON.parse(event.slice('data: '.length)) as Chunk;
  });
}

/** The message a client assembles from the chunks, as SDKs do. */
function assembled(chunks: Chunk[]) {
  let content: string | null = null;
  let refusal: string | null = null;
  let reasoning: string | undefined;
  let finishReason: string | null = null;
  const calls: Array<{ id: string; type: string; name: string; arguments: string }> = [];
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      if (typeof delta.content === 'string') content = (content ?? '') + delta.content;
      if (typeof delta.refusal === 'string') refusal = (refusal ?? '') + delta.refusal;
      if (typeof delta.reasoning_content === 'string') reasoning = (reasoning ?? '') + delta.reasoning_content;
      for (const part of delta.tool_calls ?? []) {
        const call = (calls[part.index as number] ??= { id: '', type: '', name: '', arguments: '' });
        if (typeof part.id === 'string') call.id += part.id;
        if (typeof part.type === 'string') call.type = part.type;
        const fn = (part.function ?? part.custom) as { name?: string; arguments?: string; input?: string } | undefined;
        if (fn?.name !== undefined) call.name += fn.name;
        call.arguments += fn?.arguments ?? fn?.input ?? '';
      }
      if (choice.finish_reason !== null) finishReason = choice.finish_reason;
    }
  }
  return { content, refusal, reasoning, calls, finishReason };
}

function expectValidChunks(chunks: Chunk[]): void {
  for (const chunk of chunks) expect(schemaErrors('CreateChatCompletionStreamResponse', chunk), JSON.stringify(chunk)).toBeNull();
}

describe('replayCompletion', () => {
  it('renders a text reply as the chat.completion of a live call, with the new id, created and metadata', () => {
    const cached = reply({ systemFingerprint: 'fp_1' });
    const body = replayCompletion(cached, { ...options, metadata: { team: 'search' } });
    expect(schemaErrors('CreateChatCompletionResponse', body)).toBeNull();
    // Same keys in the same order as the handler's live reply.
    expect(JSON.stringify(body)).toBe(
      JSON.stringify({
        id: 'chatcmpl-replayed',
        object: 'chat.completion',
        created: 1_780_000_123,
        model: 'qwen2.5-0.5b-instruct',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: cached.message.content, refusal: null },
            finish_reason: 'stop',
            logprobs: null,
          },
        ],
        usage: cached.usage,
        system_fingerprint: 'fp_1',
        metadata: { team: 'search' },
      }),
    );
  });

  it('renders tool calls and a refusal valid by OpenAI’s schema', () => {
    const tools = replayCompletion(toolReply, options);
    expect(schemaErrors('CreateChatCompletionResponse', tools)).toBeNull();
    expect(tools.choices[0]).toMatchObject({
      message: { content: null, refusal: null, tool_calls: toolReply.message.tool_calls },
      finish_reason: 'tool_calls',
    });
    const refused = replayCompletion(refusalReply, options);
    expect(schemaErrors('CreateChatCompletionResponse', refused)).toBeNull();
    expect(refused.choices[0]).toMatchObject({ message: { content: null, refusal: refusalReply.message.refusal } });
  });

  it('gives a reply whose engine named no finish reason the one a live reply gets', () => {
    expect(replayCompletion(reply({ finishReason: null }), options).choices[0]?.finish_reason).toBe('stop');
    expect(replayCompletion({ ...toolReply, finishReason: null }, options).choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('puts calls in the form the new request wrote: custom tools, legacy functions', () => {
    const custom = reply({
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'run_sql', arguments: '{"input":"SELECT 1"}' } }],
      },
      finishReason: 'tool_calls',
    });
    const asCustom = replayCompletion(custom, {
      ...options,
      notes: { ignoredFields: [], customTools: ['run_sql'], legacyFunctions: false },
    });
    expect(schemaErrors('CreateChatCompletionResponse', asCustom)).toBeNull();
    expect(asCustom.choices[0]).toMatchObject({
      message: { tool_calls: [{ id: 'call_c', type: 'custom', custom: { name: 'run_sql', input: 'SELECT 1' } }] },
    });
    const legacy = replayCompletion(toolReply, { ...options, notes: { ignoredFields: [], customTools: [], legacyFunctions: true } });
    expect(schemaErrors('CreateChatCompletionResponse', legacy)).toBeNull();
    expect(legacy.choices[0]).toMatchObject({ message: { function_call: { name: 'get_weather' } }, finish_reason: 'function_call' });
  });
});

describe('replayChunks, written by the SSE writer', () => {
  it('streams a role chunk, the content in pieces, the finish, and [DONE], each event with the new id, created and model', async () => {
    const cached = reply({ systemFingerprint: 'fp_1' });
    const chunks = chunksOf(await streamed(cached, { metadata: { team: 'search' } }));
    expectValidChunks(chunks);
    for (const chunk of chunks)
      expect(chunk).toMatchObject({ id: 'chatcmpl-replayed', created: 1_780_000_123, model: cached.model, system_fingerprint: 'fp_1' });
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks[0]?.metadata).toEqual({ team: 'search' });
    const contentChunks = chunks.filter(
      (chunk) => typeof chunk.choices[0]?.delta.content === 'string' && chunk.choices[0].delta.content !== '',
    );
    expect(contentChunks.length).toBeGreaterThan(3);
    expect(chunks.at(-1)?.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    // No usage chunk unless asked for.
    expect(chunks.every((chunk) => chunk.usage === undefined)).toBe(true);
    expect(assembled(chunks)).toMatchObject({ content: cached.message.content, refusal: null, finishReason: 'stop' });
  });

  it('ends with the usage chunk when stream_options.include_usage asked for it', async () => {
    const cached = reply();
    const chunks = chunksOf(await streamed(cached, { includeUsage: true }));
    expectValidChunks(chunks);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: cached.usage });
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('streams tool calls as OpenAI does: id, type and name first, then the arguments in pieces', async () => {
    const chunks = chunksOf(await streamed(toolReply));
    expectValidChunks(chunks);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: null });
    const deltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toEqual({ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } });
    const firstCallPieces = deltas.filter((delta) => delta.index === 0).slice(1);
    expect(firstCallPieces.length).toBeGreaterThan(1);
    for (const piece of firstCallPieces) expect(Object.keys(piece)).toEqual(['index', 'function']);
    const message = assembled(chunks);
    expect(message.calls).toEqual(
      toolReply.message.tool_calls?.map((call) => ({
        id: call.id,
        type: 'function',
        name: call.function.name,
        arguments: call.function.arguments,
      })),
    );
    expect(message).toMatchObject({ content: null, finishReason: 'tool_calls' });
  });

  it('streams a refusal as refusal deltas', async () => {
    const chunks = chunksOf(await streamed(refusalReply));
    expectValidChunks(chunks);
    expect(assembled(chunks)).toMatchObject({ content: null, refusal: refusalReply.message.refusal, finishReason: 'stop' });
  });

  it('streams reasoning before the content, and a reply with log probabilities whole, with them', async () => {
    const logprobs = { content: [{ token: 'Yes', logprob: -0.01, bytes: [89, 101, 115], top_logprobs: [] }], refusal: null };
    const cached = reply({
      message: { role: 'assistant', content: 'Yes', reasoning_content: 'The question is simple enough to answer at once.' },
      logprobs,
    });
    const chunks = chunksOf(await streamed(cached));
    expectValidChunks(chunks);
    const message = assembled(chunks);
    expect(message).toMatchObject({ content: 'Yes', reasoning: cached.message.reasoning_content });
    const firstContent = chunks.findIndex((chunk) => chunk.choices[0]?.delta.content === 'Yes');
    expect(chunks.findIndex((chunk) => chunk.choices[0]?.delta.reasoning_content !== undefined)).toBeLessThan(firstContent);
    expect(chunks[firstContent]?.choices[0]?.logprobs).toEqual(logprobs);
    expect(chunks.filter((chunk) => chunk.choices[0]?.logprobs !== undefined)).toHaveLength(1);
  });

  it('replays the recorded pieces of the original stream when they add up to the content, else cuts its own', () => {
    const recorded = reply({ message: { role: 'assistant', content: 'Hello there' }, contentPieces: ['Hel', '', 'lo', ' there'] });
    const contents = (cached: CachedReply) =>
      replayChunks(cached)
        .flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content))
        .filter((content) => typeof content === 'string' && content !== '');
    expect(contents(recorded)).toEqual(['Hel', 'lo', ' there']);
    expect(contents({ ...recorded, contentPieces: ['Hello', ' world'] })).toEqual(['Hello there']);
  });

  it('puts the stream in the form the new request wrote: custom tools, legacy functions', async () => {
    const custom = reply({
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_c', type: 'function', function: { name: 'run_sql', arguments: '{"input":"SELECT name FROM users WHERE id = 1"}' } },
        ],
      },
      finishReason: 'tool_calls',
    });
    const customChunks = chunksOf(
      await streamed(custom, { notes: { ignoredFields: [], customTools: ['run_sql'], legacyFunctions: false } }),
    );
    // OpenAI's published chunk schema has no custom calls (openai/openai-openapi#576): checked by hand.
    expect(assembled(customChunks).calls).toEqual([
      { id: 'call_c', type: 'custom', name: 'run_sql', arguments: 'SELECT name FROM users WHERE id = 1' },
    ]);

    const legacyChunks = chunksOf(await streamed(toolReply, { notes: { ignoredFields: [], customTools: [], legacyFunctions: true } }));
    expectValidChunks(legacyChunks);
    const functionCall = legacyChunks.map(
      (chunk) => chunk.choices[0]?.delta.function_call as { name?: string; arguments?: string } | undefined,
    );
    expect(functionCall.map((part) => part?.name ?? '').join('')).toBe('get_weather');
    expect(functionCall.map((part) => part?.arguments ?? '').join('')).toBe(toolReply.message.tool_calls?.[0]?.function.arguments);
    expect(legacyChunks.at(-1)?.choices[0]?.finish_reason).toBe('function_call');
  });

  it('streams the same message the chat.completion holds, for every kind of reply', async () => {
    for (const cached of [reply(), toolReply, refusalReply]) {
      const message = replayCompletion(cached, options).choices[0]!.message as {
        content: string | null;
        refusal: string | null;
        tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
      };
      const streamedMessage = assembled(chunksOf(await streamed(cached)));
      expect(streamedMessage.content).toBe(message.content);
      expect(streamedMessage.refusal).toBe(message.refusal);
      expect(streamedMessage.calls.map((call) => ({ id: call.id, function: { name: call.name, arguments: call.arguments } }))).toEqual(
        (message.tool_calls ?? []).map((call) => ({ id: call.id, function: call.function })),
      );
    }
  });
});

describe('textPieces', () => {
  it('cuts text into pieces that join to it, after a word once 16 characters are in, never inside a surrogate pair', () => {
    expect(textPieces('')).toEqual([]);
    expect(textPieces('The capital of France is Paris.')).toEqual(['The capital of France ', 'is Paris.']);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'b', 'é', '漢', '😀', ' ', '\n'), maxLength: 300 }), (text) => {
        const pieces = textPieces(text);
        expect(pieces.join('')).toBe(text);
        for (const piece of pieces) {
          expect(piece.length).toBeGreaterThan(0);
          expect(piece.length).toBeLessThanOrEqual(65);
          expect(piece.isWellFormed()).toBe(true);
        }
      }),
      { seed: 20_260_304, numRuns: 300 },
    );
  });
});
