/**
 * Leases: at most one holder of a named role at a time across every process
 * on one store, such as the router leader. A holder renews its lease well
 * before it runs out; a holder that dies (kill -9, a lost machine) loses it
 * when it expires, and another process takes it over.
 *
 * Expiry is judged by the store's clock (PostgreSQL's `now()`), never by the
 * callers', so machines whose clocks disagree still agree on who holds it.
 */
export interface Lease {
  name: string;
  holder: string;
  /** Store clock, epoch ms. */
  expiresAt: number;
}

export interface LeaseStore {
  /**
   * Takes the lease `name` for `holder` until `ttlMs` from now when it is
   * free, expired, or already `holder`'s (a renewal). True when `holder`
   * holds it after the call. Safe under concurrent callers: two processes
   * asking at once never both get true.
   */
  acquire(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` holds it, so a clean shutdown hands it over at once. */
  release(name: string, holder: string): Promise<void>;
  /** The lease as it stands, or null when nobody holds it (never taken, released, or expired). */
  current(name: string): Promise<Lease | null>;
}
