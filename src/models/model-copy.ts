/**
 * Installs a model file that is already on this machine (carried in on a disk
 * for an air-gapped site, or fetched by other means): checks that it is GGUF,
 * copies it through a `.part` while hashing it, verifies, renames into place.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { DownloadProgress } from './download-progress.js';
import { hashingCounter } from './hashing-counter.js';
import { ModelFileError } from './model-file-error.js';
import { GGUF_MAGIC, leadingBytes, partFilePath } from './model-files.js';
import { placeVerifiedPart, type PlacedModelFile } from './place-verified-part.js';

export interface CopyModelFileOptions {
  source: string;
  destination: string;
  expectedSha256?: string;
  expectedSize?: number;
  signal?: AbortSignal;
  onProgress?: (progress: DownloadProgress) => void;
}

export async function copyModelFile(options: CopyModelFileOptions): Promise<PlacedModelFile> {
  const { source, destination } = options;
  let size: number;
  try {
    const stats = statSync(source);
    if (!stats.isFile()) throw new ModelFileError(`${source} is not a file`, { code: 'file_system' });
    size = stats.size;
  } catch (error) {
    if (error instanceof ModelFileError) throw error;
    throw new ModelFileError(`cannot read ${source}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      code: 'file_system',
      cause: error,
    });
  }
  const leading = await leadingBytes(source);
  if (!leading.equals(GGUF_MAGIC)) {
    throw new ModelFileError(`${source} is not a GGUF file (it starts with ${JSON.stringify(leading.toString('latin1'))}, not "GGUF")`, {
      code: 'not_gguf',
    });
  }

  const partPath = partFilePath(destination);
  await mkdir(dirname(destination), { recursive: true });
  const hash = createHash('sha256');
  const counter = hashingCounter({ hash, totalBytes: size, startBytes: 0, onProgress: options.onProgress });
  try {
    await pipeline(createReadStream(source, { highWaterMark: 1 << 20 }), counter, createWriteStream(partPath), { signal: options.signal });
  } catch (error) {
    // A local copy is quick to redo: no part is kept.
    await rm(partPath, { force: true });
    const code = options.signal?.aborted === true ? 'aborted' : 'file_system';
    throw new ModelFileError(`copying ${source} failed: ${error instanceof Error ? error.message : String(error)}`, { code, cause: error });
  }
  return placeVerifiedPart({ ...options, partPath, sha256: hash.digest('hex'), requireGguf: true });
}
