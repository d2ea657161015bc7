import { describe, expect, it } from 'vitest';
import type { ChatChoice, ChunkChoice, ReplyChunkChoice, RequestNotes } from './chat-types.js';
import { ReplyChunkShaper, replyChoices } from './chat-reply.js';

const notes = (fields: Partial<RequestNotes>): RequestNotes => ({ ignoredFields: [], customTools: [], legacyFunctions: false, ...fields });
const call = (id: string, name: string, argumentsText: string) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: argumentsText },
});

describe('replyChoices', () => {
  it('gives every choice refusal and logprobs (null when none) and a finish reason', () => {
    const choices: ChatChoice[] = [
      { index: 0, message: { role: 'assistant', content: 'Hi', reasoning_content: 'think' }, finish_reason: null },
      {
        index: 1,
        message: { role: 'assistant', content: null, tool_calls: [call('c', 'f', '{}')] },
        finish_reason: null,
        logprobs: { content: [], refusal: null },
      },
      { index: 2, message: { role: 'assistant', content: null, refusal: 'No.' }, finish_reason: 'content_filter' },
    ];
    expect(replyChoices(choices, undefined)).toStrictEqual([
      {
        index: 0,
        message: { role: 'assistant', content: 'Hi', refusal: null, reasoning_content: 'think' },
        finish_reason: 'stop',
        logprobs: null,
      },
      {
        index: 1,
        message: { role: 'assistant', content: null, refusal: null, tool_calls: [call('c', 'f', '{}')] },
        finish_reason: 'tool_calls',
        logprobs: { content: [], refusal: null },
      },
      { index: 2, message: { role: 'assistant', content: null, refusal: 'No.' }, finish_reason: 'content_filter', logprobs: null },
    ]);
  });

  it('gives calls of custom tools back as custom calls', () => {
    const choices: ChatChoice[] = [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [call('a', 'sql', '{"input":"SELECT 1"}'), call('b', 'f', '{"x":1}'), call('c', 'sql', 'raw text')],
        },
        finish_reason: 'tool_calls',
      },
    ];
    expect(replyChoices(choices, notes({ customTools: ['sql'] }))[0]?.message.tool_calls).toStrictEqual([
      { id: 'a', type: 'custom', custom: { name: 'sql', input: 'SELECT 1' } },
      call('b', 'f', '{"x":1}'),
      { id: 'c', type: 'custom', custom: { name: 'sql', input: 'raw text' } },
    ]);
  });

  it('answers a legacy functions request with function_call', () => {
    const choices: ChatChoice[] = [
      {
        index: 0,
        message: { role: 'assistant', content: null, tool_calls: [call('a', 'f', '{"x":1}'), call('b', 'g', '{}')] },
        finish_reason: 'tool_calls',
      },
    ];
    const [choice] = replyChoices(choices, notes({ legacyFunctions: true }));
    expect(choice).toStrictEqual({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null, function_call: { name: 'f', arguments: '{"x":1}' } },
      finish_reason: 'function_call',
      logprobs: null,
    });
  });
});

describe('ReplyChunkShaper', () => {
  const chunk = (delta: ChunkChoice['delta'], finish: ChunkChoice['finish_reason'] = null, index = 0): ChunkChoice[] => [
    { index, delta, finish_reason: finish },
  ];
  /** What the caller gets. */
  const shaped = (delta: ReplyChunkChoice['delta'], finish: ReplyChunkChoice['finish_reason'] = null, index = 0): ReplyChunkChoice[] => [
    { index, delta, finish_reason: finish },
  ];

  it('is not needed for requests without custom tools or legacy functions', () => {
    expect(ReplyChunkShaper.forStream(undefined)).toBeUndefined();
    expect(ReplyChunkShaper.forStream(notes({ ignoredFields: ['store'] }))).toBeUndefined();
  });

  it('streams a custom call as OpenAI does: id, type and name first, then its input in pieces, decoded as they come', () => {
    const shaper = ReplyChunkShaper.forStream(notes({ customTools: ['sql'] }))!;
    expect(shaper.shape(chunk({ role: 'assistant', content: '' }))).toStrictEqual(shaped({ role: 'assistant', content: '' }));
    expect(
      shaper.shape(
        chunk({
          tool_calls: [
            { index: 0, id: 'a', type: 'function', function: { name: 'sql', arguments: '{"inp' } },
            { index: 1, id: 'b', type: 'function', function: { name: 'f', arguments: '{' } },
          ],
        }),
      ),
    ).toStrictEqual(
      shaped({
        tool_calls: [
          { index: 0, id: 'a', type: 'custom', custom: { name: 'sql', input: '' } },
          { index: 1, id: 'b', type: 'function', function: { name: 'f', arguments: '{' } },
        ],
      }),
    );
    // The escape \u00e9 arrives cut in two: its piece goes once it is whole.
    expect(shaper.shape(chunk({ tool_calls: [{ index: 0, function: { arguments: 'ut": "SELECT \\u00' } }] }))).toStrictEqual(
      shaped({ tool_calls: [{ index: 0, custom: { input: 'SELECT ' } }] }),
    );
    expect(shaper.shape(chunk({ tool_calls: [{ index: 0, function: { arguments: 'e9 FROM \\"t\\"' } }] }))).toStrictEqual(
      shaped({ tool_calls: [{ index: 0, custom: { input: 'é FROM "t"' } }] }),
    );
    expect(shaper.shape(chunk({ tool_calls: [{ index: 1, function: { arguments: '}' } }] }))).toStrictEqual(
      shaped({ tool_calls: [{ index: 1, function: { arguments: '}' } }] }),
    );
    // The closing quote and brace add nothing.
    expect(shaper.shape(chunk({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] }))).toStrictEqual(shaped({}));
    expect(shaper.shape(chunk({}, 'tool_calls'))).toStrictEqual(shaped({}, 'tool_calls'));
  });

  it("sends a call's id once, with the first delta that has one", () => {
    const shaper = ReplyChunkShaper.forStream(notes({ customTools: ['sql'] }))!;
    expect(shaper.shape(chunk({ tool_calls: [{ index: 0, function: { name: 'sql', arguments: '' } }] }))).toStrictEqual(
      shaped({ tool_calls: [{ index: 0, type: 'custom', custom: { name: 'sql', input: '' } }] }),
    );
    expect(shaper.shape(chunk({ tool_calls: [{ index: 0, id: 'late', function: { arguments: '{"input":' } }] }))).toStrictEqual(
      shaped({ tool_calls: [{ index: 0, id: 'late', custom: { input: '' } }] }),
    );
    expect(shaper.shape(chunk({ tool_calls: [{ index: 0, id: 'late', function: { arguments: '"x"}' } }] }))).toStrictEqual(
      shaped({ tool_calls: [{ index: 0, custom: { input: 'x' } }] }),
    );
  });

  it('sends an input the model wrote plainly as it comes, and one in another object whole as its choice finishes', () => {
    const shaper = ReplyChunkShaper.forStream(notes({ customTools: ['sql', 'sh'] }))!;
    expect(
      shaper.shape(
        chunk({
          tool_calls: [
            { index: 0, id: 'a', function: { name: 'sql', arguments: 'SELECT' } },
            { index: 1, id: 'b', function: { name: 'sh', arguments: '{"cmd":' } },
          ],
        }),
      ),
    ).toStrictEqual(
      shaped({
        tool_calls: [
          { index: 0, id: 'a', type: 'custom', custom: { name: 'sql', input: 'SELECT' } },
          { index: 1, id: 'b', type: 'custom', custom: { name: 'sh', input: '' } },
        ],
      }),
    );
    expect(
      shaper.shape(
        chunk({
          tool_calls: [
            { index: 0, function: { arguments: ' 1' } },
            { index: 1, function: { arguments: '"ls"}' } },
          ],
        }),
      ),
    ).toStrictEqual(shaped({ tool_calls: [{ index: 0, custom: { input: ' 1' } }] }));
    expect(shaper.shape(chunk({}, 'tool_calls'))).toStrictEqual(
      shaped({ tool_calls: [{ index: 1, custom: { input: '{"cmd":"ls"}' } }] }, 'tool_calls'),
    );
  });

  it('keeps choices apart', () => {
    const shaper = ReplyChunkShaper.forStream(notes({ customTools: ['sql'] }))!;
    expect(
      shaper.shape([
        ...chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'sql', arguments: '{"input":"A' } }] }),
        ...chunk({ tool_calls: [{ index: 0, id: 'b', function: { name: 'sql', arguments: '{"input":"B' } }] }, null, 1),
      ]),
    ).toStrictEqual([
      ...shaped({ tool_calls: [{ index: 0, id: 'a', type: 'custom', custom: { name: 'sql', input: 'A' } }] }),
      ...shaped({ tool_calls: [{ index: 0, id: 'b', type: 'custom', custom: { name: 'sql', input: 'B' } }] }, null, 1),
    ]);
    expect(shaper.shape(chunk({ tool_calls: [{ index: 0, function: { arguments: '2"}' } }] }, 'tool_calls', 1))).toStrictEqual(
      shaped({ tool_calls: [{ index: 0, custom: { input: '2' } }] }, 'tool_calls', 1),
    );
    expect(shaper.shape(chunk({ content: 'x', tool_calls: [{ index: 0, function: { arguments: '1"}' } }] }, 'stop', 0))).toStrictEqual(
      shaped({ content: 'x', tool_calls: [{ index: 0, custom: { input: '1' } }] }, 'stop', 0),
    );
  });

  it("turns a legacy request's first call into function_call deltas and drops the others", () => {
    const shaper = ReplyChunkShaper.forStream(notes({ legacyFunctions: true }))!;
    expect(
      shaper.shape(
        chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      ),
    ).toStrictEqual(shaped({ role: 'assistant', function_call: { name: 'f', arguments: '' } }));
    expect(
      shaper.shape(
        chunk({
          tool_calls: [
            { index: 0, function: { arguments: '{}' } },
            { index: 1, id: 'b', function: { name: 'g', arguments: '{}' } },
          ],
        }),
      ),
    ).toStrictEqual(shaped({ function_call: { arguments: '{}' } }));
    expect(shaper.shape(chunk({}, 'tool_calls'))).toStrictEqual(shaped({}, 'function_call'));
    expect(shaper.shape(chunk({ content: 'x' }, 'stop'))).toStrictEqual(shaped({ content: 'x' }, 'stop'));
  });
});
