/**
 * A newcomer's first call must get an answer. When `taskgate serve` starts
 * with no model able to answer (no model file on disk, no HTTP engine), it
 * fetches the catalog's recommended model in the background while the server
 * already listens: calls and `/readyz` say "downloading" meanwhile, and the
 * model answers as soon as its file is in place (the CPU engine looks for it
 * on every call). The download is the one `taskgate models pull` makes:
 * resumable and checked against the catalog's size and sha256.
 *
 * Skipped with `--no-pull` or `TASKGATE_OFFLINE=1`. When it cannot start
 * (offline) or fails, the server keeps running and one short block says the
 * exact command that fetches the model later, its size and where it goes.
 */
import { basename } from 'node:path';
import type { Settings } from '../config/load-config.js';
import { configuredModelFiles } from '../models/configured-model-files.js';
import { recommendedModel, type DefaultModel } from '../catalog/default-models.js';
import { formatBytes } from '../models/download-progress.js';
import { ModelFileError } from '../models/model-file-error.js';
import type { ModelDownloads } from '../models/model-downloads.js';
import { fileSize, modelFileStatus, modelsDirectoryOf } from '../models/model-files.js';
import { resolvePullTarget } from '../models/pull-target.js';
import { commandName } from './command-name.js';
import { transferModelFile } from './transfer-model-file.js';

export interface FirstStartPullOptions {
  settings: Settings;
  downloads: ModelDownloads;
  /** `--no-pull`. */
  noPull: boolean;
  /** `TASKGATE_MODEL_MIRROR`, as `models pull` takes it. */
  mirror: string | undefined;
  stderr: NodeJS.WriteStream;
  signal: AbortSignal;
}

/** The model a first start would fetch, or null when some model can already answer (or none could be fetched). */
export function modelToPull(settings: Settings): { model: DefaultModel; path: string } | null {
  if (settings.config.engines.some((engine) => engine.type !== 'llama-cpp')) return null;
  const files = configuredModelFiles(settings);
  if (
    files.some((file) =>
      file.catalog === null
        ? fileSize(file.path) !== null
        : modelFileStatus(modelsDirectoryOf(settings.dataDirectory), file.catalog).state === 'present',
    )
  )
    return null;
  const fetchable = files.filter((file) => file.catalog !== null);
  const recommended = recommendedModel(settings.catalog);
  const chosen = fetchable.find((file) => file.catalog?.id === recommended?.id) ?? fetchable[0];
  return chosen?.catalog == null ? null : { model: chosen.catalog, path: chosen.path };
}

/** Resolves when the download is over (placed, failed or skipped); never rejects. */
export async function pullOnFirstStart(options: FirstStartPullOptions): Promise<void> {
  const { settings, downloads, stderr } = options;
  const wanted = modelToPull(settings);
  if (wanted === null) return;
  const { model, path } = wanted;
  const later = laterBlock(settings, model, path);
  if (options.noPull || settings.offline) {
    stderr.write(
      `\ntaskgate: no model is on disk, and ${options.noPull ? '--no-pull' : 'TASKGATE_OFFLINE=1'} says not to fetch one.\n${later}\n`,
    );
    return;
  }

  stderr.write(
    `\ntaskgate: no model is on disk yet; fetching ${model.id} (${formatBytes(model.sizeBytes)}) to ${path}. Calls to it get a 503 until it is in place.\n`,
  );
  try {
    const target = resolvePullTarget(model.id, {
      modelsDirectory: modelsDirectoryOf(settings.dataDirectory),
      mirror: options.mirror,
      isFile: () => false,
      models: settings.catalog,
    });
    const placed = await transferModelFile(target, {
      stream: stderr,
      signal: options.signal,
      onProgress: (progress) => downloads.update(path, progress),
    });
    stderr.write(`taskgate: ${model.id} is ready (${formatBytes(placed.sizeBytes)}, sha256 verified): ${placed.path}\n`);
  } catch (error) {
    if (options.signal.aborted) return;
    const why = error instanceof ModelFileError ? error.message : error instanceof Error ? error.message : String(error);
    stderr.write(`\ntaskgate: could not fetch ${model.id}: ${why}\n${later}\n`);
  } finally {
    downloads.end(path);
  }
}

/** The short block that says how to get the model later: the exact command, its size, where it goes. */
function laterBlock(settings: Settings, model: DefaultModel, path: string): string {
  const directoryFlag = settings.dataDirectorySource === 'default' ? '' : ` --data-dir ${settings.dataDirectory}`;
  return [
    `  Fetch it later with:  ${commandName()} models pull ${model.id}${directoryFlag}`,
    `  Size:                 ${formatBytes(model.sizeBytes)} (${basename(path)})`,
    `  It goes to:           ${path}`,
    '  The server runs meanwhile; calls to the model get a 503 and /readyz says why.',
  ].join('\n');
}
