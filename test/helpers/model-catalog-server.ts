/**
 * A stand-in for the public model download: a tiny answering model the test
 * writes, served by a local file server, and a model catalog
 * (`TASKGATE_MODEL_CATALOG`) that names it under the recommended model's id,
 * pinned by its real size and sha256. A first start then fetches, verifies
 * and serves it exactly as it would the real file, without the internet.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findDefaultModel, recommendedModel, DEFAULT_MODELS, type DefaultModel } from '../../src/catalog/default-models.js';
import { startFileServer, type FileServer } from './file-server.js';
import { temporaryDirectory } from './temporary-directory.js';
import { TINY_ANSWERS, writeAnsweringModel } from './tiny-models.js';

export interface ModelCatalogServer {
  files: FileServer;
  /** Path of the catalog file, for `TASKGATE_MODEL_CATALOG`. */
  catalogPath: string;
  /** The catalog entry: the recommended model's id and name, the tiny file's size and checksum. */
  model: DefaultModel;
  /** What the model answers, whatever it is asked. */
  answer: string;
  /** The URL path the file is served at. */
  path: string;
  close(): Promise<void>;
}

/** `url` replaces the file's URL in the catalog (e.g. a closed port, to play offline). */
export async function startModelCatalogServer(options: { url?: string } = {}): Promise<ModelCatalogServer> {
  const directory = temporaryDirectory('taskgate-catalog-');
  const modelPath = join(directory, 'model.gguf');
  writeAnsweringModel(modelPath, TINY_ANSWERS.plain);
  const bytes = readFileSync(modelPath);
  const files = await startFileServer();
  const recommended = recommendedModel(DEFAULT_MODELS) ?? findDefaultModel('qwen2.5-0.5b-instruct')!;
  const path = `/models/${recommended.file}`;
  files.files.set(path, bytes);
  const model: DefaultModel = {
    ...recommended,
    url: options.url ?? `${files.baseUrl}${path}`,
    sizeBytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    recommended: true,
  };
  const catalogPath = join(directory, 'catalog.json');
  writeFileSync(catalogPath, JSON.stringify([model], null, 2));
  return { files, catalogPath, model, answer: TINY_ANSWERS.plain, path, close: () => files.close() };
}
