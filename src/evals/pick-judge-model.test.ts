import { describe, expect, it } from 'vitest';
import { chooseJudge, pickJudgeModel, type JudgeOption } from './pick-judge-model.js';

const available: JudgeOption[] = [
  { id: 'qwen-small', family: 'qwen2.5', costPerCall: 0.001 },
  { id: 'qwen-large', family: 'Qwen2.5', costPerCall: 0.05 },
  { id: 'llama-small', family: 'llama3.2', costPerCall: 0.002 },
  { id: 'llama-large', family: 'llama3.2', costPerCall: 0.02 },
  { id: 'smollm', family: 'smollm2' },
];

describe('pickJudgeModel', () => {
  it('takes the preferred model when its family differs from the candidate', () => {
    expect(pickJudgeModel('qwen2.5', available, 'llama-small')).toBe('llama-small');
  });

  it('passes over a preferred model of the candidate family (case-insensitive) or one not available', () => {
    expect(pickJudgeModel('QWEN2.5 ', available, 'qwen-large')).toBe('llama-large');
    expect(pickJudgeModel('qwen2.5', available, 'gpt-4o')).toBe('llama-large');
  });

  it('otherwise takes the most expensive model of another family', () => {
    expect(pickJudgeModel('llama3.2', available)).toBe('qwen-large');
    expect(pickJudgeModel('smollm2', available)).toBe('qwen-large');
  });

  it('ranks unpriced models last, and keeps the listed order among equals', () => {
    expect(
      pickJudgeModel('x', [
        { id: 'unpriced', family: 'a' },
        { id: 'priced', family: 'b', costPerCall: 0 },
      ]),
    ).toBe('priced');
    expect(
      pickJudgeModel('x', [
        { id: 'first', family: 'a' },
        { id: 'second', family: 'b' },
      ]),
    ).toBe('first');
  });

  it('returns null when no model is of another family', () => {
    expect(pickJudgeModel('qwen2.5', available.slice(0, 2), 'qwen-small')).toBeNull();
    expect(pickJudgeModel('qwen2.5', [])).toBeNull();
  });
});

describe('chooseJudge', () => {
  it('takes the strongest model of another family, the requested model among them', () => {
    expect(chooseJudge('llama3.2', available)).toEqual({ model: 'qwen-large', sameFamily: false });
    expect(chooseJudge('qwen2.5', available)).toEqual({ model: 'llama-large', sameFamily: false });
  });

  it('prefers another family even when a stronger model of the candidate family is available', () => {
    expect(
      chooseJudge('qwen2.5', [
        { id: 'qwen-huge', family: 'qwen2.5', costPerCall: 1 },
        { id: 'tiny', family: 'smollm2', costPerCall: 0.0001 },
      ]),
    ).toEqual({ model: 'tiny', sameFamily: false });
  });

  it('falls back to the strongest of the candidate family, flagged, when no other family is available', () => {
    expect(chooseJudge('qwen2.5', available.slice(0, 2))).toEqual({ model: 'qwen-large', sameFamily: true });
    expect(chooseJudge(' QWEN2.5', [{ id: 'only', family: 'Qwen2.5' }])).toEqual({ model: 'only', sameFamily: true });
  });

  it('takes an available preferred model, whatever its family, and flags it', () => {
    expect(chooseJudge('qwen2.5', available, 'llama-small')).toEqual({ model: 'llama-small', sameFamily: false });
    expect(chooseJudge('qwen2.5', available, 'qwen-small')).toEqual({ model: 'qwen-small', sameFamily: true });
  });

  it('passes over a preferred model that is not available', () => {
    expect(chooseJudge('qwen2.5', available, 'gpt-4o')).toEqual({ model: 'llama-large', sameFamily: false });
  });

  it('returns null when nothing is available', () => {
    expect(chooseJudge('qwen2.5', [])).toBeNull();
    expect(chooseJudge('qwen2.5', [], 'qwen-large')).toBeNull();
  });
});
