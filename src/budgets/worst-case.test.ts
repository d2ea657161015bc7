import { describe, expect, it } from 'vitest';
import { costOf, createCatalog } from '../catalog/catalog.js';
import { completionTokenBound, promptTokenEstimate, worstCaseMicros } from './worst-case.js';
import { toMicros } from './budget-caps.js';

const price = { input: 3, output: 15 };

describe('worst case of a call', () => {
  it('estimates the prompt as a third of the request bytes, rounded up', () => {
    expect(promptTokenEstimate(0)).toBe(0);
    expect(promptTokenEstimate(1)).toBe(1);
    expect(promptTokenEstimate(3)).toBe(1);
    expect(promptTokenEstimate(3_001)).toBe(1_001);
  });

  it('bounds the completion by max tokens when given, per choice', () => {
    expect(completionTokenBound({ requestBytes: 300, maxCompletionTokens: 50, contextWindow: 8_192 })).toBe(50);
    expect(completionTokenBound({ requestBytes: 300, maxCompletionTokens: 50, choices: 3, contextWindow: 8_192 })).toBe(150);
    expect(completionTokenBound({ requestBytes: 300, maxCompletionTokens: 0, contextWindow: 8_192 })).toBe(0);
  });

  it('else by the room the context leaves after the prompt, at least one token', () => {
    expect(completionTokenBound({ requestBytes: 300, maxCompletionTokens: null, contextWindow: 8_192 })).toBe(8_092);
    expect(completionTokenBound({ requestBytes: 90_000, maxCompletionTokens: null, contextWindow: 8_192 })).toBe(1);
  });

  it('prices prompt and completion in micro-dollars, rounded up', () => {
    // 100 prompt tokens × $3/M + 50 completion × $15/M = 300 + 750 micros.
    expect(worstCaseMicros({ requestBytes: 300, maxCompletionTokens: 50, contextWindow: 8_192, price })).toBe(1_050);
    expect(worstCaseMicros({ requestBytes: 1, maxCompletionTokens: 1, contextWindow: 8_192, price: { input: 0.1, output: 0.2 } })).toBe(1);
    expect(worstCaseMicros({ requestBytes: 3, maxCompletionTokens: 0, contextWindow: 8_192, price: { input: 0.07, output: 1 } })).toBe(1);
    expect(worstCaseMicros({ requestBytes: 300, maxCompletionTokens: 50, contextWindow: 8_192, price: { input: 0, output: 0 } })).toBe(0);
  });

  it('never falls below the cost of any reply the call can get, when the prompt is text of at least three bytes a token', () => {
    const model = createCatalog([
      { id: 'm', aliases: [], price: { input: 0.15, output: 0.6 }, context_window: 4_096, supports: [], served_by: [{ engine: 'e' }] },
    ]).list()[0];
    if (model === undefined) throw new Error('no model');
    for (const [bytes, promptTokens, maxTokens] of [
      [3_000, 1_000, 200],
      [10, 3, 1],
      [12_000, 4_000, null],
    ] as const) {
      const worst = worstCaseMicros({
        requestBytes: bytes,
        maxCompletionTokens: maxTokens,
        contextWindow: model.contextWindow,
        price: model.price,
      });
      const completion = maxTokens ?? model.contextWindow - promptTokens;
      expect(worst).toBeGreaterThanOrEqual(toMicros(costOf(model, { prompt_tokens: promptTokens, completion_tokens: completion })));
    }
  });
});
