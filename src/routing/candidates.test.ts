import { describe, expect, it } from 'vitest';
import type { Capability, CatalogModel } from '../catalog/catalog.js';
import { callShapeOf, eligibleCandidates } from './candidates.js';

function model(id: string, input: number, supports: Capability[]): CatalogModel {
  return {
    id,
    provider: null,
    family: id,
    aliases: [],
    price: { input, output: input },
    contextWindow: 8192,
    supports: new Set(supports),
    servedBy: [],
  };
}

const big = model('big', 10, ['tools', 'json', 'vision']);
const textOnly = model('text-only', 1, ['tools', 'json']);
const seeing = model('seeing', 2, ['vision']);
const usage = { prompt_tokens: 100, completion_tokens: 10 };
const contract = { allow_upgrade: false };

describe('eligibleCandidates', () => {
  it('offers only models that support what the call needs, cheapest first', () => {
    const plain = callShapeOf({ messages: [{ role: 'user', content: 'hi' }] }, usage);
    expect(eligibleCandidates([big, textOnly, seeing], big, plain, contract).map((candidate) => candidate.id)).toEqual([
      'text-only',
      'seeing',
    ]);

    const withTools = callShapeOf(
      { messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f' } }] },
      usage,
    );
    expect(eligibleCandidates([big, textOnly, seeing], big, withTools, contract).map((candidate) => candidate.id)).toEqual(['text-only']);
  });

  it('keeps a call with an image off models without vision', () => {
    const image = callShapeOf(
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'https://example.test/cat.png' } },
            ],
          },
        ],
      },
      usage,
    );
    expect(image.needsVision).toBe(true);
    expect(eligibleCandidates([big, textOnly, seeing], big, image, contract).map((candidate) => candidate.id)).toEqual(['seeing']);
  });
});
