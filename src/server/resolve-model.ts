/**
 * Which catalog model a chat call names, and which one serves it once its
 * route has drawn.
 */
import { EngineUnavailableError, NotFoundError } from '../api/errors.js';
import type { Catalog, CatalogModel } from '../catalog/catalog.js';
import type { ModelPool } from '../engines/engine-pool.js';

/** The model the call asks for; a 404 when the catalog has no such model, a 503 when it has none at all. */
export function resolveModel(catalog: Catalog, name: string): CatalogModel {
  const model = catalog.resolve(name);
  if (model !== undefined) return model;
  if (catalog.list().length === 0) {
    throw new EngineUnavailableError(
      'taskgate has no models configured. Start it with --config naming an engine and its models (see the README).',
      undefined,
      'no_models_configured',
    );
  }
  throw new NotFoundError(
    `The model '${name.slice(0, 256)}' does not exist. GET /v1/models lists the models this gateway serves.`,
    'model_not_found',
    'model',
  );
}

/** The model the route named for the call, unless it has left the catalog or has no engine (then the requested one serves). */
export function servedModelFor(
  catalog: Catalog,
  pools: ReadonlyMap<string, ModelPool>,
  servedId: string,
  requested: CatalogModel,
): CatalogModel {
  if (servedId === requested.id) return requested;
  const served = catalog.resolve(servedId);
  return served !== undefined && pools.has(served.id) ? served : requested;
}
