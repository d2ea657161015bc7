import { describe, expect, it } from 'vitest';
import { createProgressMeter, describeProgress, formatBytes, formatDuration, type DownloadProgress } from './download-progress.js';
import { createProgressReporter, terminalLine } from './progress-reporter.js';

const at = (bytesDone: number, totalBytes: number | null = 1000): DownloadProgress => ({
  bytesDone,
  totalBytes,
  bytesPerSecond: 100,
  secondsRemaining: totalBytes === null ? null : (totalBytes - bytesDone) / 100,
});

describe('progress text', () => {
  it('formats sizes, durations and a whole line', () => {
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(491_400_032)).toBe('491.4 MB');
    expect(formatBytes(2_104_932_768)).toBe('2.10 GB');
    expect(formatDuration(7)).toBe('0:07');
    expect(formatDuration(3723)).toBe('1:02:03');
    expect(describeProgress(at(450))).toBe('45%  450 B / 1.00 kB  100 B/s  ETA 0:06');
    expect(describeProgress(at(450, null))).toBe('450 B  100 B/s');
  });

  it('measures the rate of this run only, not bytes resumed from a part', () => {
    let now = 0;
    const meter = createProgressMeter(10_000, 4_000, () => now);
    now = 2_000;
    expect(meter.at(6_000)).toEqual({ bytesDone: 6_000, totalBytes: 10_000, bytesPerSecond: 1_000, secondsRemaining: 4 });
  });
});

describe('createProgressReporter', () => {
  it('writes a plain line per 10 % step when not on a terminal, and the final state once', () => {
    const written: string[] = [];
    const now = 0;
    const reporter = createProgressReporter({ stream: { write: (text: string) => written.push(text) }, label: 'f.gguf', now: () => now });
    for (let bytes = 0; bytes <= 1000; bytes += 25) reporter.update(at(bytes));
    reporter.finish();
    expect(written.map((line) => /(\d+)%/.exec(line)?.[1])).toEqual(['0', '10', '20', '30', '40', '50', '60', '70', '80', '90', '100']);
    expect(written.every((line) => line.endsWith('\n') && !line.includes('\r'))).toBe(true);
  });

  it('writes a line every few seconds when there is no step to show', () => {
    const written: string[] = [];
    let now = 0;
    const reporter = createProgressReporter({
      stream: { write: (text: string) => written.push(text) },
      label: 'f',
      now: () => now,
      lineMilliseconds: 5_000,
    });
    reporter.update(at(1, null));
    now = 1_000;
    reporter.update(at(2, null));
    now = 6_000;
    reporter.update(at(3, null));
    expect(written).toHaveLength(2);
  });

  it('redraws one line with \\r on a terminal, at most every interval, and ends it', () => {
    const written: string[] = [];
    let now = 0;
    const reporter = createProgressReporter({
      stream: { isTTY: true, columns: 80, write: (text: string) => written.push(text) },
      label: 'f.gguf',
      now: () => now,
    });
    reporter.update(at(100));
    reporter.update(at(200));
    now = 150;
    reporter.update(at(300));
    reporter.finish();
    expect(written.filter((text) => text.startsWith('\r'))).toHaveLength(3);
    expect(written[0]).toContain('f.gguf [##......................] 10%');
    expect(written.at(-1)).toBe('\n');
  });

  it('fits the line to the terminal: a shorter bar, then none, then a shortened label', () => {
    const progress = at(450);
    const text = describeProgress(progress);
    expect(terminalLine('f.gguf', progress, 80)).toBe(`f.gguf [###########.............] ${text}`);
    expect(terminalLine('f.gguf', progress, text.length + 20)).toBe(`f.gguf [#####.....] ${text}`);
    expect(terminalLine('SmolLM2-135M-Instruct-Q4_K_M.gguf', progress, 80)).toBe(`SmolLM2-135M-Instruct-Q4_K_M.gguf ${text}`);
    expect(terminalLine('SmolLM2-135M-Instruct-Q4_K_M.gguf', progress, text.length + 12)).toBe(`SmolLM2-13… ${text}`);
    for (const width of [20, 40, 60, 80, 120])
      expect(terminalLine('SmolLM2-135M-Instruct-Q4_K_M.gguf', progress, width).length).toBeLessThanOrEqual(width);
  });
});
