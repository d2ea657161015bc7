/**
 * The inference endpoint end to end: the real server on a port, a scripted
 * OpenAI-compatible engine behind it, the stock `openai` client in front.
 */
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { engineConfig, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

let engine: ScriptedEngine;
let taskgate: TestGateway;

beforeAll(async () => {
  engine = await startScriptedEngine();
  taskgate = await startTestGateway(engineConfig([engine.baseUrl]));
});
afterAll(async () => {
  await taskgate.stop();
  await engine.close();
});
afterEach(() => engine.script({ kind: 'reply', content: 'Hello there' }));

describe('non-streamed calls', () => {
  it('returns an OpenAI chat.completion with the canonical model, usage and scope headers', async () => {
    engine.script({ kind: 'reply', content: 'Hello there', usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } });
    const { data, response } = await taskgate
      .client()
      .chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(data).toMatchObject({
      object: 'chat.completion',
      model: 'model-0',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
    });
    expect(data.id).toMatch(/^chatcmpl-/);
    expect(response.headers.get('x-taskgate-project')).toBe('default');
    expect(response.headers.get('x-taskgate-workload')).toBe('main');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(Number(response.headers.get('x-ratelimit-limit-requests'))).toBe(600);
    expect(Number(response.headers.get('x-ratelimit-remaining-requests'))).toBeLessThan(600);
    expect(Number(response.headers.get('x-ratelimit-reset-requests'))).toBeGreaterThan(0);
    // The engine is asked for its own model name, never the catalog id.
    expect(engine.requests.at(-1)?.body.model).toBe('upstream-0');
  });

  it('leaves one trace with tokens, cost, latency and the request id', async () => {
    engine.script({ kind: 'reply', content: 'traced', usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } });
    const { response } = await taskgate
      .client()
      .chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'trace me' }], user: 'tenant-7' })
      .withResponse();
    const requestId = response.headers.get('x-request-id');
    const trace = await taskgate.traceOf(requestId);
    expect(trace).toMatchObject({
      status: 'ok',
      httpStatus: 200,
      project: 'default',
      workload: 'main',
      requestedModel: 'model-0',
      servedModel: 'model-0',
      replica: 'engine-0',
      user: 'tenant-7',
      promptTokens: 1000,
      completionTokens: 500,
      finishReason: 'stop',
      stream: false,
      environment: 'production',
    });
    // price is 1 USD / M input and 2 USD / M output
    expect(trace?.costUsd).toBeCloseTo(0.002, 10);
    expect(trace?.latencyMs).toBeGreaterThan(0);
    expect(trace?.requestBody).toContain('trace me');
    expect(trace?.replyBody).toContain('traced');
  });

  it('resolves aliases and the provider-pinned form to the canonical id', async () => {
    for (const name of ['acme/model-0', 'Acme/Model-0', 'acme/Acme/Model-0', 'MODEL-0']) {
      const completion = await taskgate.client().chat.completions.create({ model: name, messages: [{ role: 'user', content: 'x' }] });
      expect(completion.model).toBe('model-0');
    }
  });

  it('passes tools through and returns tool_calls', async () => {
    engine.script({
      kind: 'reply',
      content: '',
      toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      finishReason: 'tool_calls',
    });
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    ];
    const completion = await taskgate
      .client()
      .chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'weather?' }], tools, tool_choice: 'auto' });
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      id: 'call_1',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    expect(engine.requests.at(-1)?.body).toMatchObject({ tools, tool_choice: 'auto' });
  });

  it('passes JSON mode through', async () => {
    engine.script({ kind: 'reply', content: '{"ok":true}' });
    const completion = await taskgate.client().chat.completions.create({
      model: 'model-0',
      messages: [{ role: 'user', content: 'json please' }],
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse(completion.choices[0]?.message.content ?? '')).toEqual({ ok: true });
    expect(engine.requests.at(-1)?.body.response_format).toEqual({ type: 'json_object' });
  });

  it('echoes metadata at the top level and stores it with the trace, and never forwards it', async () => {
    const metadata = { ticket: 'T-1', customer: 'acme' };
    const { data, response } = await taskgate
      .client()
      .chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'x' }], metadata, store: undefined })
      .withResponse();
    expect((data as unknown as { metadata: unknown }).metadata).toEqual(metadata);
    expect(engine.requests.at(-1)?.body.metadata).toBeUndefined();
    const trace = await taskgate.traceOf(response.headers.get('x-request-id'));
    expect(trace?.metadata).toEqual(metadata);
  });
});

describe('scope', () => {
  async function scopeOf(headers: Record<string, string>, task?: string) {
    const body: Record<string, unknown> = { model: 'model-0', messages: [{ role: 'user', content: 'x' }] };
    if (task !== undefined) body.task = task;
    const { response } = await taskgate
      .client()
      .chat.completions.create(body as never, { headers })
      .withResponse();
    return [response.headers.get('x-taskgate-project'), response.headers.get('x-taskgate-workload')];
  }

  it('follows the specification rules 1-4', async () => {
    expect(await scopeOf({})).toEqual(['default', 'main']);
    expect(await scopeOf({}, 'summarise')).toEqual(['default', 'summarise']);
    expect(await scopeOf({ 'x-taskgate-workload': 'from-header' }, 'summarise')).toEqual(['default', 'from-header']);
    expect(await scopeOf({ 'x-taskgate-project': 'shop' }, 'classify')).toEqual(['shop', 'classify']);
    expect(await scopeOf({ 'x-taskgate-project': 'shop', 'x-taskgate-workload': 'w_1' })).toEqual(['shop', 'w_1']);
  });

  it('takes task through a TypeScript cast, as the README shows', async () => {
    const { response } = await taskgate
      .client()
      .chat.completions.create({
        model: 'model-0',
        messages: [{ role: 'user', content: 'Summarise: ...' }],
        task: 'summarise',
      } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(response.headers.get('x-taskgate-workload')).toBe('summarise');
    // taskgate's own field never reaches the engine.
    expect(engine.requests.at(-1)?.body.task).toBeUndefined();
  });

  it('creates projects and workloads on first use, per account', async () => {
    await scopeOf({ 'x-taskgate-project': 'fresh-project' }, 'fresh_workload');
    const other = await taskgate.createKey({ account: 'other-account' });
    const response = await fetch(`${taskgate.baseUrl}/projects`, { headers: { authorization: `Bearer ${taskgate.adminKey}` } });
    const projects = (await response.json()) as { data: Array<{ slug: string }> };
    expect(projects.data.map((project) => project.slug)).toContain('fresh-project');
    const workloads = await fetch(`${taskgate.baseUrl}/projects/fresh-project/workloads`, {
      headers: { authorization: `Bearer ${taskgate.adminKey}` },
    });
    expect(((await workloads.json()) as { data: Array<{ name: string }> }).data.map((workload) => workload.name)).toEqual([
      'fresh_workload',
    ]);
    // Another account never sees it, not even as "forbidden".
    const foreign = await fetch(`${taskgate.baseUrl}/projects/fresh-project/workloads`, {
      headers: { authorization: `Bearer ${other.text}` },
    });
    expect(foreign.status).toBe(404);
    const foreignList = await fetch(`${taskgate.baseUrl}/projects`, { headers: { authorization: `Bearer ${other.text}` } });
    expect(((await foreignList.json()) as { data: unknown[] }).data).toEqual([]);
  });

  it('marks staging calls on their traces', async () => {
    const staging = await taskgate.createKey({ environment: 'staging' });
    expect(staging.text).toMatch(/^tg_test_/);
    const { response } = await taskgate
      .client(staging.text)
      .chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    const trace = await taskgate.traceOf(response.headers.get('x-request-id'));
    expect(trace?.environment).toBe('staging');
  });
});

describe('streamed calls', () => {
  it('streams chunks with the role first, then content, finish reason, usage and [DONE]', async () => {
    engine.script({ kind: 'stream', pieces: ['Hel', 'lo', ' world'] });
    const stream = await taskgate.client().chat.completions.create({
      model: 'acme/model-0',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(chunks.every((chunk) => chunk.model === 'model-0' && chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Hello world');
    expect(chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'stop')).toBe(true);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('always asks the engine for usage but strips it when the client did not ask', async () => {
    engine.script({ kind: 'stream', pieces: ['a', 'b'] });
    const stream = await taskgate
      .client()
      .chat.completions.create({ model: 'model-0', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(engine.requests.at(-1)?.body.stream_options).toEqual({ include_usage: true });
    expect(chunks.every((chunk) => chunk.choices.length > 0)).toBe(true);
    const trace = (await taskgate.traces()).find((candidate) => candidate.stream && candidate.replyBody?.includes('"ab"'));
    expect(trace?.completionTokens).toBeGreaterThan(0);
    expect(trace?.ttftMs).toBeGreaterThan(0);
  });

  it('sends scope, request id and rate-limit headers with the head, before the first chunk', async () => {
    engine.script({ kind: 'stream', pieces: ['slow', 'ly'], gapMs: 300 });
    const response = await taskgate.postChat(
      { model: 'model-0', messages: [{ role: 'user', content: 'x' }], stream: true, task: 'headers' },
      { headers: { 'x-taskgate-project': 'streams' } },
    );
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('x-taskgate-project')).toBe('streams');
    expect(response.headers.get('x-taskgate-workload')).toBe('headers');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('600');
    expect(response.headers.get('x-ratelimit-remaining-requests')).not.toBeNull();
    const text = await response.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('streams tool-call deltas with their index', async () => {
    engine.script({
      kind: 'reply',
      content: '',
      toolCalls: [{ id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
      finishReason: 'tool_calls',
    });
    const stream = await taskgate.client().chat.completions.create({
      model: 'model-0',
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      stream: true,
    });
    let name = '';
    let argumentsText = '';
    let finish = null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        expect(call.index).toBe(0);
        name += call.function?.name ?? '';
        argumentsText += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect({ name, argumentsText, finish }).toEqual({ name: 'lookup', argumentsText: '{"q":"x"}', finish: 'tool_calls' });
  });
});

describe('models', () => {
  it('lists the catalog in OpenAI list form with price and context window', async () => {
    const list = await taskgate.client().models.list();
    const model = list.data.find((entry) => entry.id === 'model-0') as unknown as Record<string, unknown>;
    expect(model).toMatchObject({ object: 'model', owned_by: 'acme', context_window: 8192, price: { input: 1, output: 2 } });
  });
});
