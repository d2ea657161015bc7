import { describe, expect, it } from 'vitest';
import { EngineError } from '../api/errors.js';
import type { EngineRequest } from './engine.js';
import { parseChatCompletion, parseStreamEvent, serializeChatRequest } from './openai-wire.js';

const base: EngineRequest = { model: 'upstream', messages: [{ role: 'user', content: 'hi' }] };
const sent = (request: EngineRequest) => JSON.parse(serializeChatRequest(request, false)) as Record<string, unknown>;
const completion = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) => JSON.stringify({ id: 'x', choices: [{ index: 0, ...choice }], ...extra });

describe('serializeChatRequest', () => {
  it('writes the model, the messages, stream and every forwarded field set, in order, as JSON.stringify would, and nothing else', () => {
    const full: EngineRequest = {
      model: 'upstream', messages: [{ role: 'developer', content: 'be "brief"' }, { role: 'user', content: 'hi\u2028' }],
      max_tokens: 5, temperature: 0, top_p: 0.5, stop: ['\n'], seed: 3, response_format: { type: 'json_object' },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], tool_choice: 'auto', parallel_tool_calls: false,
      user: 'u', n: 1, presence_penalty: -1, frequency_penalty: 1.5, logit_bias: { '50256': -100 }, logprobs: true, top_logprobs: 2,
      reasoning_effort: 'low', verbosity: 'high', top_k: 40, min_p: 0.05, repetition_penalty: 1.1,
    };
    const { model, messages, ...rest } = full;
    const developerAsSystem = [{ role: 'system', content: 'be "brief"' }, messages[1]];
    expect(serializeChatRequest(full, true)).toBe(JSON.stringify({ model, messages: developerAsSystem, stream: true, stream_options: { include_usage: true }, ...rest }));
    expect(serializeChatRequest(full, false)).toBe(JSON.stringify({ model, messages: developerAsSystem, stream: false, ...rest }));
    // Unset, undefined and the gateway's own fields stay home; null is sent as null.
    const sparse = { ...base, temperature: undefined, stop: null, task: 'mine', metadata: { a: 'b' }, stream: true } as unknown as EngineRequest;
    expect(serializeChatRequest(sparse, false)).toBe('{"model":"upstream","messages":[{"role":"user","content":"hi"}],"stream":false,"stop":null}');
  });

  it('passes reasoning_effort and verbosity on', () => {
    expect(sent({ ...base, reasoning_effort: 'low', verbosity: 'high' })).toMatchObject({ reasoning_effort: 'low', verbosity: 'high' });
    expect(sent(base)).not.toHaveProperty('reasoning_effort');
  });

  it('keeps a seed of ±2^63 (int64\'s extremes as parsed) inside int64 on the wire', () => {
    expect(serializeChatRequest({ ...base, seed: 2 ** 63 }, false)).toContain('"seed":9223372036854775000');
    expect(serializeChatRequest({ ...base, seed: -(2 ** 63) }, false)).toContain('"seed":-9223372036854775000');
    expect(serializeChatRequest({ ...base, seed: 2 ** 62 }, false)).toContain('"seed":4611686018427388000');
    expect(sent({ ...base, seed: 7 }).seed).toBe(7);
  });
});

describe('parseChatCompletion', () => {
  it('rebuilds usage as OpenAI\'s CompletionUsage: integer counts, no null details, no extra fields', () => {
    const parsed = parseChatCompletion(
      completion(
        { message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' },
        { usage: { prompt_tokens: 3, completion_tokens: 2, prompt_tokens_details: null, completion_tokens_details: { reasoning_tokens: 1, audio_tokens: null, text_tokens: 'x' }, cost: 0.1 } },
      ),
      'e',
    );
    expect(parsed.usage).toStrictEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, completion_tokens_details: { reasoning_tokens: 1 } });
  });

  it('gives logprobs both lists, and none when there are none', () => {
    const withLogprobs = parseChatCompletion(completion({ message: { content: 'x' }, logprobs: { content: [{ token: 'x', logprob: 0, bytes: null, top_logprobs: [] }] } }), 'e');
    expect(withLogprobs.choices[0]?.logprobs).toStrictEqual({ content: [{ token: 'x', logprob: 0, bytes: null, top_logprobs: [] }], refusal: null });
    expect(parseChatCompletion(completion({ message: { content: 'x' }, logprobs: null }), 'e').choices[0]?.logprobs).toBeUndefined();
  });

  it('rebuilds tool calls: object arguments as text, a missing id made up, a custom call in function form', () => {
    const parsed = parseChatCompletion(
      completion({
        message: {
          content: null,
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'f', arguments: { city: 'Oslo' } }, extra: 1 },
            { function: { name: 'g' } },
            { id: 'c', type: 'custom', custom: { name: 'sql', input: 'SELECT 1' } },
          ],
        },
      }),
      'e',
    );
    const calls = parsed.choices[0]?.message.tool_calls;
    expect(calls?.[0]).toStrictEqual({ id: 'a', type: 'function', function: { name: 'f', arguments: '{"city":"Oslo"}' } });
    expect(calls?.[1]).toMatchObject({ type: 'function', function: { name: 'g', arguments: '{}' } });
    expect(calls?.[1]?.id).toMatch(/^call_/);
    expect(calls?.[2]).toStrictEqual({ id: 'c', type: 'function', function: { name: 'sql', arguments: '{"input":"SELECT 1"}' } });
  });

  it('refuses a tool call without a function name', () => {
    expect(() => parseChatCompletion(completion({ message: { tool_calls: [{ id: 'a', function: {} }] } }), 'e')).toThrow(EngineError);
  });
});

describe('parseStreamEvent', () => {
  it('rebuilds tool-call deltas with OpenAI\'s chunk fields only, and logprobs with both lists', () => {
    const chunk = parseStreamEvent(
      JSON.stringify({
        choices: [{
          index: 0,
          delta: { tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: { q: 1 } }, extra: true }, { function: { arguments: '}' } }, 'junk'] },
          logprobs: { content: [] },
          finish_reason: null,
        }],
      }),
      'e',
    );
    expect(chunk?.choices[0]).toStrictEqual({
      index: 0,
      delta: { tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{"q":1}' } }, { index: 1, function: { arguments: '}' } }] },
      finish_reason: null,
      logprobs: { content: [], refusal: null },
    });
  });
});
