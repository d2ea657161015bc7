import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { listOnAbort, stopWatching, watchAbort, type AbortWatcher } from './abort-watch.js';

function watcher(calls: string[], name: string, then?: () => void): AbortWatcher {
  return {
    handleEvent() {
      calls.push(name);
      then?.();
    },
  };
}

describe.each([
  ['a listed signal (one per connection)', true],
  ['any other signal', false],
])('watching %s', (_name, listed) => {
  function newController(): AbortController {
    const controller = new AbortController();
    if (listed) listOnAbort(controller.signal);
    return controller;
  }

  it('calls each watcher once, in order, when the signal aborts', () => {
    const controller = newController();
    const calls: string[] = [];
    watchAbort(controller.signal, watcher(calls, 'first'));
    watchAbort(controller.signal, watcher(calls, 'second'));
    controller.abort();
    controller.abort();
    expect(calls).toEqual(['first', 'second']);
  });

  it('does not call a watcher that stopped, nor one that started after the abort', () => {
    const controller = newController();
    const calls: string[] = [];
    const stopped = watcher(calls, 'stopped');
    watchAbort(controller.signal, stopped);
    watchAbort(controller.signal, watcher(calls, 'kept'));
    stopWatching(controller.signal, stopped);
    controller.abort();
    watchAbort(controller.signal, watcher(calls, 'late'));
    expect(calls).toEqual(['kept']);
  });

  it('lets a watcher stop another one while they are being called', () => {
    const controller = newController();
    const calls: string[] = [];
    const second = watcher(calls, 'second');
    watchAbort(
      controller.signal,
      watcher(calls, 'first', () => stopWatching(controller.signal, second)),
    );
    watchAbort(controller.signal, second);
    controller.abort();
    expect(calls).toEqual(['first']);
  });

  it('serves call after call on one signal, each watcher leaving when its call ends', () => {
    const controller = newController();
    const calls: string[] = [];
    for (let call = 0; call < 1_000; call++) {
      const done = watcher(calls, `call ${call}`);
      watchAbort(controller.signal, done);
      stopWatching(controller.signal, done);
    }
    watchAbort(controller.signal, watcher(calls, 'in flight'));
    controller.abort();
    expect(calls).toEqual(['in flight']);
  });
});

/** One step of a call's life on a signal: a watcher starts or stops watching, or the signal aborts. */
type Step = { kind: 'watch' | 'stop'; watcher: number } | { kind: 'abort' };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('watch' as const), watcher: fc.nat(7) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('stop' as const), watcher: fc.nat(7) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('abort' as const) }) },
);

/**
 * The calls made when `steps` run on one signal, each watcher watching at
 * most once at a time (as a call's parts do); watcher `i`, when called, stops
 * watcher `stops[i]` (or none). `listen` and `leave` are the two ways under test.
 */
function callsOf(steps: Step[], stops: (number | null)[], listed: boolean): string[] {
  const controller = new AbortController();
  if (listed) listOnAbort(controller.signal);
  const listen = listed
    ? watchAbort
    : (signal: AbortSignal, watcher: AbortWatcher) => signal.addEventListener('abort', watcher, { once: true });
  const leave = listed ? stopWatching : (signal: AbortSignal, watcher: AbortWatcher) => signal.removeEventListener('abort', watcher);
  const calls: string[] = [];
  const watchers: AbortWatcher[] = [];
  for (let index = 0; index < 8; index++) {
    watchers.push(
      watcher(calls, `watcher ${index}`, () => {
        const stopped = stops[index];
        if (stopped != null) leave(controller.signal, watchers[stopped] as AbortWatcher);
      }),
    );
  }
  const watching = new Set<number>();
  for (const step of steps) {
    if (step.kind === 'abort') {
      controller.abort();
      watching.clear();
    } else if (step.kind === 'watch') {
      if (watching.has(step.watcher)) continue;
      watching.add(step.watcher);
      listen(controller.signal, watchers[step.watcher] as AbortWatcher);
    } else {
      watching.delete(step.watcher);
      leave(controller.signal, watchers[step.watcher] as AbortWatcher);
    }
  }
  return calls;
}

describe('a watch list against the plain listener (differential)', () => {
  it('calls the same watchers in the same order as addEventListener / removeEventListener would, over generated call sequences', () => {
    fc.assert(
      fc.property(
        fc.array(stepArbitrary, { maxLength: 40 }),
        fc.array(fc.option(fc.nat(7), { nil: null }), { minLength: 8, maxLength: 8 }),
        (steps, stops) => {
          expect(callsOf(steps, stops, true)).toEqual(callsOf(steps, stops, false));
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
