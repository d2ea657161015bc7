/**
 * A circuit breaker for one replica, as a pure state machine: the caller
 * passes the time in, nothing here starts a timer, so every transition is
 * tested with plain numbers.
 *
 *   closed ──N consecutive failures──▶ open ──cooldown elapsed──▶ half-open
 *     ▲                                 ▲                            │
 *     └──────── trial succeeds ─────────┼──────── trial fails ───────┘
 *
 * Half-open lets exactly one trial call through. Each trial that fails doubles
 * the cooldown (up to `maxCooldownMs`), so a replica that stays down is probed
 * less and less often; a trial that succeeds closes the circuit and resets the
 * cooldown to its base.
 *
 * Calls are tagged with the permit they were admitted under. Only a `trial`
 * decides a half-open circuit: a `call` admitted while the circuit was still
 * closed that ends after it opened says nothing about the replica now, so its
 * verdict is ignored.
 */

export type CircuitState = 'closed' | 'open' | 'half-open';

/** How a call was admitted: an ordinary call, or the one trial of a half-open circuit. */
export type CircuitPermit = 'call' | 'trial';

export interface CircuitBreakerOptions {
  /** Consecutive failures that open a closed circuit. Default 3. */
  failureThreshold?: number;
  /** Time an opened circuit stays open before a trial. Default 5 s. */
  cooldownMs?: number;
  /** The cooldown doubles on every failed trial, up to this. Default 60 s. */
  maxCooldownMs?: number;
}

export class CircuitBreaker {
  private readonly failureThreshold: number;
  private readonly baseCooldownMs: number;
  private readonly maxCooldownMs: number;

  /** `half-open` is entered lazily, when a permit is asked for after the cooldown. */
  private stored: CircuitState = 'closed';
  private consecutiveFailures = 0;
  private openedAt = 0;
  private cooldownMs: number;
  private trialInFlight = false;

  constructor(options: CircuitBreakerOptions = {}) {
    this.failureThreshold = Math.max(1, options.failureThreshold ?? 3);
    this.baseCooldownMs = Math.max(0, options.cooldownMs ?? 5_000);
    this.maxCooldownMs = Math.max(this.baseCooldownMs, options.maxCooldownMs ?? 60_000);
    this.cooldownMs = this.baseCooldownMs;
  }

  /** The state at `now`, without changing anything. */
  state(now: number): CircuitState {
    if (this.stored === 'open' && now >= this.openedAt + this.cooldownMs) return 'half-open';
    return this.stored;
  }

  /** Whether `tryAcquire(now)` would admit a call; changes nothing. */
  allowsCall(now: number): boolean {
    const state = this.state(now);
    return state === 'closed' || (state === 'half-open' && !this.trialInFlight);
  }

  /** When an open circuit will next admit a trial (0 when it admits calls now). */
  reopensAt(now: number): number {
    return this.allowsCall(now) ? 0 : this.stored === 'open' ? this.openedAt + this.cooldownMs : now;
  }

  /** Admits a call and says under which permit, or returns null when the circuit refuses it. */
  tryAcquire(now: number): CircuitPermit | null {
    if (this.stored === 'closed') return 'call';
    if (this.state(now) !== 'half-open' || this.trialInFlight) return null;
    this.stored = 'half-open';
    this.trialInFlight = true;
    return 'trial';
  }

  onSuccess(permit: CircuitPermit): void {
    if (permit === 'trial') {
      this.trialInFlight = false;
      this.stored = 'closed';
      this.cooldownMs = this.baseCooldownMs;
      this.consecutiveFailures = 0;
    } else if (this.stored === 'closed') {
      this.consecutiveFailures = 0;
    }
  }

  /** Returns true when this failure opened the circuit. */
  onFailure(permit: CircuitPermit, now: number): boolean {
    if (permit === 'trial') {
      this.trialInFlight = false;
      this.cooldownMs = Math.min(this.cooldownMs * 2, this.maxCooldownMs);
      this.open(now);
      return true;
    }
    if (this.stored !== 'closed') return false;
    this.consecutiveFailures += 1;
    if (this.consecutiveFailures < this.failureThreshold) return false;
    this.open(now);
    return true;
  }

  /**
   * The call ended without a verdict (the client went away): a trial's slot is
   * freed so the next call can try, an ordinary call changes nothing.
   */
  onRelease(permit: CircuitPermit): void {
    if (permit === 'trial') this.trialInFlight = false;
  }

  private open(now: number): void {
    this.stored = 'open';
    this.openedAt = now;
    this.consecutiveFailures = 0;
  }
}
