import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../api/chat-types.js';
import { callFeatures, DEFAULT_FEATURE_DIMENSION, requestSize, type CallFeatures, type CallRequest } from './call-features.js';

const user = (content: string): ChatMessage => ({ role: 'user', content });
const ask = (...contents: string[]): CallRequest => ({ messages: contents.map(user) });

/** The vector as index → summed value. */
function dense(features: CallFeatures): Map<number, number> {
  const sums = new Map<number, number>();
  features.indices.forEach((index, position) => sums.set(index, (sums.get(index) ?? 0) + (features.values[position] ?? 0)));
  return sums;
}

/** Indices whose value differs between two requests' vectors. */
function difference(left: CallRequest, right: CallRequest): number[] {
  const [a, b] = [dense(callFeatures(left)), dense(callFeatures(right))];
  return [...new Set([...a.keys(), ...b.keys()])].filter((index) => Math.abs((a.get(index) ?? 0) - (b.get(index) ?? 0)) > 1e-12);
}

describe('callFeatures', () => {
  it('is the same for the same request, and reads words whatever their case and punctuation', () => {
    expect(callFeatures(ask('What is the integral of x?'))).toEqual(callFeatures(ask('What is the integral of x?')));
    expect(difference(ask('What is the INTEGRAL of x?'), ask('what is the integral, of x'))).toEqual([]);
    expect(difference(ask('the integral of x'), ask('the derivative of x')).length).toBeGreaterThan(0);
  });

  it('keeps every index below the dimension, and rejects a dimension that is not a power of two', () => {
    const features = callFeatures(ask('a '.repeat(500), 'tools and words'), { dimension: 64 });
    expect(features.dimension).toBe(64);
    expect(features.indices.every((index) => Number.isInteger(index) && index >= 0 && index < 64)).toBe(true);
    expect(callFeatures(ask('x')).dimension).toBe(DEFAULT_FEATURE_DIMENSION);
    expect(() => callFeatures(ask('x'), { dimension: 1000 })).toThrow(RangeError);
  });

  it('scales the words to unit length, so a long prompt does not outweigh a short one', () => {
    for (const text of ['short question', 'a much longer question with many different words in it, and more words after those']) {
      const words = callFeatures(ask(text));
      // Every entry after the words has the value of the other features; the words come first.
      const wordValues = words.values.slice(0, text.split(/\W+/).filter(Boolean).length);
      expect(Math.hypot(...wordValues)).toBeCloseTo(1, 9);
    }
  });

  it('weighs the last user message more than earlier ones, and ignores system and assistant text', () => {
    const last = dense(callFeatures(ask('apples', 'pears')));
    const values = [...last.values()].sort((left, right) => right - left);
    // pears (weight 1) and apples (weight 0.5), scaled together: 1/√1.25 and 0.5/√1.25.
    expect(values[0]).toBeCloseTo(1 / Math.sqrt(1.25), 9);
    expect(values).toContainEqual(expect.closeTo(0.5 / Math.sqrt(1.25), 9));
    const plain: CallRequest = { messages: [user('same question')] };
    const withSystem: CallRequest = { messages: [{ role: 'system', content: 'You are a pirate.' }, user('same question')] };
    const withAnswer: CallRequest = { messages: [user('same question'), { role: 'assistant', content: 'an answer with words' }] };
    // Only the number of messages changes.
    expect(difference(plain, withSystem)).toHaveLength(2);
    expect(difference(plain, withAnswer)).toHaveLength(2);
  });

  it('has a feature for the length, the tools, the response format, the user and each metadata pair', () => {
    const base: CallRequest = ask('extract the fields');
    const tool = { type: 'function' as const, function: { name: 'lookup' } };
    expect(difference(base, ask('extract the fields '.repeat(40))).length).toBeGreaterThan(0);
    expect(difference(base, { ...base, tools: [tool] })).toHaveLength(3); // tool count 0 → 1, and the tool's name
    expect(difference({ ...base, tools: [tool] }, { ...base, tools: [{ ...tool, function: { name: 'search' } }] })).toHaveLength(2);
    expect(difference(base, { ...base, response_format: { type: 'json_object' } })).toHaveLength(2);
    expect(difference(base, { ...base, response_format: { type: 'json_schema', json_schema: { name: 'invoice' } } })).toHaveLength(3);
    expect(difference(base, { ...base, user: 'alice' })).toHaveLength(1);
    expect(difference({ ...base, user: 'alice' }, { ...base, user: 'bob' })).toHaveLength(2);
    expect(difference(base, { ...base, metadata: { tier: 'free', app: 'mail' } })).toHaveLength(2);
    expect(difference({ ...base, metadata: { tier: 'free' } }, { ...base, metadata: { tier: 'paid' } })).toHaveLength(2);
  });

  it('reads the text parts of a message, and counts other parts by kind', () => {
    const parts: CallRequest = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is in' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            { type: 'text', text: 'this picture' },
          ],
        },
      ],
    };
    const words = difference(parts, ask('what is in this picture'));
    // The same words (the parts are joined by a space in the plain one), plus the image part.
    expect(words).toHaveLength(1);
  });

  it('makes each CJK character a word, and splits on punctuation outside ASCII', () => {
    expect(callFeatures(ask('東京都')).indices.length - callFeatures(ask('x')).indices.length).toBe(2);
    expect(difference(ask('naïve café'), ask('NAÏVE — CAFÉ'))).toEqual([]);
  });

  it('reads only the head and the tail of a very long message', () => {
    const long = `${'alpha '.repeat(5_000)}${'beta '.repeat(5_000)}${'gamma '.repeat(5_000)}`;
    const features = callFeatures(ask(long), { maxCharacters: 1_000 });
    const words = callFeatures(ask('alpha gamma beta'));
    const present = new Set(features.indices);
    const [alpha, gamma, beta] = words.indices;
    expect(present.has(alpha ?? -1) && present.has(gamma ?? -1)).toBe(true);
    expect(present.has(beta ?? -1)).toBe(false);
    expect(features.indices.length).toBeLessThan(300);
  });

  it('requestSize: 1 + the messages in estimated tokens (characters / 4), text parts only', () => {
    expect(requestSize({ messages: [{ role: 'user', content: '' }] })).toBe(1);
    expect(
      requestSize({
        messages: [
          { role: 'system', content: 'abcd' },
          { role: 'user', content: 'efghijkl' },
        ],
      }),
    ).toBe(4);
    expect(
      requestSize({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'abcdefgh' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            ],
          },
        ],
      }),
    ).toBe(3);
  });
});
