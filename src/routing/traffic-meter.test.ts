import { describe, expect, it } from 'vitest';
import { createTrafficMeter } from './traffic-meter.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const START = Date.UTC(2026, 10, 2, 0, 0, 0);

/** `calls` calls of route `key` evenly over `spanMs` from `from`. */
function send(meter: ReturnType<typeof createTrafficMeter>, key: string, calls: number, spanMs: number, from = START): number {
  for (let call = 0; call < calls; call++) meter.observe(key, from + (call * spanMs) / calls);
  return from + spanMs;
}

describe('createTrafficMeter', () => {
  it('reads a burst as the calls it made, not as a day of them', () => {
    const meter = createTrafficMeter();
    const end = send(meter, 'burst', 16_000, 5 * MINUTE_MS);
    // Scaled up from its first minutes, as before, this was 4.6 million calls a day.
    expect(meter.traffic('burst', end)).toMatchObject({ seen: 16_000, callsPerDay: 16_000 });
    // However long it has been since, the estimate never makes more than 1.67 times the burst of it.
    for (let hours = 1; hours <= 30; hours += 0.25)
      expect(meter.callsPerDay('burst', START + hours * HOUR_MS)).toBeLessThanOrEqual(1.67 * 16_000);
    // When the same hour comes the next day the burst is still in the last day, and an hour later it is out of it.
    expect(meter.traffic('burst', START + DAY_MS).seen).toBe(16_000);
    expect(meter.traffic('burst', START + DAY_MS + HOUR_MS)).toMatchObject({ seen: 0, callsPerDay: 0 });
  });

  it('takes a young route’s calls as they are in its first hour, then fills in the rest of its first day, and counts a day as it is', () => {
    const meter = createTrafficMeter();
    // A steady 2,400 calls a day: 100 an hour.
    send(meter, 'steady', 50, 30 * MINUTE_MS);
    expect(meter.callsPerDay('steady', START + 30 * MINUTE_MS)).toBeCloseTo(50, 6);
    send(meter, 'steady', 1_150, 11.5 * HOUR_MS, START + 30 * MINUTE_MS);
    // At 12 hours: the 1,200 seen and 11/23 of the 1,200 the rest of the day would bring at this pace.
    expect(meter.callsPerDay('steady', START + 12 * HOUR_MS)).toBeCloseTo(1_200 + (1_200 * 11) / 23, 6);
    send(meter, 'steady', 1_300, 13 * HOUR_MS, START + 12 * HOUR_MS);
    // Older than a day: the calls of the last 24 hours, nothing filled in, at any minute of the hour.
    for (const minute of [0, 20, 59]) {
      const day = meter.traffic('steady', START + 25 * HOUR_MS + minute * MINUTE_MS);
      expect(day.callsPerDay).toBe(day.seen);
      expect(day.seen).toBeCloseTo(2_400 - (100 * minute) / 60, 6);
    }
  });

  it('counts the exploration samples of each UTC day apart', () => {
    const meter = createTrafficMeter();
    meter.observe('route', START);
    for (let sample = 0; sample < 30; sample++) meter.observeSample('route', START + 23 * HOUR_MS + sample * MINUTE_MS);
    expect(meter.traffic('route', START + 23 * HOUR_MS + 45 * MINUTE_MS).samplesToday).toBe(30);
    expect(meter.traffic('route', START + DAY_MS + MINUTE_MS).samplesToday).toBe(0);
    meter.observeSample('route', START + DAY_MS + MINUTE_MS);
    expect(meter.traffic('route', START + DAY_MS + 2 * MINUTE_MS).samplesToday).toBe(1);
    expect(meter.traffic('unknown', START)).toEqual({ seen: 0, callsPerDay: 0, ageMs: 0, samplesToday: 0 });
  });
});
