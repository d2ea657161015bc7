import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors.js';
import { validateChatRequest } from './validate-chat-request.js';
import { invalidRequestOf } from '../../test/helpers/invalid-request.js';

const request = (fields: Record<string, unknown>) =>
  validateChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields });
const rejected = (fields: Record<string, unknown>): InvalidRequestError => invalidRequestOf(() => request(fields));

const platform = {
  prediction: { type: 'content', content: [{ type: 'text', text: 'draft' }] },
  store: true,
  moderation: { model: 'omni-moderation-latest', policy: { input: { mode: 'score' }, output: { mode: 'block' } } },
  service_tier: 'scale',
  prompt_cache_key: 'tenant-4',
  prompt_cache_options: { ttl: '30m', mode: 'implicit' },
  prompt_cache_retention: 'in_memory',
  safety_identifier: '🙂'.repeat(64),
  modalities: ['text'],
};

describe('platform fields', () => {
  it('are accepted, kept from engines, and named as ignored in a fixed order', () => {
    const checked = request(platform);
    expect(checked.notes?.ignoredFields).toStrictEqual([
      'store',
      'service_tier',
      'prompt_cache_key',
      'prompt_cache_options',
      'prompt_cache_retention',
      'safety_identifier',
      'moderation',
      'prediction',
      'modalities',
    ]);
    for (const field of Object.keys(platform)) expect(checked).not.toHaveProperty(field);
    expect(request({ store: false, modalities: [] }).notes?.ignoredFields).toStrictEqual(['store', 'modalities']);
  });

  it('sent as null are not named', () => {
    expect(request(Object.fromEntries(Object.keys(platform).map((field) => [field, null]))).notes).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['store a string', { store: 'yes' }, 'store', 'invalid_type'],
    ['an unknown service tier', { service_tier: 'gold' }, 'service_tier', 'invalid_value'],
    ['a numeric prompt cache key', { prompt_cache_key: 1 }, 'prompt_cache_key', 'invalid_type'],
    ['a cache ttl of a day', { prompt_cache_options: { ttl: '1d' } }, 'prompt_cache_options.ttl', 'invalid_value'],
    ['a cache mode of another kind', { prompt_cache_options: { mode: 'auto' } }, 'prompt_cache_options.mode', 'invalid_value'],
    ['cache options a string', { prompt_cache_options: '30m' }, 'prompt_cache_options', 'invalid_type'],
    ['a retention of a week', { prompt_cache_retention: '7d' }, 'prompt_cache_retention', 'invalid_value'],
    ['a safety identifier of 65 characters', { safety_identifier: '🙂'.repeat(65) }, 'safety_identifier', 'invalid_value'],
    ['moderation without a model', { moderation: { policy: null } }, 'moderation.model', 'missing_required_parameter'],
    [
      'a moderation mode of another kind',
      { moderation: { model: 'x', policy: { input: { mode: 'warn' } } } },
      'moderation.policy.input.mode',
      'invalid_value',
    ],
    [
      'a moderation side without mode',
      { moderation: { model: 'x', policy: { output: {} } } },
      'moderation.policy.output.mode',
      'missing_required_parameter',
    ],
    ['a prediction without type', { prediction: { content: 'x' } }, 'prediction.type', 'missing_required_parameter'],
    ['a prediction without content', { prediction: { type: 'content' } }, 'prediction.content', 'missing_required_parameter'],
    ['a prediction of no parts', { prediction: { type: 'content', content: [] } }, 'prediction.content', 'invalid_value'],
    [
      'a prediction with an image part',
      { prediction: { type: 'content', content: [{ type: 'image_url' }] } },
      'prediction.content[0].type',
      'invalid_value',
    ],
    [
      'a prediction part with a bad breakpoint',
      { prediction: { type: 'content', content: [{ type: 'text', text: 'x', prompt_cache_breakpoint: 7 }] } },
      'prediction.content[0].prompt_cache_breakpoint',
      'invalid_type',
    ],
    ['modalities a string', { modalities: 'text' }, 'modalities', 'invalid_type'],
    ['an unknown modality', { modalities: ['video'] }, 'modalities[0]', 'invalid_value'],
    ['an unknown reasoning effort', { reasoning_effort: 'extreme' }, 'reasoning_effort', 'invalid_value'],
    ['a numeric verbosity', { verbosity: 1 }, 'verbosity', 'invalid_type'],
  ])('%s is a 400', (_name, fields, param, code) => {
    const error = rejected(fields);
    expect([error.param, error.code]).toStrictEqual([param, code]);
  });
});

describe('what cannot be served', () => {
  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ['audio output', { modalities: ['text', 'audio'] }, 'modalities', /audio output cannot be served/],
    ['audio settings', { audio: { voice: 'alloy', format: 'wav' } }, 'audio', /audio output cannot be served/],
    ['web search', { web_search_options: { search_context_size: 'low' } }, 'web_search_options', /web search cannot be served/],
    ['empty web search options', { web_search_options: {} }, 'web_search_options', /web search cannot be served/],
  ])('%s is a 400 saying why', (_name, fields, param, message) => {
    const error = rejected(fields);
    expect([error.param, error.code]).toStrictEqual([param, 'unsupported_parameter']);
    expect(error.message).toMatch(message);
  });

  it('is fine when sent as null, and a wrong type is still a type error', () => {
    expect(request({ audio: null, web_search_options: null, modalities: null }).notes).toBeUndefined();
    expect(rejected({ audio: 'alloy' }).code).toBe('invalid_type');
    expect(rejected({ web_search_options: true }).code).toBe('invalid_type');
  });
});

describe('fields passed on to engines', () => {
  it('keeps reasoning_effort and verbosity', () => {
    const checked = request({ reasoning_effort: 'xhigh', verbosity: 'high' });
    expect(checked).toMatchObject({ reasoning_effort: 'xhigh', verbosity: 'high' });
    expect(checked.notes).toBeUndefined();
  });
});
