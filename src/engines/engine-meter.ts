/**
 * How busy one engine is, and each call's share of that busy time: what
 * measured cost is made of (docs/measured-cost.md).
 *
 * The meter keeps the engine's calls in flight (callers' calls and the
 * router's replays, over every model the engine serves) and two running
 * integrals over time: in-flight × time (`area`) and time with anything in
 * flight (`busy`). A call's share of the engine is its duration divided by the
 * average number of calls in flight while it ran:
 *
 *     share = duration / ((area at end - area at start) / duration)
 *
 * The average includes the call itself, so a call alone gets its whole
 * duration and n calls that overlap exactly get 1/n of it each; the shares of
 * all calls add up to the engine's busy time. Its idle time is charged to no
 * call. The state of a call is two numbers its caller keeps (`since`, `area`):
 * metering allocates nothing.
 *
 * Utilisation, for the dashboard, is the busy fraction averaged over the last
 * minutes: an exponentially weighted average of "anything in flight" with a
 * time constant of `UTILISATION_WINDOW_MS`, exact for a signal that only
 * changes when a call starts or ends.
 */
import { performance } from 'node:perf_hooks';

/** The time constant of the utilisation average: about the last five minutes. */
export const UTILISATION_WINDOW_MS = 5 * 60_000;

/** An engine's load as the dashboard shows it. */
export interface EngineLoad {
  engineId: string;
  costPerHour: number | null;
  inFlight: number;
  /** Busy fraction over about the last five minutes, 0..1. */
  utilisation: number;
  /** Seconds with at least one call in flight since the meter started. */
  busySeconds: number;
}

export interface EngineMeterOptions {
  engineId: string;
  /** What the engine's machine costs, USD per hour (`engines[].cost_per_hour`); null when not configured. */
  costPerHour: number | null;
  /** Milliseconds on a monotonic clock; tests drive it. */
  now?: () => number;
}

/** Where a call started: its clock and the meter's area then. */
export interface MeterMark {
  since: number;
  area: number;
}

export class EngineMeter {
  readonly engineId: string;
  readonly costPerHour: number | null;
  private readonly now: () => number;
  private inFlight = 0;
  /** ∫ in-flight dt, in call-milliseconds. */
  private area = 0;
  /** ∫ [in-flight > 0] dt, in milliseconds. */
  private busyMs = 0;
  /** The busy fraction's exponentially weighted average. */
  private busyAverage = 0;
  private changedAt: number;

  constructor(options: EngineMeterOptions) {
    this.engineId = options.engineId;
    this.costPerHour = options.costPerHour;
    this.now = options.now ?? (() => performance.now());
    this.changedAt = this.now();
  }

  /** A call starts on the engine: writes where into `mark` (the caller's own object, reused). */
  start(mark: MeterMark): void {
    const now = this.advance();
    this.inFlight += 1;
    mark.since = now;
    mark.area = this.area;
  }

  /** The call that started at `mark` ends: its share of the engine, in seconds. */
  end(mark: MeterMark): number {
    const now = this.advance();
    this.inFlight = Math.max(0, this.inFlight - 1);
    const durationMs = now - mark.since;
    const areaMs = this.area - mark.area;
    return durationMs <= 0 || areaMs <= 0 ? 0 : (durationMs * durationMs) / areaMs / 1000;
  }

  /** USD for `seconds` of this engine; null without a `cost_per_hour`. */
  costOf(seconds: number): number | null {
    return this.costPerHour === null ? null : (seconds * this.costPerHour) / 3600;
  }

  load(): EngineLoad {
    this.advance();
    return {
      engineId: this.engineId,
      costPerHour: this.costPerHour,
      inFlight: this.inFlight,
      utilisation: this.busyAverage,
      busySeconds: this.busyMs / 1000,
    };
  }

  private advance(): number {
    const now = this.now();
    const elapsed = now - this.changedAt;
    if (elapsed > 0) {
      this.area += this.inFlight * elapsed;
      const busy = this.inFlight > 0 ? 1 : 0;
      this.busyMs += busy * elapsed;
      this.busyAverage = busy + (this.busyAverage - busy) * Math.exp(-elapsed / UTILISATION_WINDOW_MS);
      this.changedAt = now;
    }
    return now;
  }
}
