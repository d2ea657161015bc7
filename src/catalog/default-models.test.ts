import { describe, expect, it } from 'vitest';
import { cpuPrice, DEFAULT_MODELS, findDefaultModel } from './default-models.js';

describe('the default catalog', () => {
  it('has one model per name: ids, provider-pinned ids and aliases of two models never collide, whatever the case', () => {
    const owners = new Map<string, Set<string>>();
    for (const model of DEFAULT_MODELS) {
      for (const name of [model.id, `${model.provider}/${model.id}`, ...model.aliases]) {
        const key = name.toLowerCase();
        owners.set(key, (owners.get(key) ?? new Set()).add(model.id));
      }
    }
    expect([...owners].filter(([, ids]) => ids.size > 1)).toEqual([]);
    expect(new Set(DEFAULT_MODELS.map((model) => model.file)).size).toBe(DEFAULT_MODELS.length);
  });

  it.each(DEFAULT_MODELS.map((model) => [model.id, model] as const))(
    '%s is a pinned Hugging Face file with a sha256 and a size',
    (_id, model) => {
      expect(model.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(Number.isSafeInteger(model.sizeBytes) && model.sizeBytes > 0).toBe(true);
      const url = new URL(model.url);
      expect(url.protocol).toBe('https:');
      expect(url.host).toBe('huggingface.co');
      // <owner>/<repo>/resolve/<40-hex revision>/<file>: a revision, never a branch, so the checksum cannot drift.
      expect(url.pathname).toMatch(/^\/[^/]+\/[^/]+-GGUF\/resolve\/[0-9a-f]{40}\/[^/]+\.gguf$/);
      expect(url.pathname.endsWith(`/${model.file}`)).toBe(true);
      expect(model.price).toEqual(cpuPrice(model.parametersInBillions));
      expect(model.supports).toContain('json');
    },
  );

  it('offers judges from another family: three families, each with several sizes', () => {
    const families = new Set(DEFAULT_MODELS.map((model) => model.family));
    expect([...families].sort()).toEqual(['llama3.2', 'qwen2.5', 'smollm2']);
  });

  it('finds a model by id, alias or provider/id, in any case', () => {
    expect(findDefaultModel('qwen2.5-0.5b-instruct')?.file).toBe('qwen2.5-0.5b-instruct-q4_k_m.gguf');
    expect(findDefaultModel('QWEN/qwen2.5-0.5B-Instruct')?.id).toBe('qwen2.5-0.5b-instruct');
    expect(findDefaultModel('meta/llama3.2-3b-instruct')?.id).toBe('llama3.2-3b-instruct');
    expect(findDefaultModel('smollm2:360m')?.id).toBe('smollm2-360m-instruct');
    expect(findDefaultModel('gpt-4o')).toBeUndefined();
  });
});

describe('cpuPrice', () => {
  it('is proportional to the parameter count, prompt tokens a tenth of generated ones', () => {
    expect(cpuPrice(1)).toEqual({ input: 0.1574, output: 1.5741 });
    expect(cpuPrice(3).output).toBeCloseTo(3 * cpuPrice(1).output, 3);
    expect(cpuPrice(0)).toEqual({ input: 0, output: 0 });
  });
});
