/**
 * One end of a message link between two processes of `taskgate serve
 * --workers N`: a worker's IPC to its primary, or the primary's to one
 * worker. The parts that talk over it (the cluster rate limiter, metrics
 * aggregation, the model download state) see only this, so their tests link
 * two ends inside one process. It lives in its own folder, below both
 * `limits/cluster/` and `cluster/`, so the rate limiter never imports the
 * worker fleet.
 *
 * Messages are plain objects (the IPC uses structured clone); every part
 * marks its own with a `type` prefix and ignores the others'.
 */
import type { Worker } from 'node:cluster';

export interface MessageChannel {
  /** Sends a message; false when the link is closed, so the caller can fall back at once instead of waiting for an answer. */
  send(message: object): boolean;
  /** Calls `listener` with every message that arrives from the other end; returns the function that stops it. */
  subscribe(listener: (message: unknown) => void): () => void;
}

/** A cluster worker's link to its primary. */
export function channelToPrimary(): MessageChannel {
  return {
    send(message) {
      if (process.send === undefined || !process.connected) return false;
      // With a callback a send on a channel closing meanwhile reports to it, instead of an 'error' event that would crash the worker.
      process.send(message, undefined, {}, () => undefined);
      return true;
    },
    subscribe(listener) {
      process.on('message', listener);
      return () => void process.off('message', listener);
    },
  };
}

/** The primary's link to one worker. */
export function channelToWorker(worker: Worker): MessageChannel {
  return {
    send(message) {
      if (!worker.isConnected()) return false;
      worker.send(message, undefined, {}, () => undefined);
      return true;
    },
    subscribe(listener) {
      worker.on('message', listener);
      return () => void worker.off('message', listener);
    },
  };
}
