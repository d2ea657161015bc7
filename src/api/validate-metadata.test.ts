import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors.js';
import { characterCount } from './field-checks.js';
import { validateMetadata } from './validate-metadata.js';
import { invalidRequestOf } from '../../test/helpers/invalid-request.js';

const rejected = (value: unknown): InvalidRequestError => invalidRequestOf(() => validateMetadata(value));

describe('characterCount', () => {
  it('counts code points, as JSON Schema and OpenAI do', () => {
    expect(characterCount('')).toBe(0);
    expect(characterCount('abc')).toBe(3);
    expect(characterCount('🎉')).toBe(1);
    expect(characterCount('a🎉b🎉')).toBe(4);
    // A lone surrogate (JSON can carry one) is one code point.
    expect(characterCount('\ud83c')).toBe(1);
    expect(characterCount('\udf89\ud83c')).toBe(2);
    expect(characterCount('e\u0301')).toBe(2); // e and a combining accent: two code points
  });
});

describe('metadata lengths in characters', () => {
  it('takes a key of 64 emoji and a value of 512, though JavaScript counts twice as many units', () => {
    const metadata = { ['🎉'.repeat(64)]: '🙂'.repeat(512), '': 'an empty key is a key' };
    expect(validateMetadata(metadata)).toEqual(metadata);
  });

  it('refuses a key of 65 characters and a value of 513', () => {
    const key = rejected({ ['🎉'.repeat(65)]: 'v' });
    expect(key.param).toBe('metadata');
    expect(key.message).toContain('(65)');
    const value = rejected({ team: '🙂'.repeat(513) });
    expect(value.param).toBe('metadata.team');
    expect(value.message).toContain('got 513');
  });
});
