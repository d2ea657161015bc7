/**
 * What taskgate serves with no config file: the default catalog on the
 * embedded CPU engine. Models whose files are on disk answer; the others get
 * a 503 naming `taskgate models pull <id>`; the first start fetches the
 * recommended one (`src/cli/first-start-pull.ts`).
 */
import type { DefaultModel } from '../catalog/default-models.js';

const DEFAULT_CPU_ENGINE_ID = 'cpu';

/** A config document, validated like a file's (so it gets the same defaults). */
export function defaultConfigDocument(catalog: readonly DefaultModel[]): Record<string, unknown> {
  return {
    engines: [{ id: DEFAULT_CPU_ENGINE_ID, type: 'llama-cpp' }],
    models: catalog.map((model) => ({ id: model.id, served_by: [{ engine: DEFAULT_CPU_ENGINE_ID }] })),
  };
}
