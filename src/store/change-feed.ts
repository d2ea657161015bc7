/**
 * The change feed: how a change made through one process reaches every
 * process on the same store within a second, so caches never serve stale
 * routes, pins, contracts, revoked keys, retention, budget or cache settings.
 *
 * A change says what changed, not the new value: a listener re-reads what it
 * caches from the store. Delivery is best effort and at most once (a process
 * that was disconnected misses what happened meanwhile), so each cache also
 * re-reads on a slow timer as a safety net. Every process receives the
 * changes it published itself too.
 *
 * PostgreSQL carries changes with LISTEN/NOTIFY; SQLite (one machine, maybe
 * several processes on one file) with a small table polled every 200 ms.
 */
import type { Scope } from '../api/scope.js';

export type Change =
  /** A route of the workload (served model, pin, certificate) was written. */
  | { kind: 'route'; scope: Scope; requestedModel: string }
  /** A new eval contract version was stored. */
  | { kind: 'contract'; scope: Scope }
  /** Keys were revoked: re-read the revocations. */
  | { kind: 'keys' }
  /** A project's retention policy was written. */
  | { kind: 'retention'; accountId: string; project: string }
  /** A project's (workload '') or workload's budget was written, in either environment. */
  | { kind: 'budget'; scope: Scope }
  /** A project's (workload '') or workload's cache settings were written. */
  | { kind: 'cache_settings'; scope: Scope }
  /** The router leader wrote routes' state (sampling rates, activity), or handed over samples to take. */
  | { kind: 'router_state' }
  | { kind: 'router_samples' }
  /**
   * Never published: a feed says this to its own listeners when it hears
   * changes again after a disconnection, in which it may have missed some.
   * Re-read everything cached.
   */
  | { kind: 'missed' };

export interface ChangeFeed {
  /** Sends `change` to every subscribed process, this one included. Resolves once it is sent. */
  publish(change: Change): Promise<void>;
  /**
   * Calls `listener` with every change published after this call, by any
   * process. Returns the function that stops it. A listener that throws is
   * logged by the caller's wrapper, never by the feed.
   */
  subscribe(listener: (change: Change) => void): () => void;
}
