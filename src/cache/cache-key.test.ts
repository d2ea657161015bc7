import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { requestArbitrary } from '../../test/helpers/chat-request-arbitrary.js';
import type { ChatCompletionRequest } from '../api/chat-types.js';
import { validateChatRequest } from '../api/validate-chat-request.js';
import { CACHE_KEY_FIELDS, cacheKey, FIELDS_NOT_IN_CACHE_KEY, isRepeatable, type RequestField } from './cache-key.js';
import { canonicalJson } from './canonical-json.js';

/** Validated requests generated from OpenAI's request schema (`chat-request-arbitrary.ts`), as the handler has them. */
const validatedRequest: fc.Arbitrary<ChatCompletionRequest> = requestArbitrary('some-model', { unservable: false }).map((body) =>
  validateChatRequest(body),
);

const keyOf = (request: ChatCompletionRequest, overrides: { accountId?: string; environment?: string; model?: string } = {}) =>
  cacheKey({ accountId: 'acct_1', environment: 'production', model: 'qwen2.5-0.5b-instruct', request, ...overrides });

/** A deep copy with every object's keys in reverse order (what another client's JSON encoder might send). */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) copy[key] = reversedKeys((value as Record<string, unknown>)[key]);
  return copy;
}

/** The request fields the key leaves out. */
const NOT_KEYED = ['user', 'model', 'stream', 'stream_options', 'task', 'metadata', 'notes'] as const;

/**
 * For each field in the key, a change to another value of the kind the
 * request holds there. A record over the keyed fields, so the test fails to
 * compile if a field joins the key without a way to change it here.
 */
const changeOf: Record<Exclude<RequestField, (typeof NOT_KEYED)[number]>, (request: ChatCompletionRequest) => void> = {
  messages: (request) => void request.messages.push({ role: 'user', content: 'one more thing' }),
  max_tokens: (request) => void (request.max_tokens = request.max_tokens === 1 ? 2 : 1),
  temperature: (request) => void (request.temperature = request.temperature === 1 ? 0.5 : 1),
  top_p: (request) => void (request.top_p = request.top_p === 1 ? 0.5 : 1),
  stop: (request) => void (request.stop = [...(request.stop ?? []), 'STOP-HERE']),
  seed: (request) => void (request.seed = request.seed === 1 ? 2 : 1),
  response_format: (request) =>
    void (request.response_format = request.response_format?.type === 'json_object' ? { type: 'text' } : { type: 'json_object' }),
  tools: (request) => void (request.tools = [...(request.tools ?? []), { type: 'function', function: { name: 'added_for_the_key_test' } }]),
  tool_choice: (request) => void (request.tool_choice = request.tool_choice === 'none' ? 'required' : 'none'),
  parallel_tool_calls: (request) => void (request.parallel_tool_calls = request.parallel_tool_calls === false),
  n: (request) => void (request.n = request.n === 1 ? 2 : 1),
  presence_penalty: (request) => void (request.presence_penalty = request.presence_penalty === 1 ? 0.5 : 1),
  frequency_penalty: (request) => void (request.frequency_penalty = request.frequency_penalty === 1 ? 0.5 : 1),
  logit_bias: (request) => void (request.logit_bias = { ...request.logit_bias, 424242: request.logit_bias?.['424242'] === 7 ? -7 : 7 }),
  logprobs: (request) => void (request.logprobs = request.logprobs !== true),
  top_logprobs: (request) => void (request.top_logprobs = request.top_logprobs === 1 ? 2 : 1),
  reasoning_effort: (request) => void (request.reasoning_effort = request.reasoning_effort === 'high' ? 'low' : 'high'),
  verbosity: (request) => void (request.verbosity = request.verbosity === 'high' ? 'low' : 'high'),
  top_k: (request) => void (request.top_k = request.top_k === 1 ? 2 : 1),
  min_p: (request) => void (request.min_p = request.min_p === 0.5 ? 0.25 : 0.5),
  repetition_penalty: (request) => void (request.repetition_penalty = request.repetition_penalty === 1.5 ? 1.25 : 1.5),
};

describe('cacheKey', () => {
  it('keys exactly the fields that reach the engine, less user; leaves out how the reply travels and what labels it', () => {
    expect([...FIELDS_NOT_IN_CACHE_KEY].sort()).toEqual([...NOT_KEYED].sort());
    expect([...CACHE_KEY_FIELDS].sort()).toEqual(Object.keys(changeOf).sort());
  });

  it('is a SHA-256 in hex, the same for the same call', () => {
    const request = validateChatRequest({ model: 'm', messages: [{ role: 'user', content: 'Hi' }], temperature: 0 });
    const key = keyOf(request);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(keyOf(validateChatRequest({ temperature: 0, messages: [{ content: 'Hi', role: 'user' }], model: 'm' }))).toBe(key);
  });

  it('ignores stream, stream_options, user, metadata, task, the requested model name, notes and the order of keys at every depth', () => {
    fc.assert(
      fc.property(validatedRequest, fc.boolean(), (request, stream) => {
        const variant = reversedKeys(request) as ChatCompletionRequest;
        variant.stream = stream;
        if (stream) variant.stream_options = { include_usage: true };
        else delete variant.stream_options;
        variant.user = `${request.user ?? ''}-someone-else`;
        variant.metadata = { ...request.metadata, label: 'another' };
        variant.task = `${request.task ?? 'task'}-renamed`;
        variant.model = 'another-name-for-the-same-model';
        variant.notes = { ignoredFields: ['store'], customTools: ['not_a_tool'], legacyFunctions: true };
        expect(keyOf(variant)).toBe(keyOf(request));
      }),
      { seed: 20_260_301, numRuns: 150 },
    );
  });

  it('changes when any field in the key changes', () => {
    fc.assert(
      fc.property(validatedRequest, fc.constantFrom(...(Object.keys(changeOf) as Array<keyof typeof changeOf>)), (request, field) => {
        const changed = structuredClone(request);
        changeOf[field](changed);
        expect(keyOf(changed), field).not.toBe(keyOf(request));
      }),
      { seed: 20_260_302, numRuns: 300 },
    );
  });

  it('changes with a change deep inside a field: a message part, a tool schema, a response schema', () => {
    const base = {
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      ],
      tools: [
        { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'reply', schema: { type: 'object', properties: { answer: { type: 'string' } } } },
      },
    };
    const key = keyOf(validateChatRequest(structuredClone(base)));
    const variants: Array<(body: typeof base) => void> = [
      (body) => void ((body.messages[1]!.content as Array<{ text: string }>)[0]!.text = 'Weather!'),
      (body) => void (body.messages[0]!.role = 'developer'),
      (body) => void (body.tools[0]!.function.parameters.properties.city.type = 'number'),
      (body) => void (body.response_format.json_schema.schema.properties.answer.type = 'integer'),
      (body) => void body.messages.reverse(),
    ];
    for (const change of variants) {
      const body = structuredClone(base);
      change(body);
      expect(keyOf(validateChatRequest(body)), change.toString()).not.toBe(key);
    }
  });

  it('differs between accounts, environments and served models', () => {
    const request = validateChatRequest({ model: 'm', messages: [{ role: 'user', content: 'Hi' }], seed: 1 });
    const keys = new Set([
      keyOf(request),
      keyOf(request, { accountId: 'acct_2' }),
      keyOf(request, { environment: 'staging' }),
      keyOf(request, { model: 'llama-3.2-1b-instruct' }),
    ]);
    expect(keys.size).toBe(4);
  });

  it('keys max_completion_tokens and max_tokens as one limit, and an absent field apart from its default', () => {
    const messages = [{ role: 'user', content: 'Hi' }];
    expect(keyOf(validateChatRequest({ model: 'm', messages, max_completion_tokens: 50 }))).toBe(
      keyOf(validateChatRequest({ model: 'm', messages, max_tokens: 50 })),
    );
    expect(keyOf(validateChatRequest({ model: 'm', messages, temperature: 1 }))).not.toBe(
      keyOf(validateChatRequest({ model: 'm', messages })),
    );
  });
});

describe('isRepeatable', () => {
  it('is true for temperature 0 or any seed, and false otherwise', () => {
    expect(isRepeatable({ temperature: 0 })).toBe(true);
    expect(isRepeatable({ seed: 0 })).toBe(true);
    expect(isRepeatable({ temperature: 0.7, seed: 42 })).toBe(true);
    expect(isRepeatable({})).toBe(false);
    expect(isRepeatable({ temperature: 0.0001 })).toBe(false);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every depth, drops undefined members and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined, x: null }], c: 'é"' }, e: undefined })).toBe(
      '{"a":{"c":"é\\"","d":[3,{"x":null,"z":1}]},"b":1}',
    );
    expect(canonicalJson([undefined, -0, 'x'])).toBe('[null,0,"x"]');
    expect(canonicalJson(Object.assign(Object.create(null) as object, { b: 2, a: 1 }))).toBe('{"a":1,"b":2}');
  });

  it('writes the value JSON writes, whatever the order of its keys', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(reversedKeys(value))).toBe(text);
      }),
      { seed: 20_260_303, numRuns: 300 },
    );
  });
});
