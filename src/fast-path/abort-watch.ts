/**
 * Listening to a call's abort signal through a watch list. A call's engine
 * request, its replica slot and its place in an engine's queue each listen
 * for the client going away, and on Node 20 an `addEventListener` +
 * `removeEventListener` pair on an AbortSignal is dear (EventTarget validates
 * its options, keeps a map of listener lists, and its property loads are
 * megamorphic). Measured: docs/benchmarks.md.
 *
 * A signal made for many calls (one per client connection,
 * `connection-signals.ts`) gets a watch list with `listOnAbort`: one real
 * listener for the signal's life, and a plain array its calls join and
 * leave. Any other signal is listened to as before, so one made for a single
 * request (a timeout, `AbortSignal.any`) never keeps a listener it no longer
 * needs.
 *
 * Invariant: a watcher is called exactly when, and in the order, it would be
 * as the signal's own `abort` listener (`{ once: true }`, removed by
 * `stopWatching`); `abort-watch.test.ts` holds the two to that.
 */

/** What listens: called once, when the signal aborts while it is watching. */
export interface AbortWatcher {
  handleEvent(): void;
}

/** The watchers of a listed signal, and the one listener that calls them. */
class WatchList {
  readonly watchers: AbortWatcher[] = [];

  handleEvent(): void {
    // A copy: a watcher leaves (and may make another leave) while they are called.
    for (const watcher of [...this.watchers]) if (this.watchers.includes(watcher)) watcher.handleEvent();
    this.watchers.length = 0;
  }
}

/** Which signals have a watch list: a side table, so it goes with the signal. */
const lists = new WeakMap<AbortSignal, WatchList>();

/** Gives `signal` a watch list; for signals that many calls watch, one after the other. */
export function listOnAbort(signal: AbortSignal): void {
  if (lists.has(signal)) return;
  const list = new WatchList();
  lists.set(signal, list);
  signal.addEventListener('abort', list, { once: true });
}

/** `watcher.handleEvent()` once `signal` aborts, unless `stopWatching` comes first. Nothing happens for a signal already aborted. */
export function watchAbort(signal: AbortSignal, watcher: AbortWatcher): void {
  const list = lists.get(signal);
  if (list === undefined) signal.addEventListener('abort', watcher, { once: true });
  else if (!signal.aborted) list.watchers.push(watcher);
}

export function stopWatching(signal: AbortSignal, watcher: AbortWatcher): void {
  const list = lists.get(signal);
  if (list === undefined) {
    signal.removeEventListener('abort', watcher);
    return;
  }
  const at = list.watchers.lastIndexOf(watcher);
  if (at !== -1) list.watchers.splice(at, 1);
}
