/**
 * Where model files live (`<data dir>/models/<file>`) and what state a catalog
 * model's file is in. The server uses `modelFileStatus` to decide whether a
 * catalog model can be served and `missingModelMessage` to tell the operator
 * how to fetch one that cannot.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { DefaultModel } from '../catalog/default-models.js';

/** Every GGUF file starts with these four bytes. */
export const GGUF_MAGIC = Buffer.from('GGUF', 'latin1');

export function modelsDirectoryOf(dataDirectory: string): string {
  return join(dataDirectory, 'models');
}

export function modelFilePath(modelsDirectory: string, model: Pick<DefaultModel, 'file'>): string {
  return join(modelsDirectory, model.file);
}

/** Downloads and copies land here first; only a verified file is renamed into place. */
export function partFilePath(destination: string): string {
  return `${destination}.part`;
}

export type ModelFileStatus =
  /** The file is there with the catalog size (its checksum was checked when it was pulled). */
  | { state: 'present'; path: string; sizeBytes: number }
  /** A file is there but its size is not the catalog's: another build, or damaged. */
  | { state: 'wrong_size'; path: string; sizeBytes: number }
  /** Only a `.part` from an interrupted pull is there. */
  | { state: 'partial'; path: string; partPath: string; partBytes: number; fraction: number }
  | { state: 'missing'; path: string };

/** Synchronous, and reads sizes only (never hashes), so it is cheap enough for start-up and listings. */
export function modelFileStatus(modelsDirectory: string, model: Pick<DefaultModel, 'file' | 'sizeBytes'>): ModelFileStatus {
  const path = modelFilePath(modelsDirectory, model);
  const size = fileSize(path);
  if (size !== null)
    return size === model.sizeBytes ? { state: 'present', path, sizeBytes: size } : { state: 'wrong_size', path, sizeBytes: size };
  const partPath = partFilePath(path);
  const partBytes = fileSize(partPath);
  if (partBytes !== null) return { state: 'partial', path, partPath, partBytes, fraction: Math.min(1, partBytes / model.sizeBytes) };
  return { state: 'missing', path };
}

export function missingModelMessage(modelsDirectory: string, model: Pick<DefaultModel, 'id'>): string {
  return `model file for "${model.id}" is not in ${modelsDirectory}; fetch it with: taskgate models pull ${model.id}`;
}

/** Size of a regular file, or null when there is none. */
export function fileSize(path: string): number | null {
  try {
    const stats = statSync(path);
    return stats.isFile() ? stats.size : null;
  } catch {
    return null;
  }
}

/** Feeds a file's bytes into `hash`, reporting each chunk's length (for progress while a large part is re-read). */
export async function hashFileInto(path: string, hash: Hash, onBytes?: (bytes: number) => void): Promise<void> {
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const bytes = chunk as Buffer;
    hash.update(bytes);
    onBytes?.(bytes.length);
  }
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await hashFileInto(path, hash);
  return hash.digest('hex');
}

/** The file's first four bytes (fewer for a shorter file): enough to tell a GGUF file. */
export async function leadingBytes(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(GGUF_MAGIC.length);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

export async function startsWithGgufMagic(path: string): Promise<boolean> {
  return (await leadingBytes(path)).equals(GGUF_MAGIC);
}
