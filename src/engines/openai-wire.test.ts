import { describe, expect, it } from 'vitest';
import { EngineError } from '../api/errors.js';
import { parseChatCompletion, parseStreamEvent } from './openai-wire.js';

const completion = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'x', choices: [{ index: 0, ...choice }], ...extra });

describe('parseChatCompletion', () => {
  it("rebuilds usage as OpenAI's CompletionUsage: integer counts, no null details, no extra fields", () => {
    const parsed = parseChatCompletion(
      completion(
        { message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' },
        {
          usage: {
            prompt_tokens: 3,
            completion_tokens: 2,
            prompt_tokens_details: null,
            completion_tokens_details: { reasoning_tokens: 1, audio_tokens: null, text_tokens: 'x' },
            cost: 0.1,
          },
        },
      ),
      'e',
    );
    expect(parsed.usage).toStrictEqual({
      prompt_tokens: 3,
      completion_tokens: 2,
      total_tokens: 5,
      completion_tokens_details: { reasoning_tokens: 1 },
    });
  });

  it('gives logprobs both lists, and none when there are none', () => {
    const withLogprobs = parseChatCompletion(
      completion({ message: { content: 'x' }, logprobs: { content: [{ token: 'x', logprob: 0, bytes: null, top_logprobs: [] }] } }),
      'e',
    );
    expect(withLogprobs.choices[0]?.logprobs).toStrictEqual({
      content: [{ token: 'x', logprob: 0, bytes: null, top_logprobs: [] }],
      refusal: null,
    });
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
  it("rebuilds tool-call deltas with OpenAI's chunk fields only, and logprobs with both lists", () => {
    const chunk = parseStreamEvent(
      JSON.stringify({
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { id: 'a', type: 'function', function: { name: 'f', arguments: { q: 1 } }, extra: true },
                { function: { arguments: '}' } },
                'junk',
              ],
            },
            logprobs: { content: [] },
            finish_reason: null,
          },
        ],
      }),
      'e',
    );
    expect(chunk?.choices[0]).toStrictEqual({
      index: 0,
      delta: {
        tool_calls: [
          { index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{"q":1}' } },
          { index: 1, function: { arguments: '}' } },
        ],
      },
      finish_reason: null,
      logprobs: { content: [], refusal: null },
    });
  });
});
