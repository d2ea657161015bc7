/**
 * The last step of every pull: a complete `.part` is checked (size, sha256,
 * GGUF magic) and only then renamed over the destination. A part that fails a
 * check is deleted, so a bad file never sits where the engine would load it.
 */
import { rename, rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { ModelFileError } from './model-file-error.js';
import { fileSize, GGUF_MAGIC, leadingBytes } from './model-files.js';

export interface PlacedModelFile {
  path: string;
  sizeBytes: number;
  /** Lower-case hex sha256 of the file, computed while it was written. */
  sha256: string;
}

export interface PlaceVerifiedPartOptions {
  partPath: string;
  destination: string;
  /** Hash of the part's bytes, computed by the caller as they were written. */
  sha256: string;
  expectedSha256?: string;
  expectedSize?: number;
  requireGguf?: boolean;
}

export async function placeVerifiedPart(options: PlaceVerifiedPartOptions): Promise<PlacedModelFile> {
  const { partPath, destination, sha256 } = options;
  const name = basename(destination);
  const sizeBytes = fileSize(partPath) ?? 0;
  const expectedSha256 = options.expectedSha256?.toLowerCase();
  const sizeWrong = options.expectedSize !== undefined && sizeBytes !== options.expectedSize;
  const checksumWrong = expectedSha256 !== undefined && sha256 !== expectedSha256;
  if (sizeWrong || checksumWrong) {
    await rm(partPath, { force: true });
    const problem = checksumWrong ? 'checksum mismatch' : 'size mismatch';
    const expected = [
      expectedSha256 === undefined ? null : `sha256 ${expectedSha256}`,
      options.expectedSize === undefined ? null : `${options.expectedSize} bytes`,
    ];
    throw new ModelFileError(
      `${problem} for ${name}: expected ${expected.filter((part) => part !== null).join(', ')}; got sha256 ${sha256}, ${sizeBytes} bytes. ` +
        'The file was deleted; check the source (URL, mirror or --sha256).',
      { code: 'integrity' },
    );
  }
  if (options.requireGguf === true) {
    const leading = await leadingBytes(partPath);
    if (!leading.equals(GGUF_MAGIC)) {
      await rm(partPath, { force: true });
      throw new ModelFileError(
        `${name} is not a GGUF file (it starts with ${JSON.stringify(leading.toString('latin1'))}, not "GGUF"); it was deleted`,
        {
          code: 'not_gguf',
        },
      );
    }
  }
  await rename(partPath, destination);
  return { path: destination, sizeBytes, sha256 };
}
