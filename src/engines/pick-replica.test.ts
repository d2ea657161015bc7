import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from './circuit-breaker.js';
import { pickReplica } from './pick-replica.js';

describe('pickReplica', () => {
  const open = new CircuitBreaker({ failureThreshold: 1 });
  open.onFailure('call', 0);
  const closed = new CircuitBreaker();

  it('picks the fewest in flight among replicas whose circuit allows a call', () => {
    expect(
      pickReplica(
        [
          { inFlight: 2, circuit: closed },
          { inFlight: 1, circuit: closed },
          { inFlight: 0, circuit: open },
        ],
        0,
      ),
    ).toBe(1);
  });

  it('breaks ties by scanning from startAt (round robin) and skips the excluded replica', () => {
    const idle = [
      { inFlight: 0, circuit: closed },
      { inFlight: 0, circuit: closed },
      { inFlight: 0, circuit: closed },
    ];
    expect([0, 1, 2, 3].map((startAt) => pickReplica(idle, 0, startAt))).toEqual([0, 1, 2, 0]);
    expect(pickReplica(idle, 0, 1, 1)).toBe(2);
  });

  it('returns -1 when no circuit allows a call, and readmits after the cooldown', () => {
    expect(pickReplica([{ inFlight: 0, circuit: open }], 0)).toBe(-1);
    expect(pickReplica([{ inFlight: 0, circuit: open }], 5_000)).toBe(0);
    expect(pickReplica([], 0)).toBe(-1);
  });
});
