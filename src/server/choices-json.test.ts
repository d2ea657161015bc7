import { describe, expect, it } from 'vitest';
import type { ChunkChoice } from '../api/chat-types.js';
import { choicesJson } from './choices-json.js';

const cases: Record<string, unknown[]> = {
  content: [{ index: 0, delta: { content: ' word' }, finish_reason: null, logprobs: undefined }],
  roleAndContent: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
  escapes: [{ index: 3, delta: { content: 'line\n"quoted" \u2028 caf\u00e9 \ud83d\ude00 \\ \u0001' }, finish_reason: 'stop' }],
  emptyDelta: [{ index: 0, delta: {}, finish_reason: 'length' }],
  nullContent: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }],
  undefinedFields: [{ index: 0, delta: { role: undefined, content: 'x', refusal: undefined }, finish_reason: null, logprobs: undefined }],
  contentBeforeRole: [{ index: 0, delta: { content: 'x', role: 'assistant' }, finish_reason: null }],
  otherOrder: [{ delta: { content: 'x' }, index: 0, finish_reason: null }],
  logprobsNull: [{ index: 0, delta: { content: 'x' }, finish_reason: null, logprobs: null }],
  logprobs: [{ index: 0, delta: { content: 'x' }, finish_reason: null, logprobs: { content: [], refusal: null } }],
  toolCalls: [
    {
      index: 0,
      delta: { tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      finish_reason: null,
    },
  ],
  reasoning: [{ index: 0, delta: { reasoning_content: 'hmm', content: 'x' }, finish_reason: null }],
  otherRole: [{ index: 0, delta: { role: 'user', content: 'x' }, finish_reason: null }],
  twoChoices: [
    { index: 0, delta: { content: 'a' }, finish_reason: null },
    { index: 1, delta: { content: 'b' }, finish_reason: null },
  ],
  none: [],
  extraKey: [{ index: 0, delta: { content: 'x' }, finish_reason: null, matched_stop: null }],
  undefinedFinish: [{ index: 0, delta: { content: 'x' }, finish_reason: undefined }],
};

describe('choicesJson', () => {
  it.each(Object.entries(cases))('writes %s as JSON.stringify does', (_name, choices) => {
    expect(choicesJson(choices as ChunkChoice[])).toBe(JSON.stringify(choices));
  });
});
