import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors.js';
import { validateChatRequest } from './validate-chat-request.js';
import { invalidRequestOf } from '../../test/helpers/invalid-request.js';

const request = (messages: unknown[], fields: Record<string, unknown> = {}) => validateChatRequest({ model: 'm', messages, ...fields });
const rejected = (messages: unknown[]): InvalidRequestError => invalidRequestOf(() => request(messages));

const user = { role: 'user', content: 'Weather in Rome?' };

describe('legacy function calling in the history', () => {
  it('makes an assistant function_call its one tool call, and a function message the tool message answering it', () => {
    const messages = request([
      user,
      { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
      { role: 'function', name: 'get_weather', content: '{"t":30}' },
      { role: 'assistant', content: null, function_call: { name: 'get_time', arguments: '{}' } },
      { role: 'function', name: 'get_time', content: null },
    ]).messages;
    expect(messages.slice(1)).toStrictEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_legacy_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }],
      },
      { role: 'tool', content: '{"t":30}', tool_call_id: 'call_legacy_1' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_legacy_3', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
      },
      { role: 'tool', content: '', tool_call_id: 'call_legacy_3' },
    ]);
  });

  it('answers the latest call of that name, including a tool call; a result with no call gets an id of its own', () => {
    const messages = request([
      user,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
      },
      { role: 'function', name: 'get_weather', content: 'sunny' },
      { role: 'function', name: 'never_called', content: 'x' },
    ]).messages;
    expect(messages[2]).toStrictEqual({ role: 'tool', content: 'sunny', tool_call_id: 'call_a' });
    expect(messages[3]).toStrictEqual({ role: 'tool', content: 'x', tool_call_id: 'call_legacy_3' });
  });

  it('ignores an assistant function_call next to tool_calls, and says so', () => {
    const checked = request([
      user,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
        function_call: { name: 'g', arguments: '{}' },
      },
    ]);
    expect(checked.messages[1]?.tool_calls).toStrictEqual([{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }]);
    expect(checked.notes?.ignoredFields).toStrictEqual(['messages[].function_call']);
  });

  it.each<[string, unknown, string]>([
    ['a function message without name', { role: 'function', content: 'x' }, 'messages[1].name'],
    ['a function message without content', { role: 'function', name: 'f' }, 'messages[1].content'],
    ['a function message with parts', { role: 'function', name: 'f', content: [{ type: 'text', text: 'x' }] }, 'messages[1].content'],
    ['a function_call without arguments', { role: 'assistant', function_call: { name: 'f' } }, 'messages[1].function_call.arguments'],
    ['a function_call that is a string', { role: 'assistant', function_call: 'f' }, 'messages[1].function_call'],
  ])('%s is a 400', (_name, message, param) => {
    expect(rejected([user, message]).param).toBe(param);
  });
});

describe('assistant messages', () => {
  it('gives custom tool calls to engines as function calls with an input argument', () => {
    const messages = request([
      user,
      { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'run_sql', input: 'SELECT "1"' } }] },
    ]).messages;
    expect(messages[1]?.tool_calls).toStrictEqual([
      { id: 'c', type: 'function', function: { name: 'run_sql', arguments: '{"input":"SELECT \\"1\\""}' } },
    ]);
    expect(rejected([user, { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'x' } }] }]).param).toBe(
      'messages[1].tool_calls[0].custom.input',
    );
    expect(rejected([user, { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom' }] }]).param).toBe(
      'messages[1].tool_calls[0].custom',
    );
    expect(rejected([user, { role: 'assistant', tool_calls: [{ id: 'c', type: 'code' }] }]).message).toContain(
      "expected 'function' or 'custom'",
    );
  });

  it('may have no content; a refusal without content becomes the content; audio references are ignored', () => {
    const checked = request([
      user,
      { role: 'assistant' },
      { role: 'assistant', content: null, refusal: 'I cannot.' },
      { role: 'assistant', content: 'Sure.', refusal: 'ignored', audio: { id: 'audio_1' } },
    ]);
    expect(checked.messages.slice(1)).toStrictEqual([
      { role: 'assistant', content: null },
      { role: 'assistant', content: 'I cannot.' },
      { role: 'assistant', content: 'Sure.' },
    ]);
    expect(checked.notes?.ignoredFields).toStrictEqual(['messages[].audio']);
    expect(rejected([user, { role: 'assistant', content: 'x', audio: {} }]).param).toBe('messages[1].audio.id');
    expect(rejected([user, { role: 'assistant', content: 'x', refusal: 5 }]).param).toBe('messages[1].refusal');
  });
});
