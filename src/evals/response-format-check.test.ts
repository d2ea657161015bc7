import { describe, expect, it } from 'vitest';
import type { AssistantMessage, GenerationParameters, ResponseFormat } from '../api/chat-types.js';
import { evaluateResponseFormat } from './response-format-check.js';

const reply = (content: string | null, extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: 'assistant',
  content,
  ...extra,
});
const evaluate = (responseFormat: ResponseFormat | undefined, candidate: AssistantMessage) => {
  const request: GenerationParameters = {
    messages: [{ role: 'user', content: 'Classify the sentiment.' }],
    ...(responseFormat === undefined ? {} : { response_format: responseFormat }),
  };
  return evaluateResponseFormat({ type: 'response_format_valid' }, { request, reference: null, candidate });
};
const schemaFormat = (schema?: Record<string, unknown>): ResponseFormat => ({
  type: 'json_schema',
  json_schema: { name: 'sentiment', ...(schema === undefined ? {} : { schema }) },
});
const sentiment = {
  type: 'object',
  properties: { sentiment: { enum: ['positive', 'negative'] } },
  required: ['sentiment'],
  additionalProperties: false,
};

describe('response_format_valid check', () => {
  it('is not applicable when no JSON format was asked for', () => {
    expect(evaluate(undefined, reply('not JSON'))).toEqual({
      verdict: 'not_applicable',
      reason: 'the request asks for no JSON response format',
    });
    expect(evaluate({ type: 'text' }, reply('not JSON')).verdict).toBe('not_applicable');
  });

  it('json_object: passes a JSON object, fails other JSON and text', () => {
    expect(evaluate({ type: 'json_object' }, reply(' {"sentiment": "positive"}\n'))).toEqual({ verdict: 'pass' });
    expect(evaluate({ type: 'json_object' }, reply('[1, 2]'))).toEqual({
      verdict: 'fail',
      reason: 'response_format is json_object but the content is not a JSON object: "[1, 2]"',
    });
    expect(evaluate({ type: 'json_object' }, reply('"positive"')).verdict).toBe('fail');
    const fenced = evaluate({ type: 'json_object' }, reply('```json\n{"sentiment":"positive"}\n```'));
    expect(fenced.verdict).toBe('fail');
    expect(fenced.verdict === 'fail' && fenced.reason).toMatch(/^response_format is json_object but the content is not valid JSON \(/);
  });

  it('json_schema: passes JSON valid against the schema, fails JSON that is not, and text', () => {
    expect(evaluate(schemaFormat(sentiment), reply('{"sentiment":"negative"}'))).toEqual({ verdict: 'pass' });
    expect(evaluate(schemaFormat(sentiment), reply('{"sentiment":"meh"}'))).toEqual({
      verdict: 'fail',
      reason: 'content does not match the response_format schema at /sentiment: must be equal to one of the allowed values',
    });
    expect(evaluate(schemaFormat(sentiment), reply('{"sentiment":"positive","why":"x"}')).verdict).toBe('fail');
    expect(evaluate(schemaFormat(sentiment), reply('positive')).verdict).toBe('fail');
  });

  it('json_schema: a schema that does not compile cannot be checked, but text is still not JSON', () => {
    const outcome = evaluate(schemaFormat({ type: 'strin' }), reply('{"a":1}'));
    expect(outcome.verdict).toBe('not_applicable');
    expect(outcome.verdict === 'not_applicable' && outcome.reason).toContain('the response_format schema does not compile');
    expect(evaluate(schemaFormat({ type: 'strin' }), reply('plain words')).verdict).toBe('fail');
  });

  it('json_schema without a schema asks only for JSON', () => {
    expect(evaluate(schemaFormat(), reply('[1]')).verdict).toBe('pass');
    expect(evaluate(schemaFormat(), reply('[1')).verdict).toBe('fail');
  });

  it('is not applicable to a reply that only calls tools, and fails an empty one', () => {
    const calls = [{ id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } }];
    expect(evaluate({ type: 'json_object' }, reply(null, { tool_calls: calls })).verdict).toBe('not_applicable');
    expect(evaluate({ type: 'json_object' }, reply(null))).toEqual({ verdict: 'fail', reason: 'the reply has no content' });
    expect(evaluate({ type: 'json_object' }, reply('')).verdict).toBe('fail');
  });
});
