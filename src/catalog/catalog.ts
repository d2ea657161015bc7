/**
 * The model catalog: canonical ids, the names that resolve to them, prices and
 * capabilities. Resolution accepts the canonical id, an alias, or the
 * provider-pinned form `<provider>/<id or alias>`; an exact match wins, then a
 * case-insensitive one (HF repo names are often typed in other cases).
 *
 * The catalog sits below the config: it takes the served models in the shape
 * below (`config`'s `ModelConfig` has it), so it never imports the config.
 */
import type { Usage } from '../api/chat-types.js';

export type Capability = 'tools' | 'json' | 'vision';

export interface CatalogModel {
  /** Canonical id, returned as `model` in responses. */
  id: string;
  provider: string | null;
  /** Models of one family share blind spots, so judges come from another (the catalog's family, else the provider). */
  family: string;
  aliases: readonly string[];
  /** USD per million tokens. */
  price: { input: number; output: number };
  contextWindow: number;
  supports: ReadonlySet<Capability>;
  /** Replicas as configured: engine id and the model's name there. */
  servedBy: ReadonlyArray<{ engine: string; name: string }>;
}

export interface Catalog {
  /** The model a requested name means, or undefined. */
  resolve(name: string): CatalogModel | undefined;
  list(): readonly CatalogModel[];
}

/** A served model as the config declares it, its catalog defaults filled in (`ModelConfig`). */
export interface ServedModel {
  id: string;
  provider?: string | undefined;
  /** The default catalog's entry for this id, if it is one of them; its family names the model's. */
  catalog?: { family: string } | null;
  aliases: readonly string[];
  price: { input: number; output: number };
  context_window: number;
  supports: readonly Capability[];
  served_by: ReadonlyArray<{ engine: string; name?: string | undefined }>;
}

export function createCatalog(models: readonly ServedModel[]): Catalog {
  const entries: CatalogModel[] = models.map((model) => ({
    id: model.id,
    provider: model.provider ?? null,
    family: model.catalog?.family ?? model.provider ?? model.id,
    aliases: model.aliases,
    price: model.price,
    contextWindow: model.context_window,
    supports: new Set(model.supports),
    servedBy: model.served_by.map((replica) => ({ engine: replica.engine, name: replica.name ?? model.id })),
  }));

  const exact = new Map<string, CatalogModel>();
  const folded = new Map<string, CatalogModel>();
  for (const entry of entries) {
    for (const name of [entry.id, ...entry.aliases]) {
      const names = entry.provider === null ? [name] : [name, `${entry.provider}/${name}`];
      for (const candidate of names) {
        if (!exact.has(candidate)) exact.set(candidate, entry);
        const lower = candidate.toLowerCase();
        if (!folded.has(lower)) folded.set(lower, entry);
      }
    }
  }

  return {
    resolve: (name) => exact.get(name) ?? folded.get(name.toLowerCase()),
    list: () => entries,
  };
}

/** USD for a call: tokens times the served model's price per million. */
export function costOf(model: CatalogModel, usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens'>): number {
  return (usage.prompt_tokens * model.price.input + usage.completion_tokens * model.price.output) / 1_000_000;
}
