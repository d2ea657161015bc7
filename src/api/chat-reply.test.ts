import { describe, expect, it } from 'vitest';
import type { ChatChoice, ChunkChoice, ReplyChunkChoice, RequestNotes } from './chat-types.js';
import { customInput, ReplyChunkShaper, replyChoices } from './chat-reply.js';

const notes = (fields: Partial<RequestNotes>): RequestNotes => ({ ignoredFields: [], customTools: [], legacyFunctions: false, ...fields });
const call = (id: string, name: string, argumentsText: string) => ({ id, type: 'function' as const, function: { name, arguments: argumentsText } });

describe('replyChoices', () => {
  it('gives every choice refusal and logprobs (null when none) and a finish reason', () => {
    const choices: ChatChoice[] = [
      { index: 0, message: { role: 'assistant', content: 'Hi', reasoning_content: 'think' }, finish_reason: null },
      { index: 1, message: { role: 'assistant', content: null, tool_calls: [call('c', 'f', '{}')] }, finish_reason: null, logprobs: { content: [], refusal: null } },
      { index: 2, message: { role: 'assistant', content: null, refusal: 'No.' }, finish_reason: 'content_filter' },
    ];
    expect(replyChoices(choices, undefined)).toStrictEqual([
      { index: 0, message: { role: 'assistant', content: 'Hi', refusal: null, reasoning_content: 'think' }, finish_reason: 'stop', logprobs: null },
      { index: 1, message: { role: 'assistant', content: null, refusal: null, tool_calls: [call('c', 'f', '{}')] }, finish_reason: 'tool_calls', logprobs: { content: [], refusal: null } },
      { index: 2, message: { role: 'assistant', content: null, refusal: 'No.' }, finish_reason: 'content_filter', logprobs: null },
    ]);
  });

  it('gives calls of custom tools back as custom calls', () => {
    const choices: ChatChoice[] = [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call('a', 'sql', '{"input":"SELECT 1"}'), call('b', 'f', '{"x":1}'), call('c', 'sql', 'raw text')] }, finish_reason: 'tool_calls' }];
    expect(replyChoices(choices, notes({ customTools: ['sql'] }))[0]?.message.tool_calls).toStrictEqual([
      { id: 'a', type: 'custom', custom: { name: 'sql', input: 'SELECT 1' } },
      call('b', 'f', '{"x":1}'),
      { id: 'c', type: 'custom', custom: { name: 'sql', input: 'raw text' } },
    ]);
  });

  it('answers a legacy functions request with function_call', () => {
    const choices: ChatChoice[] = [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call('a', 'f', '{"x":1}'), call('b', 'g', '{}')] }, finish_reason: 'tool_calls' }];
    const [choice] = replyChoices(choices, notes({ legacyFunctions: true }));
    expect(choice).toStrictEqual({ index: 0, message: { role: 'assistant', content: null, refusal: null, function_call: { name: 'f', arguments: '{"x":1}' } }, finish_reason: 'function_call', logprobs: null });
  });
});

describe('customInput', () => {
  it('takes the input string out of the arguments, or the text itself', () => {
    expect(customInput('{"input":"a\\nb"}')).toBe('a\nb');
    expect(customInput('{"query":"x"}')).toBe('{"query":"x"}');
    expect(customInput('{"input":5}')).toBe('{"input":5}');
    expect(customInput('SELECT 1')).toBe('SELECT 1');
  });
});

describe('ReplyChunkShaper', () => {
  const chunk = (delta: ChunkChoice['delta'], finish: ChunkChoice['finish_reason'] = null, index = 0): ChunkChoice[] => [{ index, delta, finish_reason: finish }];
  /** What the caller gets. */
  const shaped = (delta: ReplyChunkChoice['delta'], finish: ReplyChunkChoice['finish_reason'] = null, index = 0): ReplyChunkChoice[] => [{ index, delta, finish_reason: finish }];

  it('is not needed for requests without custom tools or legacy functions', () => {
    expect(ReplyChunkShaper.forStream(undefined)).toBeUndefined();
    expect(ReplyChunkShaper.forStream(notes({ ignoredFields: ['store'] }))).toBeUndefined();
  });

  it('holds a custom call back and sends it whole in the delta that finishes its choice', () => {
    const shaper = ReplyChunkShaper.forStream(notes({ customTools: ['sql'] }))!;
    expect(shaper.shape(chunk({ role: 'assistant', content: '' }))).toStrictEqual(shaped({ role: 'assistant', content: '' }));
    expect(shaper.shape(chunk({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'sql', arguments: '{"inp' } }, { index: 1, id: 'b', type: 'function', function: { name: 'f', arguments: '{' } }] }))).toStrictEqual(
      shaped({ tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'f', arguments: '{' } }] }),
    );
    expect(shaper.shape(chunk({ tool_calls: [{ index: 0, function: { arguments: 'ut":"SELECT \\u00e9"}' } }] }))).toStrictEqual(shaped({}));
    expect(shaper.shape(chunk({ tool_calls: [{ index: 1, function: { arguments: '}' } }] }))).toStrictEqual(shaped({ tool_calls: [{ index: 1, function: { arguments: '}' } }] }));
    expect(shaper.shape(chunk({}, 'tool_calls'))).toStrictEqual(shaped({ tool_calls: [{ index: 0, id: 'a', type: 'custom', custom: { name: 'sql', input: 'SELECT é' } }] }, 'tool_calls'));
  });

  it('keeps choices apart', () => {
    const shaper = ReplyChunkShaper.forStream(notes({ customTools: ['sql'] }))!;
    shaper.shape([...chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'sql', arguments: '{"input":"A"}' } }] }), ...chunk({ tool_calls: [{ index: 0, id: 'b', function: { name: 'sql', arguments: '{"input":"B"}' } }] }, null, 1)]);
    expect(shaper.shape(chunk({}, 'tool_calls', 1))).toStrictEqual(shaped({ tool_calls: [{ index: 0, id: 'b', type: 'custom', custom: { name: 'sql', input: 'B' } }] }, 'tool_calls', 1));
    expect(shaper.shape(chunk({ content: 'x' }, 'stop', 0))).toStrictEqual(shaped({ content: 'x', tool_calls: [{ index: 0, id: 'a', type: 'custom', custom: { name: 'sql', input: 'A' } }] }, 'stop', 0));
  });

  it('turns a legacy request\'s first call into function_call deltas and drops the others', () => {
    const shaper = ReplyChunkShaper.forStream(notes({ legacyFunctions: true }))!;
    expect(shaper.shape(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }] }))).toStrictEqual(
      shaped({ role: 'assistant', function_call: { name: 'f', arguments: '' } }),
    );
    expect(shaper.shape(chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }, { index: 1, id: 'b', function: { name: 'g', arguments: '{}' } }] }))).toStrictEqual(
      shaped({ function_call: { arguments: '{}' } }),
    );
    expect(shaper.shape(chunk({}, 'tool_calls'))).toStrictEqual(shaped({}, 'function_call'));
    expect(shaper.shape(chunk({ content: 'x' }, 'stop'))).toStrictEqual(shaped({ content: 'x' }, 'stop'));
  });
});
