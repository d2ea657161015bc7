/**
 * A model catalog of your own (`TASKGATE_MODEL_CATALOG=catalog.json`), in
 * place of the built-in one: for sites that vet and host their own GGUF files
 * (an air-gapped mirror, a fine-tune, another quantization). It has the shape
 * `taskgate models list --json` prints for catalog models, so a listing is a
 * starting point. Every file is pinned by size and sha256, as the built-in
 * ones are; price defaults to the CPU estimate from the parameter count.
 *
 *   [{ "id": "my-model", "provider": "acme", "family": "acme", "aliases": [],
 *      "parametersInBillions": 0.5, "quantization": "Q4_K_M",
 *      "file": "my-model-q4_k_m.gguf", "url": "https://files.example/my-model-q4_k_m.gguf",
 *      "sizeBytes": 491400032, "sha256": "…", "contextWindow": 32768,
 *      "supports": ["json"], "recommended": true }]
 */
import { z } from 'zod';
import { cpuPrice, type DefaultModel } from './default-models.js';

const entry = z
  .object({
    id: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[^\s/]+$/, 'must not contain spaces or "/"'),
    provider: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[^\s/]+$/, 'must not contain spaces or "/"'),
    family: z.string().min(1),
    aliases: z.array(z.string().min(1)).default([]),
    parametersInBillions: z.number().positive(),
    quantization: z.enum(['Q4_K_M', 'Q8_0']),
    file: z.string().regex(/^[^/\\\0]+\.gguf$/i, 'must be a file name ending in .gguf, without a folder'),
    url: z.url({ protocol: /^https?$/ }),
    sizeBytes: z.number().int().positive(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits'),
    contextWindow: z.number().int().positive(),
    price: z
      .object({ input: z.number().min(0), output: z.number().min(0) })
      .strict()
      .optional(),
    supports: z.array(z.enum(['tools', 'json'])).default(['json']),
    recommended: z.boolean().optional(),
  })
  .strict();

const catalog = z.array(entry).min(1, 'must list at least one model');

/** The catalog in a parsed JSON document, or one line per problem, each naming its path. */
export function parseModelCatalog(document: unknown): { models: DefaultModel[] } | { problems: string[] } {
  const result = catalog.safeParse(document);
  if (!result.success) {
    return {
      problems: result.error.issues.map(
        (issue) =>
          `${
            issue.path
              .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
              .join('')
              .replace(/^\./, '') || '(top level)'
          }: ${issue.message}`,
      ),
    };
  }
  const ids = new Set<string>();
  const problems: string[] = [];
  result.data.forEach((model, index) => {
    if (ids.has(model.id)) problems.push(`[${index}].id: duplicate id "${model.id}"`);
    ids.add(model.id);
  });
  if (problems.length > 0) return { problems };
  return { models: result.data.map((model) => ({ ...model, price: model.price ?? cpuPrice(model.parametersInBillions) })) };
}
