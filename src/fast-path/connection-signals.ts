/**
 * The abort signal of a call: one per client connection, aborted when the
 * connection closes. Everything a call starts on its engine listens to it,
 * so a client that goes away cancels its generation upstream at once.
 *
 * Why per connection and not one AbortController per call: making an
 * AbortSignal, and the listeners on it, are dear on Node 20 (measured:
 * docs/benchmarks.md). A keep-alive client makes its calls one after the
 * other on one connection, so the connection's signal stands for whichever
 * call is in flight, and it is made once. Its calls watch it through a watch
 * list (`listOnAbort`), not a listener each; a call that ends leaves none
 * behind (the engine request and the pool's slot stop watching), and a
 * closed connection takes no more calls.
 *
 * Invariant: for a call, the signal is aborted exactly when a signal made for
 * that call alone and aborted on the socket's `close` would be
 * (`connection-signals.test.ts`).
 */
import { setMaxListeners } from 'node:events';
import type { Socket } from 'node:net';
import { listOnAbort } from './abort-watch.js';

export interface ConnectionSignals {
  /** The signal of `socket`'s calls: aborted once the socket has closed. */
  of(socket: Socket): AbortSignal;
}

export function createConnectionSignals(): ConnectionSignals {
  const controllers = new WeakMap<Socket, AbortController>();
  return {
    of(socket) {
      let controller = controllers.get(socket);
      if (controller === undefined) {
        const created = new AbortController();
        // A client that pipelines has several calls in flight on one connection, each with a few listeners.
        setMaxListeners(64, created.signal);
        listOnAbort(created.signal);
        controllers.set(socket, created);
        if (socket.destroyed) created.abort();
        else socket.once('close', () => created.abort());
        controller = created;
      }
      return controller.signal;
    },
  };
}
