/**
 * What the primary of `serve --workers N` and its workers say to each other
 * over the cluster IPC, besides the rate limits (`limits/cluster/`). Both
 * ends are taskgate: the checks only tell these messages from the others.
 */
import type { Settings } from '../config/load-config.js';
import type { DownloadProgress } from '../models/download-progress.js';
import type { MetricsSnapshot } from '../tracking/metrics.js';

/** Primary to worker. */
export type ToWorker =
  /** The first message: what to serve. `settings` are the primary's, with `server.metrics` left to the primary. */
  | { type: 'fleet:start'; slot: number; settings: Settings; downloads: Array<[string, DownloadProgress]> }
  /** Finish the calls in flight and exit. */
  | { type: 'fleet:stop' }
  /** The first start's model download: its progress, or null once it ended. */
  | { type: 'fleet:download'; path: string; progress: DownloadProgress | null }
  /** Hand over this worker's metrics for an aggregate. */
  | { type: 'fleet:snapshot-request'; id: number }
  /** The aggregate a worker asked for (`fleet:metrics-request`), or why there is none. */
  | { type: 'fleet:metrics'; id: number; contentType: string; body: string }
  | { type: 'fleet:metrics-failed'; id: number; message: string };

/** Worker to primary. */
export type ToPrimary =
  /** The worker listens for messages now (one sent before would be lost): the primary sends `fleet:start`. */
  | { type: 'fleet:hello' }
  | { type: 'fleet:listening'; port: number }
  /** The start failed; the worker exits next. The error's code and syscall let the primary explain it as a lone process would. */
  | { type: 'fleet:start-failed'; message: string; code: string | null; syscall: string | null }
  | { type: 'fleet:snapshot'; id: number; snapshot: MetricsSnapshot }
  /** A scrape of `/metrics` reached this worker: it asks for every worker's aggregate. */
  | { type: 'fleet:metrics-request'; id: number };

export function asToWorker(message: unknown): ToWorker | null {
  return hasFleetType(message) &&
    ['fleet:start', 'fleet:stop', 'fleet:download', 'fleet:snapshot-request', 'fleet:metrics', 'fleet:metrics-failed'].includes(
      message.type,
    )
    ? (message as ToWorker)
    : null;
}

export function asToPrimary(message: unknown): ToPrimary | null {
  return hasFleetType(message) &&
    ['fleet:hello', 'fleet:listening', 'fleet:start-failed', 'fleet:snapshot', 'fleet:metrics-request'].includes(message.type)
    ? (message as ToPrimary)
    : null;
}

function hasFleetType(message: unknown): message is { type: string } {
  return typeof message === 'object' && message !== null && typeof (message as { type?: unknown }).type === 'string';
}
