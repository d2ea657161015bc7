import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClientAbortError, EngineOverloadedError } from '../api/errors.js';
import { ConcurrencyGate } from './concurrency-gate.js';

const live = (): AbortSignal => new AbortController().signal;
const gateOf = (maxConcurrent = 1, maxQueue = 2, queueTimeoutMs = 1_000) =>
  new ConcurrencyGate({ name: 'gpu-a', maxConcurrent, maxQueue, queueTimeoutMs });

afterEach(() => {
  vi.useRealTimers();
});

describe('ConcurrencyGate', () => {
  it('lets calls in at once while slots are free, with no promise', () => {
    const gate = gateOf(2);
    expect(gate.enter(live())).toBe(true);
    expect(gate.enter(live())).toBe(true);
    expect(gate.inFlight).toBe(2);
  });

  it('hands a freed slot to the oldest waiter, first come first served', async () => {
    const gate = gateOf(1);
    gate.enter(live());
    const order: string[] = [];
    const first = (gate.enter(live()) as Promise<void>).then(() => order.push('first'));
    const second = (gate.enter(live()) as Promise<void>).then(() => order.push('second'));
    expect(gate.queued).toBe(2);
    gate.leave();
    await first;
    gate.leave();
    await second;
    expect(order).toEqual(['first', 'second']);
    expect(gate.inFlight).toBe(1);
    gate.leave();
    expect(gate.inFlight).toBe(0);
  });

  it('refuses at once past max_queue with 503 engine_overloaded and retry-after, resendable elsewhere', async () => {
    const gate = gateOf(1, 1);
    gate.enter(live());
    void gate.enter(live());
    const refused = await (gate.enter(live()) as Promise<void>).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EngineOverloadedError);
    expect(refused).toMatchObject({ status: 503, code: 'engine_overloaded', resendable: true, headers: { 'retry-after': '1' } });
    expect((refused as Error).message).toContain('gpu-a');
  });

  it('a waiter gives up after queue_timeout_ms with the same 503, and its place goes', async () => {
    vi.useFakeTimers();
    const gate = gateOf(1, 4, 500);
    gate.enter(live());
    const waiting = (gate.enter(live()) as Promise<void>).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(499);
    expect(gate.queued).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toMatchObject({ code: 'engine_overloaded' });
    expect(gate.queued).toBe(0);
    gate.leave();
    expect(gate.inFlight).toBe(0);
  });

  it('a waiter whose signal aborts leaves the queue at once', async () => {
    const gate = gateOf(1);
    gate.enter(live());
    const controller = new AbortController();
    const waiting = (gate.enter(controller.signal) as Promise<void>).catch((error: unknown) => error);
    controller.abort();
    expect(await waiting).toBeInstanceOf(ClientAbortError);
    expect(gate.queued).toBe(0);
    gate.leave();
    expect(gate.inFlight).toBe(0);
  });
});
