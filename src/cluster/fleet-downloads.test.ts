import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFleetDownloads } from './fleet-downloads.js';
import type { ToWorker } from './fleet-messages.js';

const at = (bytesDone: number) => ({ bytesDone, totalBytes: 100, bytesPerSecond: 10, secondsRemaining: 1 });

describe('fleet downloads', () => {
  afterEach(() => void vi.useRealTimers());

  it('passes progress on to the workers at most every interval, the latest always, and the end at once', () => {
    vi.useFakeTimers();
    const sent: ToWorker[] = [];
    const downloads = createFleetDownloads(
      (message) => sent.push(message),
      250,
      () => Date.now(),
    );
    downloads.update('/m.gguf', at(1));
    downloads.update('/m.gguf', at(2));
    downloads.update('/m.gguf', at(3));
    expect(sent).toEqual([{ type: 'fleet:download', path: '/m.gguf', progress: at(1) }]);
    expect(downloads.describe('/m.gguf')).toMatch(/^downloading/);
    expect(downloads.entries()).toEqual([['/m.gguf', at(3)]]);
    // The download stalls at 3: the workers still learn of it.
    vi.advanceTimersByTime(250);
    expect(sent.at(-1)).toEqual({ type: 'fleet:download', path: '/m.gguf', progress: at(3) });
    downloads.end('/m.gguf');
    expect(sent.at(-1)).toEqual({ type: 'fleet:download', path: '/m.gguf', progress: null });
    expect(downloads.entries()).toEqual([]);
    vi.advanceTimersByTime(1_000);
    expect(sent).toHaveLength(3);
  });
});
