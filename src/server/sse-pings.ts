/**
 * Keeps quiet streams alive: a `: ping` comment to every open stream that has
 * written nothing for the ping interval, so no proxy or client closes it
 * while a slow engine thinks. One timer serves every open stream of the
 * handler (started with the first, stopped with the last) instead of a
 * `setInterval` and a `clearInterval` for each stream; a quiet stream is
 * pinged between one and one and a third intervals after its last write.
 */

/** An open stream, asked at every tick whether it has been quiet too long. */
export interface PingedStream {
  pingIfQuiet(now: number, intervalMs: number): void;
}

export class SsePings {
  private readonly streams = new Set<PingedStream>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly intervalMs: number) {}

  add(stream: PingedStream): void {
    this.streams.add(stream);
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.tick(), Math.max(50, Math.floor(this.intervalMs / 3)));
    this.timer.unref();
  }

  delete(stream: PingedStream): void {
    if (!this.streams.delete(stream) || this.streams.size > 0 || this.timer === null) return;
    clearInterval(this.timer);
    this.timer = null;
  }

  private tick(): void {
    const now = Date.now();
    for (const stream of this.streams) stream.pingIfQuiet(now, this.intervalMs);
  }
}
