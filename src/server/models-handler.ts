/** `GET /v1/models`: the catalog in OpenAI list form, with price and context window. */
import type { Catalog } from '../catalog/catalog.js';

export function modelList(catalog: Catalog, createdAt: number): Record<string, unknown> {
  const models = catalog.list();
  const list: Record<string, unknown> = {
    object: 'list',
    data: models.map((model) => ({
      id: model.id,
      object: 'model',
      created: createdAt,
      owned_by: model.provider ?? 'taskgate',
      aliases: model.aliases,
      context_window: model.contextWindow,
      price: { input: model.price.input, output: model.price.output, unit: 'usd_per_million_tokens' },
      supports: [...model.supports],
    })),
  };
  if (models.length === 0) {
    list.notice = 'No models are configured: start taskgate with --config naming an engine and its models (see the README).';
  }
  return list;
}
