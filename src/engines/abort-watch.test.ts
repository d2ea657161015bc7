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
    watchAbort(controller.signal, watcher(calls, 'first', () => stopWatching(controller.signal, second)));
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
