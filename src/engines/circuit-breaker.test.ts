import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from './circuit-breaker.js';

function failTimes(circuit: CircuitBreaker, times: number, now: number): void {
  for (let index = 0; index < times; index++) circuit.onFailure(circuit.tryAcquire(now) ?? 'call', now);
}

describe('CircuitBreaker', () => {
  it('stays closed below the threshold and a success resets the count', () => {
    const circuit = new CircuitBreaker();
    failTimes(circuit, 2, 0);
    circuit.onSuccess('call');
    failTimes(circuit, 2, 0);
    expect(circuit.state(0)).toBe('closed');
    expect(circuit.tryAcquire(0)).toBe('call');
  });

  it('opens after 3 consecutive failures and refuses calls during the cooldown', () => {
    const circuit = new CircuitBreaker();
    failTimes(circuit, 2, 1_000);
    expect(circuit.onFailure('call', 1_000)).toBe(true);
    expect(circuit.state(1_000)).toBe('open');
    expect(circuit.allowsCall(5_999)).toBe(false);
    expect(circuit.tryAcquire(5_999)).toBeNull();
    expect(circuit.reopensAt(1_000)).toBe(6_000);
  });

  it('admits exactly one trial once the 5 s cooldown has passed', () => {
    const circuit = new CircuitBreaker();
    failTimes(circuit, 3, 0);
    expect(circuit.state(5_000)).toBe('half-open');
    expect(circuit.tryAcquire(5_000)).toBe('trial');
    expect(circuit.allowsCall(5_000)).toBe(false);
    expect(circuit.tryAcquire(5_001)).toBeNull();
  });

  it('closes when the trial succeeds', () => {
    const circuit = new CircuitBreaker();
    failTimes(circuit, 3, 0);
    circuit.onSuccess(circuit.tryAcquire(5_000)!);
    expect(circuit.state(5_000)).toBe('closed');
    expect(circuit.tryAcquire(5_000)).toBe('call');
  });

  it('reopens with a doubled cooldown when the trial fails, up to 60 s', () => {
    const circuit = new CircuitBreaker();
    failTimes(circuit, 3, 0);
    let now = 0;
    const cooldowns: number[] = [];
    for (let trip = 0; trip < 6; trip++) {
      now = circuit.reopensAt(now);
      const permit = circuit.tryAcquire(now);
      expect(permit).toBe('trial');
      expect(circuit.onFailure(permit!, now)).toBe(true);
      cooldowns.push(circuit.reopensAt(now) - now);
    }
    expect(cooldowns).toEqual([10_000, 20_000, 40_000, 60_000, 60_000, 60_000]);
  });

  it('resets the cooldown to its base after a successful trial', () => {
    const circuit = new CircuitBreaker();
    failTimes(circuit, 3, 0);
    circuit.onFailure(circuit.tryAcquire(5_000)!, 5_000); // cooldown now 10 s
    circuit.onSuccess(circuit.tryAcquire(15_000)!);
    failTimes(circuit, 3, 20_000);
    expect(circuit.reopensAt(20_000)).toBe(25_000);
  });

  it('frees the trial slot when the trial ends without a verdict', () => {
    const circuit = new CircuitBreaker();
    failTimes(circuit, 3, 0);
    circuit.onRelease(circuit.tryAcquire(5_000)!);
    expect(circuit.state(5_000)).toBe('half-open');
    expect(circuit.tryAcquire(5_000)).toBe('trial');
  });

  it('ignores verdicts of ordinary calls admitted before the circuit opened', () => {
    const circuit = new CircuitBreaker();
    const lateCall = circuit.tryAcquire(0)!;
    failTimes(circuit, 3, 0);
    circuit.onSuccess(lateCall);
    expect(circuit.state(1)).toBe('open');
    const trial = circuit.tryAcquire(5_000)!;
    expect(circuit.onFailure(lateCall, 5_000)).toBe(false);
    circuit.onSuccess(trial);
    expect(circuit.state(5_000)).toBe('closed');
  });

  it('honours custom options', () => {
    const circuit = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 100, maxCooldownMs: 150 });
    expect(circuit.onFailure('call', 0)).toBe(true);
    expect(circuit.reopensAt(0)).toBe(100);
    circuit.onFailure(circuit.tryAcquire(100)!, 100);
    expect(circuit.reopensAt(100)).toBe(250);
  });
});
