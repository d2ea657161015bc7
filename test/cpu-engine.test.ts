/**
 * The embedded CPU engine end to end: the real server with a `llama-cpp`
 * engine running GGUF models that our own test helper writes, driven by the
 * stock `openai` client. The answering models always reply with a known text,
 * so replies are asserted exactly; the random model shows sampling and seeds.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './helpers/test-gateway.js';
import {
  TINY_ANSWERS,
  TINY_TOOL_CALL,
  writeAnsweringModel,
  writeLoopingModel,
  writeRandomModel,
  writeToolCallingModel,
} from './helpers/tiny-models.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const weatherSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, temperature: { type: 'number' } },
  required: ['city', 'temperature'],
};

let directory: string;
let taskgate: TestGateway;

// One price for all: the router then has no cheaper candidate, and never replays these calls on other models.
function model(id: string, file: string, replica = '', price = '{ input: 1000, output: 2000 }'): string {
  return `  - { id: ${id}, served_by: [{ engine: cpu, file: "${join(directory, file)}"${replica} }], price: ${price}, context_window: 4096, supports: [tools, json] }`;
}

beforeAll(async () => {
  directory = temporaryDirectory('taskgate-cpu-');
  writeAnsweringModel(join(directory, 'plain.gguf'), TINY_ANSWERS.plain);
  writeAnsweringModel(join(directory, 'json.gguf'), TINY_ANSWERS.json);
  writeToolCallingModel(join(directory, 'tools.gguf'), TINY_TOOL_CALL);
  writeRandomModel(join(directory, 'random.gguf'), 11);
  writeLoopingModel(join(directory, 'looping.gguf'), ['tick ', 'tock ']);
  taskgate = await startTestGateway(`
engines:
  - { id: cpu, type: llama-cpp, threads: 1, max_queue: 1 }   # one thread: tests share the cores with other test files
models:
${model('tiny-plain', 'plain.gguf')}
${model('tiny-json', 'json.gguf')}
${model('tiny-tools', 'tools.gguf')}
${model('tiny-random', 'random.gguf', ', sequences: 2')}
${model('tiny-looping', 'looping.gguf', ', sequences: 1, context_size: 65536')}
${model('not-here', 'nowhere/missing.gguf')}
`);
});
afterAll(async () => {
  await taskgate?.stop();
  rmSync(directory, { recursive: true, force: true });
});

const ask = [{ role: 'user' as const, content: 'Say hello.' }];

describe('replies', () => {
  it('answers with the model text, real token counts and the catalog price', async () => {
    const { data, response } = await taskgate
      .client()
      .chat.completions.create({ model: 'tiny-plain', messages: ask, temperature: 0 })
      .withResponse();
    expect(data.model).toBe('tiny-plain');
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: TINY_ANSWERS.plain }, finish_reason: 'stop' });
    // The ChatML prompt of one short user message, and the reply's tokens plus <|im_end|>.
    expect(data.usage?.prompt_tokens).toBeGreaterThan(10);
    expect(data.usage?.completion_tokens).toBe(4);
    expect(data.usage?.total_tokens).toBe(data.usage!.prompt_tokens + 4);
    const trace = await taskgate.traceOf(response.headers.get('x-request-id'));
    expect(trace).toMatchObject({
      status: 'ok',
      servedModel: 'tiny-plain',
      replica: 'cpu',
      promptTokens: data.usage?.prompt_tokens,
      completionTokens: 4,
    });
    expect(trace?.costUsd).toBeCloseTo((data.usage!.prompt_tokens * 1000 + 4 * 2000) / 1e6, 9);
  });

  it('reuses the evaluated prefix of a repeated system prompt, and reports it as cached tokens', async () => {
    const messages = [
      { role: 'system' as const, content: 'You answer questions about the weather. '.repeat(20) },
      { role: 'user' as const, content: 'Rain today?' },
    ];
    const first = await taskgate.client().chat.completions.create({ model: 'tiny-plain', messages });
    const second = await taskgate
      .client()
      .chat.completions.create({ model: 'tiny-plain', messages: [messages[0]!, { role: 'user', content: 'Sun tomorrow?' }] });
    const systemTokens = 'You answer questions about the weather. '.length * 20 * 0.9; // byte-level tokens, at least
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(systemTokens);
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBeLessThan(second.usage!.prompt_tokens);
    expect(first.usage?.prompt_tokens).toBeGreaterThan(systemTokens);
  });

  it('streams the reply token by token, with usage at the end when asked', async () => {
    const stream = await taskgate
      .client()
      .chat.completions.create({ model: 'tiny-plain', messages: ask, stream: true, stream_options: { include_usage: true } });
    const deltas: string[] = [];
    let finish: string | null = null;
    let usage: { completion_tokens: number } | null | undefined;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        if (choice.delta.content) deltas.push(choice.delta.content);
        finish = choice.finish_reason ?? finish;
      }
      usage = chunk.usage ?? usage;
    }
    expect(deltas.join('')).toBe(TINY_ANSWERS.plain);
    expect(deltas.length).toBeGreaterThan(1);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBe(4);
  });

  it('ends at a stop sequence, without it', async () => {
    const data = await taskgate.client().chat.completions.create({ model: 'tiny-plain', messages: ask, stop: [' taskgate'] });
    expect(data.choices[0]?.message.content).toBe('Hello from');
    expect(data.choices[0]?.finish_reason).toBe('stop');
  });

  it('cuts the reply at max_tokens with finish_reason "length"', async () => {
    const data = await taskgate.client().chat.completions.create({ model: 'tiny-plain', messages: ask, max_tokens: 2 });
    expect(data.choices[0]?.message.content).toBe('Hello from');
    expect(data.choices[0]?.finish_reason).toBe('length');
    expect(data.usage?.completion_tokens).toBe(2);
  });

  it('gives the same reply for the same seed, and another for another seed', async () => {
    const sample = async (seed: number) =>
      (await taskgate.client().chat.completions.create({ model: 'tiny-random', messages: ask, temperature: 1, seed, max_tokens: 24 }))
        .choices[0]?.message.content;
    const first = await sample(7);
    expect(first?.length).toBeGreaterThan(0);
    expect(await sample(7)).toBe(first);
    const others = new Set([await sample(8), await sample(9), await sample(10)]);
    expect([...others].some((text) => text !== first)).toBe(true);
  });
});

describe('structured output and tools', () => {
  it('returns JSON matching the schema under response_format json_schema', async () => {
    const data = await taskgate.client().chat.completions.create({
      model: 'tiny-json',
      messages: [{ role: 'user', content: 'Weather in Paris as JSON.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: weatherSchema } },
    });
    expect(JSON.parse(data.choices[0]?.message.content ?? '')).toEqual({ city: 'Paris', temperature: 21 });
  });

  it('returns valid JSON under response_format json_object', async () => {
    const data = await taskgate
      .client()
      .chat.completions.create({ model: 'tiny-json', messages: ask, response_format: { type: 'json_object' } });
    expect(JSON.parse(data.choices[0]?.message.content ?? '')).toEqual({ city: 'Paris', temperature: 21 });
  });

  it('refuses a JSON schema the grammar cannot take, as a 400 naming the field', async () => {
    const badSchema = { type: 'object', oneOf: 3 };
    const format = await taskgate.postChat({
      model: 'tiny-json',
      messages: ask,
      response_format: { type: 'json_schema', json_schema: { name: 'bad', schema: badSchema } },
    });
    expect(format.status).toBe(400);
    expect(((await format.json()) as { error: { param: string; code: string } }).error).toMatchObject({
      param: 'response_format.json_schema.schema',
      code: 'unsupported_schema',
    });
    const tool = await taskgate.postChat({
      model: 'tiny-tools',
      messages: ask,
      tools: [{ type: 'function', function: { name: 'broken', parameters: badSchema } }],
    });
    expect(tool.status).toBe(400);
    expect(((await tool.json()) as { error: { param: string } }).error.param).toBe('tools[0].function.parameters');
  });

  it('returns a tool call as OpenAI tool_calls, and takes the tool result back', async () => {
    const data = await taskgate
      .client()
      .chat.completions.create({ model: 'tiny-tools', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool] });
    const choice = data.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    expect(call.id).toMatch(/^call_/);
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });

    // The conversation continues with the tool's result in it: the history is accepted and rendered.
    const followUp = await taskgate.client().chat.completions.create({
      model: 'tiny-plain',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        choice.message,
        { role: 'tool', tool_call_id: call.id, content: '{"temperature": 21}' },
      ],
      tools: [weatherTool],
    });
    expect(followUp.choices[0]?.message.content).toBe(TINY_ANSWERS.plain);
  });

  it('streams a tool call as tool_calls deltas', async () => {
    const stream = await taskgate.client().chat.completions.create({
      model: 'tiny-tools',
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [weatherTool],
      stream: true,
    });
    let name = '';
    let argumentsText = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        for (const delta of choice.delta.tool_calls ?? []) {
          name += delta.function?.name ?? '';
          argumentsText += delta.function?.arguments ?? '';
        }
        finish = choice.finish_reason ?? finish;
      }
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(argumentsText)).toEqual({ city: 'Paris' });
    expect(finish).toBe('tool_calls');
  });
});

describe('capacity', () => {
  it('frees the sequence at once when a streaming client goes away', async () => {
    const controller = new AbortController();
    const response = await taskgate.postChat({ model: 'tiny-looping', messages: ask, stream: true }, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();

    // tiny-looping has one sequence and room for one queued call: were the
    // sequence still generating its 65k-token reply (tens of seconds), this would wait for it.
    const data = await taskgate
      .client(undefined, { timeout: 10_000 })
      .chat.completions.create({ model: 'tiny-looping', messages: ask, max_tokens: 4 });
    expect(data.choices[0]?.message.content).toBe('tick tock tick tock ');
    const traces = await taskgate.traces();
    expect(traces.find((trace) => trace.servedModel === 'tiny-looping' && trace.errorClass === 'client_closed')).toBeDefined();
  });

  it('queues calls beyond the sequences, then refuses with 503 and retry-after when the queue is full', async () => {
    const holder = new AbortController();
    const holding = await taskgate.postChat({ model: 'tiny-looping', messages: ask, stream: true }, { signal: holder.signal });
    await holding.body!.getReader().read();

    const queued = taskgate.client().chat.completions.create({ model: 'tiny-looping', messages: ask, max_tokens: 2 });
    // The queued call is admitted before the next one arrives.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await taskgate.postChat({ model: 'tiny-looping', messages: ask, max_tokens: 2 });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('engine_overloaded');
    expect(body.error.message).toContain('max_queue');

    holder.abort();
    const served = await queued;
    expect(served.choices[0]?.message.content).toBe('tick tock ');
  });

  it('answers a model whose file is absent with a 503 that says what is missing', async () => {
    const error = await taskgate
      .client()
      .chat.completions.create({ model: 'not-here', messages: ask })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(503);
    expect((error as APIError).code).toBe('model_not_downloaded');
    expect((error as APIError).message).toContain(join(directory, 'nowhere/missing.gguf'));
  });

  it('refuses a prompt longer than the context with context_length_exceeded', async () => {
    const long = 'word '.repeat(5000);
    const response = await taskgate.postChat({ model: 'tiny-plain', messages: [{ role: 'user', content: long }] });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('context_length_exceeded');
  });
});
