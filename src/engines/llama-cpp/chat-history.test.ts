import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../api/errors.js';
import { toChatFunctions, toChatHistory } from './chat-history.js';

describe('toChatHistory', () => {
  it('maps roles, joins text parts and folds tool results into the call that asked for them', () => {
    const history = toChatHistory([
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: 'Use metric units.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather in ' },
          { type: 'text', text: 'Paris?' },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temperature": 21}' },
      { role: 'assistant', content: 'It is 21 °C.' },
    ]);
    expect(history).toEqual([
      { type: 'system', text: 'Be brief.' },
      { type: 'system', text: 'Use metric units.' },
      { type: 'user', text: 'Weather in Paris?' },
      {
        type: 'model',
        response: [{ type: 'functionCall', name: 'get_weather', params: { city: 'Paris' }, result: '{"temperature": 21}' }],
      },
      { type: 'model', response: ['It is 21 °C.'] },
    ]);
  });

  it("keeps arguments that are not JSON as text, and a result with no matching call as the user's words", () => {
    const history = toChatHistory([
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: 'not json' } }],
      },
      { role: 'tool', tool_call_id: 'unknown', content: 'orphan result' },
    ]);
    expect(history).toEqual([
      { type: 'model', response: ['Checking.', { type: 'functionCall', name: 'f', params: 'not json', result: '' }] },
      { type: 'user', text: 'orphan result' },
    ]);
  });

  it('takes an assistant message without content (OpenAI allows one) as an empty model turn', () => {
    expect(
      toChatHistory([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null },
        { role: 'user', content: 'again' },
      ]),
    ).toEqual([
      { type: 'user', text: 'hi' },
      { type: 'model', response: [] },
      { type: 'user', text: 'again' },
    ]);
  });

  it('refuses non-text content parts with a 400 naming the part', () => {
    const call = () =>
      toChatHistory([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:' } },
          ],
        },
      ]);
    expect(call).toThrow(InvalidRequestError);
    expect(call).toThrow(expect.objectContaining({ param: 'messages[0].content[1]', code: 'unsupported_content' }));
    for (const part of [
      { type: 'input_audio' as const, input_audio: { data: 'AA', format: 'wav' as const } },
      { type: 'file' as const, file: { file_id: 'f' } },
    ]) {
      expect(() => toChatHistory([{ role: 'user', content: [part] }])).toThrow(
        expect.objectContaining({ param: 'messages[0].content[0]', code: 'unsupported_content' }),
      );
    }
  });
});

describe('toChatFunctions', () => {
  const weather = {
    type: 'function' as const,
    function: { name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  };
  const clock = { type: 'function' as const, function: { name: 'now', parameters: { type: 'object', properties: {} } } };

  it('keys functions by name, dropping empty parameter schemas', () => {
    expect(toChatFunctions({ tools: [weather, clock] })).toEqual({
      get_weather: { description: 'Weather now', params: { type: 'object', properties: { city: { type: 'string' } } } },
      now: {},
    });
  });

  it('offers no functions when there are no tools or tool_choice is "none"', () => {
    expect(toChatFunctions({})).toBeUndefined();
    expect(toChatFunctions({ tools: [] })).toBeUndefined();
    expect(toChatFunctions({ tools: [weather], tool_choice: 'none' })).toBeUndefined();
  });
});
