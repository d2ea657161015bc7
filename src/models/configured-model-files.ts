/**
 * Which GGUF file each `llama-cpp` replica in the config serves: the file the
 * replica names (relative to the config file's folder), or else the catalog
 * model's file under `<data dir>/models/`. The engine loads these files and
 * `taskgate models list` reports on them, so both always agree.
 */
import { dirname, resolve } from 'node:path';
import type { ModelConfig } from '../config/config-schema.js';
import type { Settings } from '../config/load-config.js';
import type { DefaultModel } from '../catalog/default-models.js';
import { modelFilePath, modelsDirectoryOf } from './model-files.js';

export interface ConfiguredModelFile {
  model: ModelConfig;
  replica: ModelConfig['served_by'][number];
  engineId: string;
  /** Absolute path of the GGUF file. */
  path: string;
  /** The catalog entry whose file this is, when the replica names no file of its own. */
  catalog: DefaultModel | null;
}

export function configuredModelFiles(settings: Settings): ConfiguredModelFile[] {
  const cpuEngines = new Set(settings.config.engines.filter((engine) => engine.type === 'llama-cpp').map((engine) => engine.id));
  const modelsDirectory = modelsDirectoryOf(settings.dataDirectory);
  const configDirectory = settings.configPath === null ? process.cwd() : dirname(resolve(settings.configPath));
  return settings.config.models.flatMap((model) =>
    model.served_by
      .filter((replica) => cpuEngines.has(replica.engine))
      .map((replica) => {
        // The schema guarantees a file for a model outside the catalog.
        const catalog = replica.file === undefined ? model.catalog : null;
        const path = catalog === null ? resolve(configDirectory, replica.file ?? '') : modelFilePath(modelsDirectory, catalog);
        return { model, replica, engineId: replica.engine, path, catalog };
      }),
  );
}
