/**
 * What `taskgate models pull <argument>` means: a catalog model (by id or
 * alias), a file at an http(s) URL, or a GGUF file on this machine; where it
 * goes; and what it must match. A pure decision: file checks are passed in.
 */
import { basename, join } from 'node:path';
import { DEFAULT_MODELS, findDefaultModel, type DefaultModel } from '../catalog/default-models.js';
import { applyMirror } from './mirror-url.js';

export type PullTarget =
  | {
      kind: 'download';
      /** After the mirror, when there is one. */
      url: string;
      destination: string;
      expectedSha256?: string;
      expectedSize?: number;
      /** The catalog entry, when the argument named one. */
      model?: DefaultModel;
    }
  | { kind: 'copy'; source: string; destination: string; expectedSha256?: string; expectedSize?: number; model?: DefaultModel };

export class PullTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PullTargetError';
  }
}

export interface PullTargetContext {
  modelsDirectory: string;
  /** Replaces the scheme and host of catalog URLs (not of URLs given on the command line). */
  mirror?: string;
  /** `--sha256`: for URLs and local files; a catalog model has its own. */
  sha256?: string;
  /** Whether a regular file exists at a path. */
  isFile: (path: string) => boolean;
  models?: readonly DefaultModel[];
}

export function resolvePullTarget(argument: string, context: PullTargetContext): PullTarget {
  const models = context.models ?? DEFAULT_MODELS;
  const expectedSha256 = context.sha256?.toLowerCase();
  if (/^https?:\/\//i.test(argument)) {
    const file = fileNameOfUrl(argument);
    return { kind: 'download', url: argument, destination: join(context.modelsDirectory, file), expectedSha256 };
  }
  const model = findDefaultModel(argument, models);
  if (model !== undefined) {
    if (expectedSha256 !== undefined && expectedSha256 !== model.sha256) {
      throw new PullTargetError(
        `"${model.id}" is a catalog model with its own checksum (${model.sha256}); --sha256 is for URLs and local files`,
      );
    }
    return {
      kind: 'download',
      url: applyMirror(model.url, context.mirror),
      destination: join(context.modelsDirectory, model.file),
      expectedSha256: model.sha256,
      expectedSize: model.sizeBytes,
      model,
    };
  }
  if (context.isFile(argument)) {
    const file = basename(argument);
    // A copy of a catalog file (same name) is held to the catalog's checksum, unless the caller gave one.
    const known = models.find((candidate) => candidate.file === file);
    const fromCatalog = expectedSha256 === undefined && known !== undefined;
    return {
      kind: 'copy',
      source: argument,
      destination: join(context.modelsDirectory, file),
      expectedSha256: fromCatalog ? known.sha256 : expectedSha256,
      expectedSize: fromCatalog ? known.sizeBytes : undefined,
      model: fromCatalog ? known : undefined,
    };
  }
  const looksLikePath = argument.includes('/') || argument.includes('\\') || argument.toLowerCase().endsWith('.gguf');
  throw new PullTargetError(
    looksLikePath
      ? `no file at ${argument}`
      : `"${argument}" is not a catalog model (see "taskgate models list"), an http(s) URL or an existing .gguf file`,
  );
}

/** The last segment of the URL's path, decoded; refused when it cannot name a file safely. */
export function fileNameOfUrl(url: string): string {
  let name: string;
  try {
    name = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    throw new PullTargetError(`"${url}" is not a valid URL`);
  }
  if (name === '' || name === '.' || name === '..' || /[/\\\0]/.test(name)) {
    throw new PullTargetError(`cannot tell a file name from ${url}; give a URL that ends with the file name`);
  }
  return name;
}
