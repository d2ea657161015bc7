/**
 * The model files this process is downloading right now, by destination
 * path, with their progress: so a call to such a model gets a 503 that says
 * "downloading, retry shortly" rather than "not downloaded", and `/readyz`
 * says why no model answers yet. Created at the composition root; the first
 * start's pull writes to it, the CPU engine and readiness read it.
 */
import { describeProgress, type DownloadProgress } from './download-progress.js';

export interface ModelDownloads {
  /** The download to `path` in progress, or undefined. */
  progress(path: string): DownloadProgress | undefined;
  /** "downloading, 45% 221 MB / 491 MB …" for a path being downloaded, else undefined. */
  describe(path: string): string | undefined;
  update(path: string, progress: DownloadProgress): void;
  /** The download ended (placed, failed or stopped). */
  end(path: string): void;
}

export function createModelDownloads(): ModelDownloads {
  const active = new Map<string, DownloadProgress>();
  return {
    progress: (path) => active.get(path),
    describe(path) {
      const progress = active.get(path);
      return progress === undefined ? undefined : `downloading, ${describeProgress(progress)}`;
    },
    update: (path, progress) => void active.set(path, progress),
    end: (path) => void active.delete(path),
  };
}
