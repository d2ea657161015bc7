/**
 * Shows transfer progress on a stream (stderr). On a terminal: one line with a
 * bar, redrawn in place with `\r` a few times a second. Elsewhere (CI logs,
 * tests, `2> file`): a plain line at each 10 % step or every few seconds,
 * whichever comes first, so a log shows the transfer moving without a flood.
 */
import { describeProgress, percentOf, progressBar, type DownloadProgress } from './download-progress.js';

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressReporter {
  update(progress: DownloadProgress): void;
  /** Draws the last state and ends the line; call once, whether the transfer succeeded or not. */
  finish(): void;
}

export interface ProgressReporterOptions {
  stream: ProgressStream;
  /** What is being transferred, e.g. the file name. */
  label: string;
  /** Terminal redraw interval. */
  redrawMilliseconds?: number;
  /** Longest silence in plain-line mode. */
  lineMilliseconds?: number;
  now?: () => number;
}

export function createProgressReporter(options: ProgressReporterOptions): ProgressReporter {
  const { stream, label } = options;
  const now = options.now ?? Date.now;
  const terminal = stream.isTTY === true;
  const redrawMilliseconds = options.redrawMilliseconds ?? 100;
  const lineMilliseconds = options.lineMilliseconds ?? 5_000;
  let last: DownloadProgress | null = null;
  let drawnAt = -Infinity;
  let drawnStep = -1;
  let drawn: DownloadProgress | null = null;
  let drawnLength = 0;

  const drawTerminal = (progress: DownloadProgress) => {
    const line = terminalLine(label, progress, (stream.columns ?? 80) - 1);
    // Pad over the tail of a longer previous line.
    stream.write(`\r${line.padEnd(drawnLength)}`);
    drawnLength = line.length;
    drawn = progress;
  };
  const drawLine = (progress: DownloadProgress) => {
    stream.write(`${label}: ${describeProgress(progress)}\n`);
    drawn = progress;
  };

  return {
    update(progress) {
      last = progress;
      const time = now();
      if (terminal) {
        if (time - drawnAt < redrawMilliseconds) return;
        drawnAt = time;
        drawTerminal(progress);
        return;
      }
      const percent = percentOf(progress);
      const step = percent === null ? drawnStep : Math.floor(percent / 10);
      if (step > drawnStep || time - drawnAt >= lineMilliseconds) {
        drawnStep = Math.max(step, drawnStep);
        drawnAt = time;
        drawLine(progress);
      }
    },
    finish() {
      if (last === null) return;
      if (terminal) {
        drawTerminal(last);
        stream.write('\n');
      } else if (drawn !== last) {
        drawLine(last);
      }
    },
  };
}

/** `label [####....] 45%  ...` within `width` columns: the bar shrinks, then goes, then the label is shortened. */
export function terminalLine(label: string, progress: DownloadProgress, width: number): string {
  const text = describeProgress(progress);
  const room = width - text.length - 1;
  const barWidth = Math.min(24, room - label.length - 3);
  if (barWidth >= 8) return `${label} ${progressBar(progress, barWidth)} ${text}`;
  if (room >= label.length) return `${label} ${text}`;
  if (room >= 8) return `${label.slice(0, room - 1)}… ${text}`;
  return text.slice(0, width);
}
