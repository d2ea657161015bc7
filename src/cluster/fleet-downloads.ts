/**
 * The first start's model download under `serve --workers N`: the primary
 * downloads once, and every worker answers calls to that model with the 503
 * `model_downloading` (and `/readyz` with the progress) as a lone process
 * does. The primary's `ModelDownloads` passes each change on to the workers,
 * at most every `intervalMs` per file (the end always at once); a worker
 * started meanwhile gets the current state with its start message.
 */
import type { DownloadProgress } from '../models/download-progress.js';
import { createModelDownloads, type ModelDownloads } from '../models/model-downloads.js';
import type { ToWorker } from './fleet-messages.js';

export interface FleetDownloads extends ModelDownloads {
  /** The downloads in progress, for a worker that starts now. */
  entries(): Array<[string, DownloadProgress]>;
}

export function createFleetDownloads(
  broadcast: (message: ToWorker) => void,
  intervalMs = 250,
  now: () => number = Date.now,
): FleetDownloads {
  const local = createModelDownloads();
  const active = new Map<string, DownloadProgress>();
  /** Per path: when progress was last sent, and the timer that sends the latest once the interval is over. */
  const sending = new Map<string, { sentAt: number; later: NodeJS.Timeout | null }>();

  function send(path: string): void {
    const progress = active.get(path);
    if (progress === undefined) return;
    sending.set(path, { sentAt: now(), later: null });
    broadcast({ type: 'fleet:download', path, progress });
  }

  return {
    progress: (path) => local.progress(path),
    describe: (path) => local.describe(path),
    update(path, progress) {
      local.update(path, progress);
      active.set(path, progress);
      const state = sending.get(path);
      if (state === undefined || now() - state.sentAt >= intervalMs) return send(path);
      // Too soon: the latest goes out when the interval is over, so a stalled download still shows where it stopped.
      state.later ??= setTimeout(() => send(path), intervalMs - (now() - state.sentAt));
    },
    end(path) {
      local.end(path);
      active.delete(path);
      const later = sending.get(path)?.later;
      if (later != null) clearTimeout(later);
      sending.delete(path);
      broadcast({ type: 'fleet:download', path, progress: null });
    },
    entries: () => [...active],
  };
}
