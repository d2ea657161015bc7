import { describe, expect, it } from 'vitest';
import type { AssistantMessage } from '../api/chat-types.js';
import { evaluateJsonSchema } from './json-schema-check.js';

const request = { messages: [{ role: 'user' as const, content: 'Give me a person as JSON.' }] };
const check = {
  type: 'json_schema' as const,
  schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } }, required: ['name', 'age'] },
};
const reply = (content: string | null, extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: 'assistant',
  content,
  ...extra,
});
const evaluate = (candidate: AssistantMessage) => evaluateJsonSchema(check, { request, reference: null, candidate });

describe('json_schema check', () => {
  it('passes JSON that validates, with surrounding whitespace', () => {
    expect(evaluate(reply('  {"name": "Ada", "age": 36}\n'))).toEqual({ verdict: 'pass' });
  });

  it('fails JSON that does not validate, saying where', () => {
    expect(evaluate(reply('{"name": "Ada", "age": -1}'))).toEqual({
      verdict: 'fail',
      reason: 'content does not match the schema at /age: must be >= 0',
    });
    expect(evaluate(reply('{"name": "Ada"}'))).toEqual({
      verdict: 'fail',
      reason: "content does not match the schema at (root): must have required property 'age'",
    });
  });

  it('fails content that is not JSON, fenced JSON included', () => {
    const outcome = evaluate(reply('```json\n{"name": "Ada", "age": 36}\n```'));
    expect(outcome.verdict).toBe('fail');
    expect(outcome.verdict === 'fail' && outcome.reason).toMatch(/^content is not valid JSON \(.+\): "```json \{/);
  });

  it('fails a reply with no content and no tool calls', () => {
    expect(evaluate(reply(null))).toEqual({ verdict: 'fail', reason: 'the reply has no content' });
    expect(evaluate(reply(null, { refusal: 'I cannot.' }))).toEqual({ verdict: 'fail', reason: 'the reply is a refusal with no content' });
    expect(evaluate(reply('')).verdict).toBe('fail');
  });

  it('is not applicable to a reply that only calls tools', () => {
    const calls = [{ id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } }];
    expect(evaluate(reply(null, { tool_calls: calls }))).toEqual({
      verdict: 'not_applicable',
      reason: 'the reply calls tools and has no content',
    });
    expect(evaluate(reply('', { tool_calls: calls })).verdict).toBe('not_applicable');
  });
});
