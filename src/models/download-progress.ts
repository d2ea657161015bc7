/** Progress of a model transfer: what the downloader reports, and how it reads on a terminal. Pure functions. */

export interface DownloadProgress {
  /** Bytes of the file in hand, counting those kept from an earlier, interrupted run. */
  bytesDone: number;
  /** Size of the whole file, when the server or the catalog says; null when unknown. */
  totalBytes: number | null;
  /** Transfer rate of this run (bytes kept from earlier runs do not count). */
  bytesPerSecond: number;
  /** At the current rate; null when the total or the rate is unknown. */
  secondsRemaining: number | null;
}

export interface ProgressMeter {
  /** The progress once `bytesDone` bytes are in hand. */
  at(bytesDone: number): DownloadProgress;
}

/** Measures the rate from the moment it is created; `startBytes` were in hand already (a resumed part). */
export function createProgressMeter(totalBytes: number | null, startBytes: number, now: () => number = Date.now): ProgressMeter {
  const startedAt = now();
  return {
    at(bytesDone) {
      const seconds = (now() - startedAt) / 1000;
      const bytesPerSecond = seconds > 0 ? (bytesDone - startBytes) / seconds : 0;
      const secondsRemaining = totalBytes !== null && bytesPerSecond > 0 ? Math.max(0, (totalBytes - bytesDone) / bytesPerSecond) : null;
      return { bytesDone, totalBytes, bytesPerSecond, secondsRemaining };
    },
  };
}

/** Decimal units, as Hugging Face and most download tools show sizes. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

/** `0:07`, `12:30`, `1:02:03`. */
export function formatDuration(totalSeconds: number): string {
  const seconds = Math.round(totalSeconds);
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = String(seconds % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`;
}

export function percentOf(progress: DownloadProgress): number | null {
  if (progress.totalBytes === null || progress.totalBytes === 0) return null;
  return Math.min(100, Math.floor((progress.bytesDone / progress.totalBytes) * 100));
}

/** `45%  221.1 MB / 491.4 MB  12.3 MB/s  ETA 0:22` (without the parts that are unknown). */
export function describeProgress(progress: DownloadProgress): string {
  const percent = percentOf(progress);
  const amount =
    progress.totalBytes === null
      ? formatBytes(progress.bytesDone)
      : `${formatBytes(progress.bytesDone)} / ${formatBytes(progress.totalBytes)}`;
  const parts = [percent === null ? null : `${percent}%`, amount, `${formatBytes(Math.round(progress.bytesPerSecond))}/s`];
  if (progress.secondsRemaining !== null) parts.push(`ETA ${formatDuration(progress.secondsRemaining)}`);
  return parts.filter((part) => part !== null).join('  ');
}

/** `[#########...........]`, or a bouncing-free empty bar when the total is unknown. */
export function progressBar(progress: DownloadProgress, width = 24): string {
  const percent = percentOf(progress);
  const filled = percent === null ? 0 : Math.round((percent / 100) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}
