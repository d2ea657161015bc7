import { describe, expect, it } from 'vitest';
import { quickDeathsAfter, restartDelayMs } from './restart-delay.js';

describe('restart delay', () => {
  it('replaces a worker that had served a while almost at once', () => {
    expect(quickDeathsAfter(7, 45_000)).toBe(0);
    expect(restartDelayMs(0)).toBe(250);
  });

  it('doubles the wait after each quick death in a row, up to 30 s', () => {
    let deaths = 0;
    const waits: number[] = [];
    for (let attempt = 0; attempt < 10; attempt++) {
      deaths = quickDeathsAfter(deaths, 1_000);
      waits.push(restartDelayMs(deaths));
    }
    expect(waits).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000]);
    expect(restartDelayMs(10_000)).toBe(30_000);
  });
});
