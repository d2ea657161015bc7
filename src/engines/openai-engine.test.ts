import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientAbortError,
  EngineError,
  EngineTimeoutError,
  EngineUnavailableError,
  GatewayError,
  InvalidRequestError,
} from '../api/errors.js';
import { createLogger, silentLogger } from '../log/logger.js';
import { startScriptedEngine, type ScriptedEngine } from '../../test/helpers/scripted-engine.js';
import type { Engine, EngineChunk, EngineRequest } from './engine.js';
import { createOpenAIEngine, type OpenAIEngineOptions } from './openai-engine.js';
import type { TransportKind } from './transport/engine-transport.js';

const fixtureDirectory = new URL('../../test/helpers/chunk-fixtures/', import.meta.url);
const fixture = (name: string): Buffer => readFileSync(new URL(`${name}.chunks.txt`, fixtureDirectory));

let scripted: ScriptedEngine;
let engine: Engine;
const opened: Engine[] = [];
/** Every case runs over both transports (`engine-transport.ts`). */
let transport: TransportKind = 'http1';

function openEngine(overrides: Partial<OpenAIEngineOptions> = {}, logger = silentLogger): Engine {
  const created = createOpenAIEngine(
    {
      id: 'gpu-test',
      baseUrl: scripted.baseUrl,
      maxConcurrency: 4,
      connectTimeoutMs: 1_000,
      firstByteTimeoutMs: 2_000,
      idleTimeoutMs: 2_000,
      transport,
      ...overrides,
    },
    logger,
  );
  opened.push(created);
  return created;
}

const request = (text = 'hello there friend'): EngineRequest => ({
  model: 'Qwen/Qwen2.5-7B-Instruct',
  messages: [{ role: 'user', content: text }],
});
const live = (): AbortSignal => new AbortController().signal;

async function collect(stream: AsyncIterable<EngineChunk[]>): Promise<EngineChunk[]> {
  const chunks: EngineChunk[] = [];
  for await (const batch of stream) chunks.push(...batch);
  return chunks;
}

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a failure');
}

const contentOf = (chunks: EngineChunk[]): string => chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
const reasoningOf = (chunks: EngineChunk[]): string => chunks.map((chunk) => chunk.choices[0]?.delta.reasoning_content ?? '').join('');

/** Serves a fixture's bytes in pieces of `size` bytes, splitting events, lines and UTF-8 characters. */
function serveFixture(name: string, size = 4096, transform: (text: string) => string = (text) => text): void {
  const bytes = Buffer.from(transform(fixture(name).toString('utf8')), 'utf8');
  const pieces: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) pieces.push(bytes.subarray(offset, offset + size));
  scripted.scriptNext({ kind: 'raw', pieces, gapMs: size < 100 ? 0 : 1 });
}

beforeAll(async () => {
  scripted = await startScriptedEngine({ name: 'gpu-test' });
});
afterAll(async () => {
  await scripted.close();
});
afterEach(async () => {
  scripted.script({ kind: 'reply' });
  await Promise.all(opened.splice(0).map((item) => item.close()));
});

describe.each(['http1', 'undici'] as const)('over the %s transport', (kind) => {
  beforeAll(() => {
    transport = kind;
  });

  describe('complete', () => {
    it('returns the reply with usage and sends a clean non-streaming body', async () => {
      engine = openEngine({ apiKey: 'secret-key', headers: { 'x-team': 'infra' } });
      const before = scripted.requests.length;
      const extra = { ...request('hello there friend'), task: 'leak', metadata: { a: 'b' }, stream: true } as EngineRequest;
      const completion = await engine.complete(extra, live());
      expect(completion.choices).toEqual([
        { index: 0, message: { role: 'assistant', content: 'echo: hello there friend' }, finish_reason: 'stop', logprobs: undefined },
      ]);
      expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
      const sent = scripted.requests[before]!;
      expect(sent.body).toEqual({
        model: 'Qwen/Qwen2.5-7B-Instruct',
        messages: [{ role: 'user', content: 'hello there friend' }],
        stream: false,
      });
      expect(sent.headers.authorization).toBe('Bearer secret-key');
      expect(sent.headers['x-team']).toBe('infra');
    });

    it('maps developer messages to system and passes parameters through', async () => {
      engine = openEngine();
      const before = scripted.requests.length;
      const messages = [
        { role: 'developer' as const, content: 'be brief' },
        { role: 'user' as const, content: 'hi' },
      ];
      await engine.complete({ model: 'm', messages, temperature: 0.2, top_k: 5, stop: ['\n'] }, live());
      expect(scripted.requests[before]!.body).toMatchObject({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hi' },
        ],
        temperature: 0.2,
        top_k: 5,
        stop: ['\n'],
      });
      expect(messages[0]!.role).toBe('developer');
    });

    it('returns tool calls and reasoning', async () => {
      engine = openEngine();
      const toolCall = { id: 'call_1', type: 'function' as const, function: { name: 'lookup', arguments: '{"q":"x"}' } };
      scripted.scriptNext({ kind: 'reply', toolCalls: [toolCall], reasoning: 'thinking' });
      const completion = await engine.complete(request(), live());
      expect(completion.choices[0]).toMatchObject({
        message: { content: null, tool_calls: [toolCall], reasoning_content: 'thinking' },
        finish_reason: 'tool_calls',
      });
    });
  });

  describe('stream', () => {
    it('streams role, content, finish and a usage chunk, asking for usage', async () => {
      engine = openEngine();
      const before = scripted.requests.length;
      const chunks = await collect(engine.stream(request('one two'), live()));
      expect(scripted.requests[before]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      expect(contentOf(chunks)).toBe('echo: one two');
      expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
      expect(chunks.at(-1)).toEqual({
        choices: [],
        usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
        system_fingerprint: undefined,
      });
      for (const chunk of chunks) expect(Object.keys(chunk).sort()).toEqual(['choices', 'system_fingerprint', 'usage']);
      for (const chunk of chunks) for (const choice of chunk.choices) expect(choice.delta.tool_calls).toBeUndefined();
    });

    it('streams indexed tool-call deltas', async () => {
      engine = openEngine();
      scripted.scriptNext({
        kind: 'reply',
        toolCalls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      });
      const chunks = await collect(engine.stream(request(), live()));
      const deltas = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
      expect(deltas[0]).toEqual({ index: 0, id: 'call_9', type: 'function', function: { name: 'f', arguments: '' } });
      expect(deltas.map((delta) => delta.function?.arguments).join('')).toBe('{"a":1}');
      expect(chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'tool_calls')).toBe(true);
    });

    it('turns a JSON reply to a stream request into chunks', async () => {
      engine = openEngine();
      scripted.scriptNext({
        kind: 'status',
        status: 200,
        body: {
          choices: [{ index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1 },
        },
      });
      expect(await collect(engine.stream(request(), live()))).toEqual([
        {
          choices: [{ index: 0, delta: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }],
          usage: undefined,
          system_fingerprint: undefined,
        },
        { choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, system_fingerprint: undefined },
      ]);
    });

    it('a body kept open after [DONE] ends the stream cleanly within a second, and the request is cancelled', async () => {
      engine = openEngine({ idleTimeoutMs: 60_000 });
      const aborted = scripted.abortedRequests;
      const event =
        '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"kept"},"logprobs":null,"finish_reason":"stop"}]}';
      scripted.scriptNext({ kind: 'raw', pieces: [`data: ${event}\n\ndata: [DONE]\n\n`, ''], gapMs: 10_000 });
      const started = Date.now();
      expect(contentOf(await collect(engine.stream(request(), live())))).toBe('kept');
      expect(Date.now() - started).toBeLessThan(5_000);
      await scripted.waitForAbortedRequests(aborted + 1);
    });

    it('ends with zero chunks for a stream that is only [DONE]', async () => {
      engine = openEngine();
      scripted.scriptNext({ kind: 'raw', pieces: ['data: [DONE]\n\n'] });
      expect(await collect(engine.stream(request(), live()))).toEqual([]);
    });
  });

  describe('recorded streams', () => {
    it('vLLM with usage, delivered 5 bytes at a time (split events and UTF-8)', async () => {
      engine = openEngine();
      serveFixture('vllm-usage', 5);
      const chunks = await collect(engine.stream(request(), live()));
      expect(contentOf(chunks)).toBe('The capital is Paris — très bien 🗼.');
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 24, completion_tokens: 8, total_tokens: 32 } });
    });

    it('vLLM with \\r\\n line ends, delivered 3 bytes at a time', async () => {
      engine = openEngine();
      serveFixture('vllm-usage', 3, (text) => text.replaceAll('\n', '\r\n'));
      expect(contentOf(await collect(engine.stream(request(), live())))).toBe('The capital is Paris — très bien 🗼.');
    });

    it('vLLM error event mid-stream then [DONE] is an EngineError, after the chunks before it', async () => {
      engine = openEngine();
      serveFixture('vllm-mid-stream-error');
      const seen: EngineChunk[] = [];
      const error = await failure(
        (async () => {
          for await (const batch of engine.stream(request(), live())) seen.push(...batch);
        })(),
      );
      expect(error).toBeInstanceOf(EngineError);
      expect(error.status).toBe(502);
      expect(error.message).toContain('illegal memory access');
      expect(contentOf(seen)).toBe('Once upon');
    });

    it('Azure placeholder first chunk is skipped', async () => {
      engine = openEngine();
      serveFixture('azure-placeholder');
      const chunks = await collect(engine.stream(request(), live()));
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks[0]!.system_fingerprint).toBe('fp_azure01');
      expect(contentOf(chunks)).toBe('Hello there!');
      expect(chunks.at(-1)!.usage).toEqual({ completion_tokens: 3, prompt_tokens: 9, total_tokens: 12 });
      expect(chunks.filter((chunk) => chunk.choices.length === 0)).toHaveLength(1);
    });

    it('reasoning_content deltas (vLLM) pass through', async () => {
      engine = openEngine();
      serveFixture('vllm-reasoning-content');
      const chunks = await collect(engine.stream(request(), live()));
      expect(reasoningOf(chunks)).toBe('The user asks 2+2. That is 4.');
      expect(contentOf(chunks)).toBe('4');
    });

    it('reasoning deltas (Ollama) pass through as reasoning_content', async () => {
      engine = openEngine();
      serveFixture('ollama-reasoning');
      const chunks = await collect(engine.stream(request(), live()));
      expect(reasoningOf(chunks)).toBe('Greeting detected.');
      expect(contentOf(chunks)).toBe('Hi!');
      expect(JSON.stringify(chunks)).not.toContain('"reasoning"');
    });

    it('tool-call deltas keep their indices and lose empty tool_calls arrays', async () => {
      engine = openEngine();
      serveFixture('vllm-tool-call-deltas');
      const chunks = await collect(engine.stream(request(), live()));
      const deltas = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
      expect(
        deltas
          .filter((delta) => delta.index === 0)
          .map((delta) => delta.function?.arguments ?? '')
          .join(''),
      ).toBe('{"city": "Paris"}');
      expect(deltas.find((delta) => delta.index === 1)?.function?.name).toBe('get_time');
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason === 'tool_calls')!.choices[0]!.delta).toEqual({ content: '' });
    });

    it('llama.cpp without [DONE]: finish_reason with content, then a clean end', async () => {
      engine = openEngine();
      serveFixture('llamacpp-no-done');
      const chunks = await collect(engine.stream(request(), live()));
      expect(contentOf(chunks)).toBe('Yes.');
      expect(chunks.at(-1)!.choices[0]).toMatchObject({ delta: { content: '.' }, finish_reason: 'stop' });
      expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 2 });
    });

    it('a stream that ends cleanly without [DONE] before finishing is truncated', async () => {
      engine = openEngine();
      const text = fixture('vllm-usage').toString('utf8').split('\n\n').slice(0, 3).join('\n\n');
      scripted.scriptNext({ kind: 'raw', pieces: [text] });
      const error = await failure(collect(engine.stream(request(), live())));
      expect(error).toBeInstanceOf(EngineError);
      expect(error.code).toBe('engine_stream_truncated');
    });
  });

  describe('upstream error replies', () => {
    it('400 OpenAI shape: InvalidRequestError with the upstream message and param', async () => {
      engine = openEngine();
      scripted.scriptNext({
        kind: 'status',
        status: 400,
        body: { error: { message: 'max_tokens is too large', type: 'invalid_request_error', param: 'max_tokens', code: null } },
      });
      const error = await failure(engine.complete(request(), live()));
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect({ status: error.status, code: error.code, message: error.message, param: error.param, retryable: error.retryable }).toEqual({
        status: 400,
        code: 'upstream_invalid_request',
        message: 'max_tokens is too large',
        param: 'max_tokens',
        retryable: false,
      });
    });

    it('400 vLLM shape with a numeric code, on a stream too', async () => {
      engine = openEngine();
      const body = {
        object: 'error',
        message: "This model's maximum context length is 32768 tokens.",
        type: 'BadRequestError',
        param: null,
        code: 400,
      };
      scripted.scriptNext({ kind: 'status', status: 400, body }, { kind: 'status', status: 400, body });
      expect((await failure(engine.complete(request(), live()))).message).toBe(body.message);
      const streamed = await failure(collect(engine.stream(request(), live())));
      expect(streamed).toBeInstanceOf(InvalidRequestError);
      expect(streamed.message).toBe(body.message);
    });

    it('4xx plain text, FastAPI detail and Ollama error strings', async () => {
      engine = openEngine();
      scripted.scriptNext(
        { kind: 'status', status: 422, body: 'prompt is empty' },
        { kind: 'status', status: 422, body: { detail: [{ loc: ['body', 'messages'], msg: 'Field required' }] } },
        { kind: 'status', status: 400, body: { error: 'invalid options' } },
      );
      expect((await failure(engine.complete(request(), live()))).message).toBe('prompt is empty');
      expect((await failure(engine.complete(request(), live()))).message).toBe('Field required');
      expect((await failure(engine.complete(request(), live()))).message).toBe('invalid options');
    });

    it('404 model not found is a 400 to the caller and a warning in the log', async () => {
      const lines: string[] = [];
      engine = openEngine({}, createLogger({ level: 'warn', write: (line) => lines.push(line) }));
      scripted.scriptNext({
        kind: 'status',
        status: 404,
        body: { error: { message: 'The model `x` does not exist.', type: 'NotFoundError', code: 404 } },
      });
      const error = await failure(engine.complete(request(), live()));
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect(error.message).toBe('The model `x` does not exist.');
      expect(lines.join('')).toContain('"engine":"gpu-test"');
      expect(lines.join('')).not.toContain('does not exist');
    });

    it('429 and 503 are refusals before any work, with their retry-after: another replica may take the call', async () => {
      engine = openEngine();
      scripted.scriptNext(
        { kind: 'status', status: 429, body: { error: { message: 'queue full' } }, headers: { 'retry-after': '2' } },
        { kind: 'status', status: 503, body: 'loading model', headers: { 'retry-after': '7' } },
      );
      const error = await failure(engine.complete(request(), live()));
      expect(error).toBeInstanceOf(EngineUnavailableError);
      expect({ code: error.code, status: error.status, resendable: error.resendable, headers: error.headers }).toEqual({
        code: 'engine_overloaded',
        status: 503,
        resendable: true,
        headers: { 'retry-after': '2' },
      });
      const unavailable = await failure(engine.complete(request(), live()));
      expect({
        code: unavailable.code,
        status: unavailable.status,
        resendable: unavailable.resendable,
        headers: unavailable.headers,
      }).toEqual({ code: 'engine_unavailable', status: 503, resendable: true, headers: { 'retry-after': '7' } });
      expect(unavailable.message).toContain('loading model');
    });

    it('another 5xx is a 502 carrying the upstream message, never sent again (the engine may have generated)', async () => {
      engine = openEngine();
      scripted.scriptNext({ kind: 'status', status: 500, body: { error: { message: 'engine core died' } } });
      const error = await failure(engine.complete(request(), live()));
      expect(error).toBeInstanceOf(EngineError);
      expect({ status: error.status, code: error.code, retryable: error.retryable, resendable: error.resendable }).toEqual({
        status: 502,
        code: 'engine_error',
        retryable: true,
        resendable: false,
      });
      expect(error.message).toContain('engine core died');
    });

    it('401 from the engine is our misconfiguration, not the caller’s invalid request', async () => {
      engine = openEngine();
      scripted.scriptNext({ kind: 'status', status: 401, body: { error: { message: 'bad key' } } });
      const error = await failure(engine.complete(request(), live()));
      expect(error).toBeInstanceOf(EngineError);
      expect(error.code).toBe('engine_auth_failed');
    });

    it('a 200 that is not JSON, or not a chat completion, is engine_bad_reply', async () => {
      engine = openEngine();
      scripted.scriptNext({ kind: 'garbage' }, { kind: 'status', status: 200, body: { object: 'list', data: [] } }, { kind: 'garbage' });
      for (const error of [await failure(engine.complete(request(), live())), await failure(engine.complete(request(), live()))]) {
        expect(error).toBeInstanceOf(EngineError);
        expect(error.code).toBe('engine_bad_reply');
      }
      expect((await failure(collect(engine.stream(request(), live())))).code).toBe('engine_bad_reply');
      scripted.scriptNext({ kind: 'raw', contentType: 'text/html', pieces: ['<html>oops</html>'] });
      expect((await failure(collect(engine.stream(request(), live())))).code).toBe('engine_bad_reply');
    });
  });

  describe('transport failures', () => {
    it('a refused port is EngineUnavailableError, for calls, streams and readiness', async () => {
      const listener = createServer();
      listener.listen(0, '127.0.0.1');
      await once(listener, 'listening');
      const port = (listener.address() as AddressInfo).port;
      listener.close();
      await once(listener, 'close');
      engine = openEngine({ baseUrl: `http://127.0.0.1:${port}/v1` });
      for (const error of [
        await failure(engine.complete(request(), live())),
        await failure(collect(engine.stream(request(), live()))),
        await failure(engine.checkReady(live())),
      ]) {
        expect(error).toBeInstanceOf(EngineUnavailableError);
        expect(error.resendable).toBe(true);
        expect(error.message).toContain('ECONNREFUSED');
      }
    });

    it('a socket closed after the request was sent, before the headers, is a 502 engine_connection_closed, not resendable', async () => {
      engine = openEngine();
      scripted.scriptNext({ kind: 'destroy' });
      const error = await failure(engine.complete(request(), live()));
      expect({ status: error.status, code: error.code, resendable: error.resendable }).toEqual({
        status: 502,
        code: 'engine_connection_closed',
        resendable: false,
      });
    });

    it('no headers within firstByteTimeoutMs is EngineTimeoutError, and upstream sees the socket close', async () => {
      engine = openEngine({ firstByteTimeoutMs: 150 });
      const aborted = scripted.abortedRequests;
      scripted.scriptNext({ kind: 'hang' }, { kind: 'hang' });
      const error = await failure(engine.complete(request(), live()));
      expect(error).toBeInstanceOf(EngineTimeoutError);
      expect(error.status).toBe(504);
      expect(await failure(collect(engine.stream(request(), live())))).toBeInstanceOf(EngineTimeoutError);
      await scripted.waitForAbortedRequests(aborted + 2);
    });

    it('headers but no first chunk within firstByteTimeoutMs is EngineTimeoutError', async () => {
      engine = openEngine({ firstByteTimeoutMs: 200, idleTimeoutMs: 5_000 });
      scripted.scriptNext({ kind: 'stream', pieces: ['a'], firstChunkDelayMs: 1_000 });
      const started = Date.now();
      const error = await failure(collect(engine.stream(request(), live())));
      expect(error).toBeInstanceOf(EngineTimeoutError);
      expect(error.message).toContain('first chunk');
      expect(Date.now() - started).toBeLessThan(900);
    });

    it('a gap longer than idleTimeoutMs mid-stream is EngineTimeoutError after the earlier chunks', async () => {
      engine = openEngine({ idleTimeoutMs: 150 });
      const aborted = scripted.abortedRequests;
      scripted.scriptNext({ kind: 'stream', pieces: ['a', 'b', 'c'], gapMs: 600 });
      const seen: EngineChunk[] = [];
      const error = await failure(
        (async () => {
          for await (const batch of engine.stream(request(), live())) seen.push(...batch);
        })(),
      );
      expect(error).toBeInstanceOf(EngineTimeoutError);
      expect(contentOf(seen)).toBe('a');
      await scripted.waitForAbortedRequests(aborted + 1);
    });

    it('a slow consumer holding chunks does not trip the idle timeout', async () => {
      engine = openEngine({ idleTimeoutMs: 100 });
      scripted.scriptNext({ kind: 'stream', pieces: ['a', 'b', 'c'] });
      const seen: EngineChunk[] = [];
      for await (const batch of engine.stream(request(), live())) {
        seen.push(...batch);
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      expect(contentOf(seen)).toBe('abc');
    });

    it('a socket dropped mid-stream is engine_stream_truncated', async () => {
      engine = openEngine();
      scripted.scriptNext({ kind: 'stream', pieces: ['a', 'b', 'c'], dropAfter: 2 });
      const error = await failure(collect(engine.stream(request(), live())));
      expect(error).toBeInstanceOf(EngineError);
      expect(error.code).toBe('engine_stream_truncated');
    });
  });

  describe('slots and the queue', () => {
    it('max_concurrency calls go at once; one more waits, one past max_queue is refused at once, and a waiter gives up after queue_timeout_ms', async () => {
      engine = openEngine({ maxConcurrency: 1, maxQueue: 1, queueTimeoutMs: 300 });
      scripted.scriptNext({ kind: 'hang' });
      const controller = new AbortController();
      const busy = engine.complete(request(), controller.signal).catch((error: unknown) => error);
      const waiting = failure(engine.complete(request(), live()));
      const refused = await failure(engine.complete(request(), live()));
      expect({
        status: refused.status,
        code: refused.code,
        resendable: refused.resendable,
        retryAfter: refused.headers?.['retry-after'],
      }).toEqual({ status: 503, code: 'engine_overloaded', resendable: true, retryAfter: '1' });
      const timedOut = await waiting;
      expect(timedOut.code).toBe('engine_overloaded');
      expect(timedOut.message).toContain('300 ms');
      controller.abort();
      expect(await busy).toBeInstanceOf(ClientAbortError);
      // The slot is free again.
      expect((await engine.complete(request(), live())).choices[0]?.message.content).toBeTruthy();
    });

    it('a stream holds its slot until it ends, and frees it when stopped early', async () => {
      engine = openEngine({ maxConcurrency: 1, maxQueue: 0 });
      const iterator = engine.stream(request(), live())[Symbol.asyncIterator]();
      await iterator.next();
      expect((await failure(engine.complete(request(), live()))).code).toBe('engine_overloaded');
      await iterator.return?.();
      expect((await engine.complete(request(), live())).choices).toHaveLength(1);
    });

    it('a compressed reply is a 502 engine_bad_reply (taskgate asks for identity)', async () => {
      engine = openEngine();
      scripted.scriptNext({ kind: 'status', status: 200, body: { id: 'x' }, headers: { 'content-encoding': 'gzip' } });
      const error = await failure(engine.complete(request(), live()));
      expect({ status: error.status, code: error.code }).toEqual({ status: 502, code: 'engine_bad_reply' });
      expect(error.message).toContain('gzip');
    });
  });

  describe('cancellation', () => {
    it('aborting a call cancels it upstream at once and surfaces as ClientAbortError', async () => {
      engine = openEngine();
      const aborted = scripted.abortedRequests;
      scripted.scriptNext({ kind: 'hang' });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      expect(await failure(engine.complete(request(), controller.signal))).toBeInstanceOf(ClientAbortError);
      await scripted.waitForAbortedRequests(aborted + 1, 500);
    });

    it('aborting mid-stream surfaces as ClientAbortError and closes the upstream socket', async () => {
      engine = openEngine();
      const aborted = scripted.abortedRequests;
      scripted.scriptNext({ kind: 'stream', pieces: ['a', 'b', 'c', 'd'], gapMs: 200 });
      const controller = new AbortController();
      const error = await failure(
        (async () => {
          for await (const batch of engine.stream(request(), controller.signal)) {
            if (batch.some((chunk) => chunk.choices[0]?.delta.content === 'a')) controller.abort();
          }
        })(),
      );
      expect(error).toBeInstanceOf(ClientAbortError);
      await scripted.waitForAbortedRequests(aborted + 1, 500);
    });

    it('an abort while the consumer holds a batch ends the stream: no batch comes after it, even with events still to read', async () => {
      engine = openEngine();
      scripted.scriptNext({ kind: 'stream', pieces: ['a', 'b', 'c', 'd'] });
      const controller = new AbortController();
      const seen: string[][] = [];
      const error = await failure(
        (async () => {
          for await (const batch of engine.stream(request(), controller.signal)) {
            seen.push(batch.map((chunk) => chunk.choices[0]?.delta.content ?? ''));
            controller.abort();
          }
        })(),
      );
      expect(error).toBeInstanceOf(ClientAbortError);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.slice(0, 1)).toEqual(['']);
    });

    it('stopping iteration early cancels the upstream request', async () => {
      engine = openEngine();
      const aborted = scripted.abortedRequests;
      scripted.scriptNext({ kind: 'stream', pieces: ['a', 'b', 'c'], gapMs: 200 });
      for await (const batch of engine.stream(request(), live())) {
        if (batch.some((chunk) => chunk.choices[0]?.delta.content === 'a')) break;
      }
      await scripted.waitForAbortedRequests(aborted + 1, 500);
    });

    it('an already aborted signal sends nothing', async () => {
      engine = openEngine();
      const before = scripted.requests.length;
      const controller = new AbortController();
      controller.abort();
      expect(await failure(engine.complete(request(), controller.signal))).toBeInstanceOf(ClientAbortError);
      expect(await failure(collect(engine.stream(request(), controller.signal)))).toBeInstanceOf(ClientAbortError);
      expect(scripted.requests.length).toBe(before);
    });
  });

  describe('connections and readiness', () => {
    it('sequential calls and streams reuse one kept-alive socket', async () => {
      const own = await startScriptedEngine();
      try {
        const local = createOpenAIEngine(
          {
            id: 'keep',
            baseUrl: own.baseUrl,
            maxConcurrency: 8,
            connectTimeoutMs: 1_000,
            firstByteTimeoutMs: 2_000,
            idleTimeoutMs: 2_000,
            transport,
          },
          silentLogger,
        );
        opened.push(local);
        // Back to back in one turn: a reply's end frees its socket at once.
        for (let call = 0; call < 4; call++) await local.complete(request(), live());
        for (let call = 0; call < 3; call++) await collect(local.stream(request(), live()));
        await local.checkReady(live());
        expect(own.requests).toHaveLength(7);
        expect(own.connections).toBe(1);
      } finally {
        await own.close();
      }
    });

    it('checkReady resolves when /models answers and rejects when it does not', async () => {
      engine = openEngine();
      await engine.checkReady(live());
      scripted.setReady(false);
      try {
        expect(await failure(engine.checkReady(live()))).toBeInstanceOf(EngineUnavailableError);
      } finally {
        scripted.setReady(true);
      }
    });
  });
});
