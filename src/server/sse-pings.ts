/**
 * Keeps quiet streams alive: a `: ping` comment to every open stream that has
 * written nothing for the ping interval, so no proxy or client closes it
 * while a slow engine thinks. One timer serves every open stream of the
 * handler instead of a `setInterval` and a `clearInterval` for each stream;
 * a quiet stream is pinged between one and one and a third intervals after
 * its last write. The timer starts with the first stream and stops a few
 * ticks after the last has left: short streams at a steady rate leave the
 * set empty between them, and the timer is not started and cleared for
 * each (not measured yet: docs/benchmarks.md).
 */

/** An open stream, asked at every tick whether it has been quiet too long. */
export interface PingedStream {
  pingIfQuiet(now: number, intervalMs: number): void;
}

/** Ticks with no stream before the timer stops. */
const IDLE_TICKS_BEFORE_STOP = 3;

export class SsePings {
  private readonly streams = new Set<PingedStream>();
  private timer: NodeJS.Timeout | null = null;
  private idleTicks = 0;

  constructor(private readonly intervalMs: number) {}

  add(stream: PingedStream): void {
    this.streams.add(stream);
    this.idleTicks = 0;
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.tick(), Math.max(50, Math.floor(this.intervalMs / 3)));
    this.timer.unref();
  }

  delete(stream: PingedStream): void {
    this.streams.delete(stream);
  }

  /** Whether the timer runs (it outlives the last stream by a few ticks). */
  get ticking(): boolean {
    return this.timer !== null;
  }

  private tick(): void {
    if (this.streams.size === 0) {
      if (++this.idleTicks < IDLE_TICKS_BEFORE_STOP) return;
      clearInterval(this.timer ?? undefined);
      this.timer = null;
      return;
    }
    const now = Date.now();
    for (const stream of this.streams) stream.pingIfQuiet(now, this.intervalMs);
  }
}
