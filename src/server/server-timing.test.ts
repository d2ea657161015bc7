import { describe, expect, it } from 'vitest';
import { serverTiming, twoDecimals } from './server-timing.js';

describe('Server-Timing', () => {
  it('writes durations with two decimals, as toFixed(2) does', () => {
    for (const milliseconds of [0, 0.004, 0.006, 0.1, 0.25, 1, 1.5, 9.99, 12.345678, 99.999, 100, 1234.5, 60_000.01]) {
      expect(twoDecimals(milliseconds)).toBe(milliseconds.toFixed(2));
    }
    expect(serverTiming(0.42, 12.3)).toBe('gateway;dur=0.42, upstream;dur=12.30');
  });
});
