import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from './chat-types.js';
import { InvalidRequestError } from './errors.js';
import { parseJsonObject } from './parse-json-body.js';
import { validateChatRequest } from './validate-chat-request.js';

function errorOf(run: () => unknown): InvalidRequestError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidRequestError) return error;
    throw error;
  }
  throw new Error('expected an InvalidRequestError, nothing was thrown');
}

/** The hot path as the handler runs it: text -> parsed -> validated, then re-serialised as an engine call would be. */
function accept(text: string): ChatCompletionRequest {
  const request = validateChatRequest(parseJsonObject(text));
  JSON.stringify(request);
  return request;
}
const reject = (text: string): InvalidRequestError => errorOf(() => accept(text));

const user = { role: 'user', content: 'hi' };
const minimal = { model: 'm', messages: [user] };
const body = (fields: Record<string, unknown>): string => JSON.stringify({ ...minimal, ...fields });
const messages = (...list: unknown[]): string => body({ messages: list });
const weatherTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } };
const toolCall = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } };
const withCall = (call: unknown): string => messages(user, { role: 'assistant', content: null, tool_calls: [call] });
const withTool = (fields: Record<string, unknown>): string => body({ tools: [weatherTool], ...fields });
const manyPairs = (count: number, value: unknown = 'v'): Record<string, unknown> =>
  Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, value]));

describe('validateChatRequest rejects bad input, naming the field', () => {
  it.each<[string, string, string, string]>([
    // [case, body text, param, code]
    ['unknown top-level field', body({ foo: 1 }), 'foo', 'unknown_parameter'],
    [
      'top-level __proto__',
      '{"model":"m","messages":[{"role":"user","content":"hi"}],"__proto__":{"polluted":1}}',
      '__proto__',
      'unknown_parameter',
    ],
    ['model missing', JSON.stringify({ messages: [user] }), 'model', 'missing_required_parameter'],
    ['model null', body({ model: null }), 'model', 'missing_required_parameter'],
    ['model empty', body({ model: '' }), 'model', 'missing_required_parameter'],
    ['model a number', body({ model: 42 }), 'model', 'invalid_type'],
    ['model 257 characters', body({ model: 'm'.repeat(257) }), 'model', 'invalid_value'],
    ['messages missing', JSON.stringify({ model: 'm' }), 'messages', 'missing_required_parameter'],
    ['messages a string', body({ messages: 'hi' }), 'messages', 'invalid_type'],
    ['messages empty', body({ messages: [] }), 'messages', 'invalid_value'],
    ['messages 4097 entries', body({ messages: Array.from({ length: 4097 }, () => user) }), 'messages', 'array_above_max_length'],
    ['message not an object', messages(user, 'hi'), 'messages[1]', 'invalid_type'],
    ['role missing', messages({ content: 'hi' }), 'messages[0].role', 'missing_required_parameter'],
    ['role unknown', messages(user, { role: 'robot', content: 'x' }), 'messages[1].role', 'invalid_value'],
    ['role a number', messages({ role: 1, content: 'x' }), 'messages[0].role', 'invalid_type'],
    ['content a number', messages(user, user, { role: 'user', content: 5 }), 'messages[2].content', 'invalid_type'],
    ['content an object', messages({ role: 'user', content: { text: 'x' } }), 'messages[0].content', 'invalid_type'],
    ['user content null', messages({ role: 'user', content: null }), 'messages[0].content', 'missing_required_parameter'],
    ['content parts empty', messages({ role: 'user', content: [] }), 'messages[0].content', 'invalid_value'],
    ['content part a string', messages({ role: 'user', content: ['hi'] }), 'messages[0].content[0]', 'invalid_type'],
    [
      'content part without type',
      messages({ role: 'user', content: [{ text: 'hi' }] }),
      'messages[0].content[0].type',
      'missing_required_parameter',
    ],
    ['content part type a number', messages({ role: 'user', content: [{ type: 1 }] }), 'messages[0].content[0].type', 'invalid_type'],
    [
      'text part without text',
      messages({ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text' }] }),
      'messages[0].content[1].text',
      'missing_required_parameter',
    ],
    [
      'text part text a number',
      messages({ role: 'user', content: [{ type: 'text', text: 7 }] }),
      'messages[0].content[0].text',
      'invalid_type',
    ],
    ['name a number', messages({ role: 'user', content: 'hi', name: 5 }), 'messages[0].name', 'invalid_type'],
    [
      'tool message without tool_call_id',
      messages(user, { role: 'tool', content: 'r' }),
      'messages[1].tool_call_id',
      'missing_required_parameter',
    ],
    ['tool_call_id a number', messages(user, { role: 'tool', content: 'r', tool_call_id: 1 }), 'messages[1].tool_call_id', 'invalid_type'],
    [
      'tool_calls not an array',
      messages(user, { role: 'assistant', content: null, tool_calls: toolCall }),
      'messages[1].tool_calls',
      'invalid_type',
    ],
    ['tool call not an object', withCall('call'), 'messages[1].tool_calls[0]', 'invalid_type'],
    ['tool call without id', withCall({ ...toolCall, id: undefined }), 'messages[1].tool_calls[0].id', 'missing_required_parameter'],
    ['tool call of another type', withCall({ ...toolCall, type: 'code' }), 'messages[1].tool_calls[0].type', 'invalid_value'],
    [
      'tool call without function',
      withCall({ id: 'c', type: 'function' }),
      'messages[1].tool_calls[0].function',
      'missing_required_parameter',
    ],
    [
      'tool call name a number',
      withCall({ ...toolCall, function: { name: 1, arguments: '{}' } }),
      'messages[1].tool_calls[0].function.name',
      'invalid_type',
    ],
    [
      'tool call arguments an object',
      withCall({ ...toolCall, function: { name: 'f', arguments: {} } }),
      'messages[1].tool_calls[0].function.arguments',
      'invalid_type',
    ],
    ['stream a string', body({ stream: 'true' }), 'stream', 'invalid_type'],
    ['stream_options without stream', body({ stream_options: { include_usage: true } }), 'stream_options', 'invalid_value'],
    ['stream_options with stream false', body({ stream: false, stream_options: {} }), 'stream_options', 'invalid_value'],
    ['stream_options a string', body({ stream: true, stream_options: 'usage' }), 'stream_options', 'invalid_type'],
    [
      'include_usage a string',
      body({ stream: true, stream_options: { include_usage: 'yes' } }),
      'stream_options.include_usage',
      'invalid_type',
    ],
    ['max_tokens -1', body({ max_tokens: -1 }), 'max_tokens', 'invalid_value'],
    ['max_tokens 0', body({ max_tokens: 0 }), 'max_tokens', 'invalid_value'],
    ['max_tokens 1.5', body({ max_tokens: 1.5 }), 'max_tokens', 'invalid_type'],
    [
      'max_tokens 1e400 (Infinity)',
      '{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":1e400}',
      'max_tokens',
      'invalid_type',
    ],
    ['max_tokens above 2^53', '{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":1e20}', 'max_tokens', 'invalid_value'],
    ['max_tokens a string', body({ max_tokens: '100' }), 'max_tokens', 'invalid_type'],
    ['max_completion_tokens 0', body({ max_completion_tokens: 0 }), 'max_completion_tokens', 'invalid_value'],
    [
      'max_tokens and max_completion_tokens differ',
      body({ max_tokens: 10, max_completion_tokens: 20 }),
      'max_completion_tokens',
      'invalid_value',
    ],
    ['temperature above 2', body({ temperature: 2.5 }), 'temperature', 'invalid_value'],
    ['temperature negative', body({ temperature: -0.1 }), 'temperature', 'invalid_value'],
    ['temperature a string', body({ temperature: '1' }), 'temperature', 'invalid_type'],
    ['temperature 1e400', '{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":1e400}', 'temperature', 'invalid_value'],
    ['top_p above 1', body({ top_p: 1.5 }), 'top_p', 'invalid_value'],
    ['presence_penalty above 2', body({ presence_penalty: 3 }), 'presence_penalty', 'invalid_value'],
    ['frequency_penalty below -2', body({ frequency_penalty: -2.5 }), 'frequency_penalty', 'invalid_value'],
    ['n 2', body({ n: 2 }), 'n', 'unsupported_parameter'],
    ['n 129', body({ n: 129 }), 'n', 'invalid_value'],
    ['n 0', body({ n: 0 }), 'n', 'invalid_value'],
    ['n 1.5', body({ n: 1.5 }), 'n', 'invalid_type'],
    ['seed 1.5', body({ seed: 1.5 }), 'seed', 'invalid_type'],
    [
      'seed beyond safe integers',
      '{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":18446744073709551615}',
      'seed',
      'invalid_value',
    ],
    ['seed a string', body({ seed: '7' }), 'seed', 'invalid_type'],
    ['stop five sequences', body({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'stop', 'array_above_max_length'],
    ['stop with a number', body({ stop: [1] }), 'stop[0]', 'invalid_type'],
    ['stop a number', body({ stop: 5 }), 'stop', 'invalid_type'],
    ['response_format a string', body({ response_format: 'json' }), 'response_format', 'invalid_type'],
    ['response_format unknown type', body({ response_format: { type: 'xml' } }), 'response_format.type', 'invalid_value'],
    ['response_format without type', body({ response_format: {} }), 'response_format.type', 'missing_required_parameter'],
    [
      'json_schema missing',
      body({ response_format: { type: 'json_schema' } }),
      'response_format.json_schema',
      'missing_required_parameter',
    ],
    [
      'json_schema name missing',
      body({ response_format: { type: 'json_schema', json_schema: { schema: {} } } }),
      'response_format.json_schema.name',
      'missing_required_parameter',
    ],
    [
      'json_schema name with spaces',
      body({ response_format: { type: 'json_schema', json_schema: { name: 'my schema', schema: {} } } }),
      'response_format.json_schema.name',
      'invalid_value',
    ],
    [
      'json_schema schema an array',
      body({ response_format: { type: 'json_schema', json_schema: { name: 's', schema: [] } } }),
      'response_format.json_schema.schema',
      'invalid_type',
    ],
    ['tools an object', body({ tools: weatherTool }), 'tools', 'invalid_type'],
    [
      '129 tools',
      body({ tools: Array.from({ length: 129 }, (_, index) => ({ type: 'function', function: { name: `f${index}` } })) }),
      'tools',
      'array_above_max_length',
    ],
    ['tool a string', body({ tools: ['get_weather'] }), 'tools[0]', 'invalid_type'],
    ['tool of another type', body({ tools: [weatherTool, { type: 'retrieval' }] }), 'tools[1].type', 'invalid_value'],
    ['tool without function', body({ tools: [{ type: 'function' }] }), 'tools[0].function', 'missing_required_parameter'],
    [
      'tool name with a bang',
      body({ tools: [{ type: 'function', function: { name: 'bad name!' } }] }),
      'tools[0].function.name',
      'invalid_value',
    ],
    [
      'tool name 65 characters',
      body({ tools: [{ type: 'function', function: { name: 'f'.repeat(65) } }] }),
      'tools[0].function.name',
      'invalid_value',
    ],
    [
      'tool description a number',
      body({ tools: [{ type: 'function', function: { name: 'f', description: 1 } }] }),
      'tools[0].function.description',
      'invalid_type',
    ],
    [
      'tool parameters an array',
      body({ tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] }),
      'tools[0].function.parameters',
      'invalid_type',
    ],
    [
      'tool parameters a string',
      body({ tools: [{ type: 'function', function: { name: 'f', parameters: '{}' } }] }),
      'tools[0].function.parameters',
      'invalid_type',
    ],
    [
      'tool strict a string',
      body({ tools: [{ type: 'function', function: { name: 'f', strict: 'yes' } }] }),
      'tools[0].function.strict',
      'invalid_type',
    ],
    ['two tools of one name', body({ tools: [weatherTool, weatherTool] }), 'tools[1].function.name', 'invalid_value'],
    ['tool_choice without tools', body({ tool_choice: 'auto' }), 'tool_choice', 'invalid_value'],
    ['tool_choice unknown word', withTool({ tool_choice: 'sometimes' }), 'tool_choice', 'invalid_value'],
    ['tool_choice a number', withTool({ tool_choice: 5 }), 'tool_choice', 'invalid_type'],
    ['tool_choice of another type', withTool({ tool_choice: { type: 'tool' } }), 'tool_choice.type', 'invalid_value'],
    ['tool_choice without function', withTool({ tool_choice: { type: 'function' } }), 'tool_choice.function', 'missing_required_parameter'],
    [
      'tool_choice naming a missing tool',
      withTool({ tool_choice: { type: 'function', function: { name: 'nope' } } }),
      'tool_choice.function.name',
      'invalid_value',
    ],
    ['parallel_tool_calls a string', body({ parallel_tool_calls: 'true' }), 'parallel_tool_calls', 'invalid_type'],
    ['user a number', body({ user: 5 }), 'user', 'invalid_type'],
    ['user 257 characters', body({ user: 'u'.repeat(257) }), 'user', 'invalid_value'],
    ['metadata a string', body({ metadata: 'x' }), 'metadata', 'invalid_type'],
    ['metadata an array', body({ metadata: [] }), 'metadata', 'invalid_type'],
    ['metadata 17 pairs', body({ metadata: manyPairs(17) }), 'metadata', 'invalid_value'],
    ['metadata key 65 characters', body({ metadata: { ['k'.repeat(65)]: 'v' } }), 'metadata', 'invalid_value'],
    ['metadata value a number', body({ metadata: { ok: 'v', team: 5 } }), 'metadata.team', 'invalid_type'],
    ['metadata value null', body({ metadata: { team: null } }), 'metadata.team', 'invalid_type'],
    ['metadata value 513 characters', body({ metadata: { team: 'v'.repeat(513) } }), 'metadata.team', 'invalid_value'],
    [
      'metadata __proto__ key',
      '{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"__proto__":"x"}}',
      'metadata',
      'invalid_value',
    ],
    [
      'metadata __proto__ object',
      '{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"__proto__":{"polluted":"yes"}}}',
      'metadata',
      'invalid_value',
    ],
    ['metadata constructor key', body({ metadata: { constructor: 'x' } }), 'metadata', 'invalid_value'],
    ['metadata prototype key', body({ metadata: { prototype: 'x' } }), 'metadata', 'invalid_value'],
    ['logit_bias an array', body({ logit_bias: [] }), 'logit_bias', 'invalid_type'],
    ['logit_bias above 100', body({ logit_bias: { '50256': 101 } }), 'logit_bias.50256', 'invalid_value'],
    ['logit_bias value a string', body({ logit_bias: { '1': 'x' } }), 'logit_bias.1', 'invalid_type'],
    ['logit_bias key not a token id', body({ logit_bias: { abc: 1 } }), 'logit_bias', 'invalid_value'],
    [
      'logit_bias __proto__ key',
      '{"model":"m","messages":[{"role":"user","content":"hi"}],"logit_bias":{"__proto__":1}}',
      'logit_bias',
      'invalid_value',
    ],
    [
      'logit_bias 301 entries',
      body({ logit_bias: Object.fromEntries(Array.from({ length: 301 }, (_, index) => [String(index), 1])) }),
      'logit_bias',
      'invalid_value',
    ],
    ['logprobs a string', body({ logprobs: 'true' }), 'logprobs', 'invalid_type'],
    ['top_logprobs 21', body({ logprobs: true, top_logprobs: 21 }), 'top_logprobs', 'invalid_value'],
    ['top_logprobs without logprobs', body({ top_logprobs: 5 }), 'top_logprobs', 'invalid_value'],
    ['top_logprobs with logprobs false', body({ logprobs: false, top_logprobs: 2 }), 'top_logprobs', 'invalid_value'],
    ['task with spaces and capitals', body({ task: 'Bad Task' }), 'task', 'invalid_value'],
    ['task empty', body({ task: '' }), 'task', 'invalid_value'],
    ['task a number', body({ task: 5 }), 'task', 'invalid_type'],
    ['task 64 characters', body({ task: 't'.repeat(64) }), 'task', 'invalid_value'],
    ['top_k -2', body({ top_k: -2 }), 'top_k', 'invalid_value'],
    ['top_k 1.5', body({ top_k: 1.5 }), 'top_k', 'invalid_type'],
    ['min_p above 1', body({ min_p: 1.5 }), 'min_p', 'invalid_value'],
    ['repetition_penalty 0', body({ repetition_penalty: 0 }), 'repetition_penalty', 'invalid_value'],
    ['repetition_penalty above 2', body({ repetition_penalty: 2.1 }), 'repetition_penalty', 'invalid_value'],
  ])('%s', (_case, text, param, code) => {
    const error = reject(text);
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe(param);
    expect(error.code).toBe(code);
    expect(error.message).toContain(param === '__proto__' ? '__proto__' : `${param.split(/[.[]/)[0]}`);
  });
});

describe('validateChatRequest with and without uncommon fields', () => {
  it('names the same first bad field whichever fields come with it', () => {
    // A platform field is checked before the sampling fields, the common sampling fields before the uncommon ones.
    expect(reject(body({ audio: { voice: 'alloy', format: 'mp3' }, temperature: 5 })).param).toBe('audio');
    expect(reject(body({ temperature: 5, seed: 'x' })).param).toBe('temperature');
    expect(reject(body({ temperature: 5 })).param).toBe('temperature');
    expect(reject(body({ top_p: 0.5, seed: 'x' })).param).toBe('seed');
  });

  it('gives the same request for the common fields, with or without an uncommon one beside them', () => {
    const common = { stream: true, stream_options: { include_usage: true }, max_completion_tokens: 9, temperature: 0.3, top_p: 0.9 };
    const alone = accept(body(common));
    const { user: sentUser, ...beside } = accept(body({ ...common, user: 'u-1' }));
    expect(sentUser).toBe('u-1');
    expect(beside).toEqual(alone);
    expect(alone).toEqual({
      ...minimal,
      messages: [user],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 9,
      temperature: 0.3,
      top_p: 0.9,
    });
  });
});

describe('validateChatRequest messages say what is wrong', () => {
  it.each<[string, string]>([
    [
      messages(user, user, { role: 'user', content: 5 }),
      "Invalid type for 'messages[2].content': expected a string or an array of content parts, got a number.",
    ],
    [body({ foo: 1 }), 'Unrecognized request argument supplied: foo'],
    [JSON.stringify({ messages: [user] }), 'you must provide a model parameter'],
    [
      messages({ role: 'robot', content: 'x' }),
      `Invalid value for 'messages[0].role': expected one of 'system', 'developer', 'user', 'assistant', 'tool', 'function', got "robot".`,
    ],
    [
      body({ n: 3 }),
      "Unsupported value for 'n': taskgate's engines generate one choice per call, so only n=1 is supported, got 3. Make 3 calls instead.",
    ],
    [body({ max_tokens: 0 }), "Invalid value for 'max_tokens': must be at least 1, got 0."],
    [body({ stream: 'true' }), "Invalid type for 'stream': expected a boolean, got a string."],
    [body({ metadata: { team: 5 } }), "Invalid type for 'metadata.team': expected a string, got a number."],
    [body({ task: 'Bad Task' }), `Invalid value for 'task': expected a workload name matching ^[a-z0-9_-]{1,63}$, got "Bad Task".`],
  ])('%s', (text, message) => {
    expect(reject(text).message).toBe(message);
  });

  it('cuts long values out of messages', () => {
    for (const text of [
      body({ task: 'x'.repeat(10_000) }),
      body({ ['y'.repeat(10_000)]: 1 }),
      body({ metadata: { ['k'.repeat(10_000)]: 'v' } }),
    ]) {
      const error = reject(text);
      expect(error.message.length).toBeLessThan(300);
      expect((error.param ?? '').length).toBeLessThanOrEqual(65);
    }
    expect(reject(body({ task: 'x'.repeat(10_000) })).message).toContain('^[a-z0-9_-]{1,63}$');
  });
});

describe('validateChatRequest accepts valid requests', () => {
  it('keeps a minimal request as sent, with stream false', () => {
    expect(accept(JSON.stringify(minimal))).toStrictEqual({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: false });
  });

  it('treats the nulls SDKs send as absent', () => {
    const nulls = Object.fromEntries(
      [
        'stream',
        'stream_options',
        'max_tokens',
        'max_completion_tokens',
        'temperature',
        'top_p',
        'stop',
        'response_format',
        'tools',
        'tool_choice',
        'parallel_tool_calls',
        'seed',
        'user',
        'metadata',
        'n',
        'presence_penalty',
        'frequency_penalty',
        'logit_bias',
        'logprobs',
        'top_logprobs',
        'task',
        'top_k',
        'min_p',
        'repetition_penalty',
        'reasoning_effort',
        'verbosity',
        'functions',
        'function_call',
        'store',
        'service_tier',
        'prompt_cache_key',
        'prompt_cache_options',
        'prompt_cache_retention',
        'safety_identifier',
        'moderation',
        'prediction',
        'modalities',
        'audio',
        'web_search_options',
      ].map((field) => [field, null]),
    );
    const request = accept(body({ ...nulls, messages: [{ role: 'system', content: 'be brief', name: null }, user] }));
    expect(request).toStrictEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
      stream: false,
    });
  });

  it('normalises a full request and keeps only known fields', () => {
    const request = accept(
      body({
        model: 'qwen/qwen2.5-7b-instruct',
        messages: [
          { role: 'developer', content: 'rules', name: 'ops' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look', cache_control: { type: 'ephemeral' } },
              { type: 'image_url', image_url: { url: 'data:,', detail: 'low' } },
            ],
          },
          { role: 'assistant', content: 'ok', refusal: null, audio: null },
        ],
        stream: true,
        stream_options: { include_usage: true, include_obfuscation: false },
        max_completion_tokens: 512,
        temperature: 0.7,
        top_p: 0.9,
        stop: 'END',
        seed: -3,
        user: 'tenant-1',
        metadata: { team: 'search', run: '42' },
        n: 1,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        logit_bias: { '50256': -100 },
        logprobs: true,
        top_logprobs: 3,
        task: 'rank_v2',
        top_k: -1,
        min_p: 0.05,
        repetition_penalty: 1.1,
      }),
    );
    expect(request).toEqual({
      model: 'qwen/qwen2.5-7b-instruct',
      messages: [
        { role: 'developer', content: 'rules', name: 'ops' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:,', detail: 'low' } },
          ],
        },
        { role: 'assistant', content: 'ok' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 512,
      temperature: 0.7,
      top_p: 0.9,
      stop: ['END'],
      seed: -3,
      user: 'tenant-1',
      metadata: { team: 'search', run: '42' },
      n: 1,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      logit_bias: { '50256': -100 },
      logprobs: true,
      top_logprobs: 3,
      task: 'rank_v2',
      top_k: -1,
      min_p: 0.05,
      repetition_penalty: 1.1,
      notes: { ignoredFields: ['stream_options.include_obfuscation'], customTools: [], legacyFunctions: false },
    });
    expect(request).not.toHaveProperty('max_completion_tokens');
    expect(Object.getPrototypeOf(request.metadata)).toBeNull();
    expect(Object.getPrototypeOf(request.logit_bias)).toBeNull();
  });

  it('keeps max_tokens alone, and accepts both limits when equal', () => {
    expect(accept(body({ max_tokens: 64 })).max_tokens).toBe(64);
    expect(accept(body({ max_tokens: 64, max_completion_tokens: 64 })).max_tokens).toBe(64);
  });

  it('accepts tools, a named tool_choice, tool calls and tool results', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const request = accept(
      body({
        messages: [
          user,
          { role: 'assistant', content: null, tool_calls: [toolCall] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"t":21}' },
        ],
        tools: [
          { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters, strict: true } },
          { type: 'function', function: { name: 'noop' } },
        ],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        parallel_tool_calls: false,
      }),
    );
    expect(request).toStrictEqual({
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, tool_calls: [toolCall] },
        { role: 'tool', content: '{"t":21}', tool_call_id: 'call_1' },
      ],
      stream: false,
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters, strict: true } },
        { type: 'function', function: { name: 'noop' } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    for (const choice of ['auto', 'none', 'required']) expect(accept(withTool({ tool_choice: choice })).tool_choice).toBe(choice);
  });

  it('accepts a json_schema response format', () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string', enum: ['yes', 'no'] } },
      required: ['answer'],
      additionalProperties: false,
    };
    expect(
      accept(body({ response_format: { type: 'json_schema', json_schema: { name: 'verdict', description: 'd', schema, strict: true } } }))
        .response_format,
    ).toStrictEqual({ type: 'json_schema', json_schema: { name: 'verdict', description: 'd', schema, strict: true } });
    expect(accept(body({ response_format: { type: 'json_object' } })).response_format).toStrictEqual({ type: 'json_object' });
  });

  it('keeps NUL and other control characters in content', () => {
    const request = accept('{"model":"m","messages":[{"role":"user","content":"a\\u0000b\\u0001c"}],"metadata":{"k":"\\u0000"}}');
    expect(request.messages[0]?.content).toBe('a\u0000b\u0001c');
    expect(request.metadata?.k).toBe('\u0000');
  });

  it("accepts what OpenAI's schema allows and older taskgate refused", () => {
    expect(accept(messages(user, { role: 'assistant' })).messages[1]).toStrictEqual({ role: 'assistant', content: null });
    expect(accept(messages(user, { role: 'assistant', content: null, tool_calls: [] })).messages[1]).toStrictEqual({
      role: 'assistant',
      content: null,
    });
    expect(accept(body({ response_format: { type: 'json_schema', json_schema: { name: 's' } } })).response_format).toStrictEqual({
      type: 'json_schema',
      json_schema: { name: 's' },
    });
    expect(accept(body({ metadata: { '': 'v' } })).metadata).toEqual({ '': 'v' });
  });

  it('drops empty stop sequences, which can stop nothing', () => {
    expect(accept(body({ stop: ['a', ''] })).stop).toStrictEqual(['a']);
    expect(accept(body({ stop: '' }))).not.toHaveProperty('stop');
    expect(accept(body({ stop: ['', ''] }))).not.toHaveProperty('stop');
  });

  it('accepts an empty stop or tools list as none, and a 64-level tool schema', () => {
    const request = accept(body({ stop: [], tools: [] }));
    expect(request).not.toHaveProperty('stop');
    expect(request).not.toHaveProperty('tools');
    // body 1 > tools 2 > tool 3 > function 4 > parameters 5 … 64
    const deep = '{"a":'.repeat(59) + '1' + '}'.repeat(59);
    const text = `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${deep}}}]}`;
    expect(JSON.stringify(accept(text))).toContain('{"a":{"a":');
  });

  it('does not alias the input for the fields it rebuilds', () => {
    const input = parseJsonObject(body({ messages: [{ role: 'user', content: 'hi', extra: 1 }], stop: ['x'] }));
    const request = validateChatRequest(input);
    const sent = input.messages as Array<Record<string, unknown>>;
    sent[0]!.content = 'changed';
    (input.stop as string[]).push('y');
    expect(request.messages[0]).toStrictEqual({ role: 'user', content: 'hi' });
    expect(request.stop).toStrictEqual(['x']);
  });
});

describe('validateChatRequest and __proto__', () => {
  it('never pollutes Object.prototype and keeps a schema __proto__ as data', () => {
    const text =
      '{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://u.example/a.png"},"__proto__":{"polluted":1}}],"__proto__":{"polluted":1}}],' +
      '"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","__proto__":{"polluted":true},"properties":{"__proto__":{"type":"string"}}}}}]}';
    const request = accept(text);
    const parameters = request.tools?.[0]?.function.parameters ?? {};
    expect(Object.hasOwn(parameters, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(parameters)).toBe(Object.prototype);
    expect(JSON.stringify(request.tools)).toBe(
      '[{"type":"function","function":{"name":"f","parameters":{"type":"object","__proto__":{"polluted":true},"properties":{"__proto__":{"type":"string"}}}}}]',
    );
    // Unknown message and part fields are dropped: parts are rebuilt from their known fields.
    expect(Object.hasOwn(request.messages[0]!, '__proto__')).toBe(false);
    expect(request.messages[0]?.content).toStrictEqual([{ type: 'image_url', image_url: { url: 'https://u.example/a.png' } }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('rejects __proto__ in metadata without polluting anything', () => {
    const error = reject('{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"a":"1","__proto__":{"polluted":"x"}}}');
    expect(error.param).toBe('metadata');
    expect(error.message).toContain("'__proto__' is reserved");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
