import { describe, expect, it } from 'vitest';
import { EngineMeter, UTILISATION_WINDOW_MS, type MeterMark } from './engine-meter.js';

function meter(costPerHour: number | null = 3.6) {
  let now = 0;
  const engine = new EngineMeter({ engineId: 'gpu', costPerHour, now: () => now });
  return { engine, at: (ms: number) => void (now = ms) };
}

const mark = (): MeterMark => ({ since: 0, area: 0 });

describe('EngineMeter', () => {
  it('gives a call alone its whole duration, and prices it at cost_per_hour', () => {
    const { engine, at } = meter();
    const call = mark();
    at(1_000);
    engine.start(call);
    at(3_000);
    expect(engine.end(call)).toBeCloseTo(2);
    expect(engine.costOf(2)).toBeCloseTo(0.002);
    expect(engine.load().busySeconds).toBe(2);
  });

  it('splits time that calls share: two calls overlapping exactly get half each', () => {
    const { engine, at } = meter();
    const first = mark();
    const second = mark();
    engine.start(first);
    engine.start(second);
    at(4_000);
    expect(engine.end(first)).toBeCloseTo(2);
    expect(engine.end(second)).toBeCloseTo(2);
  });

  it('divides by the average in flight over the call: shares add up to the busy time', () => {
    const { engine, at } = meter();
    const long = mark();
    const short = mark();
    engine.start(long); // 0..4 s
    at(1_000);
    engine.start(short); // 1..3 s, alongside the long one
    at(3_000);
    const shortShare = engine.end(short);
    at(4_000);
    const longShare = engine.end(long);
    expect(shortShare).toBeCloseTo(1); // 2 s at an average of 2 in flight
    expect(longShare).toBeCloseTo(16 / 6); // 4 s at an average of 6/4 in flight
    expect(engine.load().busySeconds).toBe(4);
    // Approximately: the average hides when in the call the sharing happened.
    expect(shortShare + longShare).toBeGreaterThan(3.5);
  });

  it('charges idle time to no call, and has no cost without a price', () => {
    const { engine, at } = meter(null);
    at(10_000);
    const call = mark();
    engine.start(call);
    at(10_500);
    expect(engine.end(call)).toBeCloseTo(0.5);
    expect(engine.costOf(0.5)).toBeNull();
    expect(engine.load().busySeconds).toBe(0.5);
  });

  it('reports utilisation as the busy fraction of about the last five minutes', () => {
    const { engine, at } = meter();
    const call = mark();
    engine.start(call);
    at(UTILISATION_WINDOW_MS);
    expect(engine.load()).toMatchObject({ engineId: 'gpu', inFlight: 1, costPerHour: 3.6 });
    expect(engine.load().utilisation).toBeCloseTo(1 - Math.exp(-1), 6);
    engine.end(call);
    at(UTILISATION_WINDOW_MS * 10);
    expect(engine.load().utilisation).toBeLessThan(0.001);
  });
});
