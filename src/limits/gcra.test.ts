import { describe, expect, it } from 'vitest';
import { takeGcra } from './gcra.js';

function run(count: number, rate: number, now: number, start?: number) {
  let arrival = start;
  const decisions = [];
  for (let index = 0; index < count; index++) {
    const result = takeGcra(arrival, rate, now);
    arrival = result.theoreticalArrival;
    decisions.push(result.decision);
  }
  return { decisions, arrival };
}

describe('takeGcra', () => {
  it('allows a full minute of requests at once, then refuses', () => {
    const { decisions } = run(61, 60, 1_000_000);
    expect(decisions.slice(0, 60).every((decision) => decision.allowed)).toBe(true);
    expect(decisions[0]).toMatchObject({ limit: 60, remaining: 59, resetSeconds: 1 });
    expect(decisions[59]).toMatchObject({ remaining: 0, resetSeconds: 60 });
    expect(decisions[60]).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
  });

  it('refills continuously: one request back per interval', () => {
    const { arrival } = run(60, 60, 0);
    expect(takeGcra(arrival, 60, 500).decision.allowed).toBe(false);
    const later = takeGcra(arrival, 60, 1_000);
    expect(later.decision).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('a refused request takes nothing from the budget', () => {
    const { arrival } = run(60, 60, 0);
    const refused = takeGcra(arrival, 60, 0);
    expect(refused.theoreticalArrival).toBe(arrival);
  });

  it('reports a full budget for an idle key', () => {
    const { decision } = takeGcra(5_000, 600, 100_000);
    expect(decision).toMatchObject({ allowed: true, remaining: 599, resetSeconds: 0.1 });
  });

  it('retry-after counts whole seconds until one more request fits', () => {
    const { arrival } = run(2, 2, 0);
    expect(takeGcra(arrival, 2, 0).decision.retryAfterSeconds).toBe(30);
  });
});
