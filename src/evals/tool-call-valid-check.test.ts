import { describe, expect, it } from 'vitest';
import type { AssistantMessage, FunctionTool, GenerationParameters, ToolCall } from '../api/chat-types.js';
import { evaluateToolCallValid } from './tool-call-valid-check.js';

const weather: FunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { enum: ['c', 'f'] } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};
const time: FunctionTool = { type: 'function', function: { name: 'get_time' } };
const base: GenerationParameters = { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weather, time] };

const call = (name: string, args: string, id = 'call_1'): ToolCall => ({ id, type: 'function', function: { name, arguments: args } });
const calling = (...calls: ToolCall[]): AssistantMessage => ({ role: 'assistant', content: null, tool_calls: calls });
const text = (content: string): AssistantMessage => ({ role: 'assistant', content });
const evaluate = (candidate: AssistantMessage, request: Partial<GenerationParameters> = {}, reference: AssistantMessage | null = null) =>
  evaluateToolCallValid({ type: 'tool_call_valid' }, { request: { ...base, ...request }, reference, candidate });

describe('tool_call_valid check', () => {
  it('passes calls of offered tools with valid arguments', () => {
    expect(evaluate(calling(call('get_weather', '{"city":"Paris","unit":"c"}')))).toEqual({ verdict: 'pass' });
    // A tool without parameters takes any JSON object.
    expect(evaluate(calling(call('get_weather', '{"city":"Paris"}'), call('get_time', '{"zone":"CET"}', 'call_2')))).toEqual({
      verdict: 'pass',
    });
  });

  it.each<[string, AssistantMessage, Partial<GenerationParameters>, string]>([
    [
      'an unknown tool',
      calling(call('get_news', '{}')),
      {},
      'tool_calls[0]: calls "get_news", which is not an offered tool (offered: get_weather, get_time)',
    ],
    [
      'any tool when none are offered',
      calling(call('get_weather', '{"city":"Paris"}')),
      { tools: undefined },
      'tool_calls[0]: calls "get_weather", which is not an offered tool (none are offered)',
    ],
    [
      'arguments that are not JSON',
      calling(call('get_weather', '{"city": Paris}')),
      {},
      'tool_calls[0]: arguments of "get_weather" are not valid JSON (',
    ],
    ['empty arguments', calling(call('get_time', '')), {}, 'tool_calls[0]: arguments of "get_time" are not valid JSON ('],
    [
      'arguments that are not an object',
      calling(call('get_time', '[1]')),
      {},
      'tool_calls[0]: arguments of "get_time" are not a JSON object: "[1]"',
    ],
    [
      'arguments against the schema',
      calling(call('get_weather', '{"city":"Paris","unit":"k"}')),
      {},
      'tool_calls[0]: arguments of "get_weather" do not match its parameters at /unit: must be equal to one of the allowed values',
    ],
    [
      'a missing required argument',
      calling(call('get_time', '{}'), call('get_weather', '{}', 'call_2')),
      {},
      'tool_calls[1]: arguments of "get_weather" do not match its parameters at (root): must have required property \'city\'',
    ],
    [
      'a call when tool_choice is none',
      calling(call('get_time', '{}')),
      { tool_choice: 'none' },
      'tool_choice is "none" but the reply calls a tool',
    ],
    [
      'another tool than tool_choice names',
      calling(call('get_time', '{}')),
      { tool_choice: { type: 'function', function: { name: 'get_weather' } } },
      'tool_calls[0]: calls "get_time" but tool_choice names "get_weather"',
    ],
    [
      'parallel calls when parallel_tool_calls is false',
      calling(call('get_time', '{}'), call('get_time', '{}', 'call_2')),
      { parallel_tool_calls: false },
      'parallel_tool_calls is false but the reply makes 2 calls',
    ],
    [
      'no call when tool_choice is required',
      text('It is sunny.'),
      { tool_choice: 'required' },
      'tool_choice is "required" but the reply calls no tool',
    ],
    [
      'no call when tool_choice names a function',
      text('It is sunny.'),
      { tool_choice: { type: 'function', function: { name: 'get_weather' } } },
      'tool_choice names "get_weather" but the reply calls no tool',
    ],
  ])('fails %s', (_case, candidate, request, reason) => {
    const outcome = evaluate(candidate, request);
    expect(outcome.verdict).toBe('fail');
    expect(outcome.verdict === 'fail' && outcome.reason).toContain(reason);
  });

  it('fails a reply without calls when the reference called a tool', () => {
    expect(evaluate(text('It is sunny.'), {}, calling(call('get_weather', '{"city":"Paris"}')))).toEqual({
      verdict: 'fail',
      reason: 'the reference reply calls a tool; this reply calls none',
    });
  });

  it('is not applicable when neither the reply nor the reference calls a tool', () => {
    expect(evaluate(text('It is sunny.')).verdict).toBe('not_applicable');
    expect(evaluate(text('It is sunny.'), {}, text('Sunny.')).verdict).toBe('not_applicable');
  });

  it('is not applicable when a called tool has a parameters schema that does not compile, unless a call fails', () => {
    const broken: FunctionTool = { type: 'function', function: { name: 'broken', parameters: { type: 'strin' } } };
    const tools = [weather, broken];
    const outcome = evaluate(calling(call('broken', '{}')), { tools });
    expect(outcome.verdict).toBe('not_applicable');
    expect(outcome.verdict === 'not_applicable' && outcome.reason).toContain(
      'tool_calls[0]: the parameters schema of "broken" does not compile',
    );
    expect(evaluate(calling(call('broken', '{}'), call('get_weather', '{}', 'call_2')), { tools }).verdict).toBe('fail');
  });
});
