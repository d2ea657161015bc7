import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SsePings, type PingedStream } from './sse-pings.js';

/** A stream that counts its pings and writes (as the SSE writer does) when quiet for the interval. */
class QuietStream implements PingedStream {
  pings = 0;
  lastWriteAt = Date.now();

  pingIfQuiet(now: number, intervalMs: number): void {
    if (now - this.lastWriteAt < intervalMs) return;
    this.pings += 1;
    this.lastWriteAt = now;
  }
}

describe('SSE pings', () => {
  it('pings every quiet stream, and not one that keeps writing', async () => {
    const pings = new SsePings(150);
    const quiet = [new QuietStream(), new QuietStream()];
    const busy = new QuietStream();
    for (const stream of [...quiet, busy]) pings.add(stream);
    for (let step = 0; step < 10; step++) {
      await sleep(50);
      busy.lastWriteAt = Date.now();
    }
    for (const stream of [...quiet, busy]) pings.delete(stream);
    for (const stream of quiet) expect(stream.pings).toBeGreaterThanOrEqual(2);
    expect(busy.pings).toBe(0);
  });

  it('stops pinging a stream once it has left', async () => {
    const pings = new SsePings(60);
    const gone = new QuietStream();
    const staying = new QuietStream();
    pings.add(gone);
    pings.add(staying);
    pings.delete(gone);
    await sleep(300);
    pings.delete(staying);
    const after = staying.pings;
    await sleep(200);
    expect(gone.pings).toBe(0);
    expect(after).toBeGreaterThanOrEqual(2);
    expect(staying.pings).toBe(after);
  });

  it('keeps its timer a few ticks after the last stream has left, then stops it', async () => {
    const pings = new SsePings(60);
    const stream = new QuietStream();
    pings.add(stream);
    pings.delete(stream);
    // A stream coming right after finds the timer running.
    expect(pings.ticking).toBe(true);
    pings.add(stream);
    pings.delete(stream);
    // Ticks every 50 ms: three idle ones stop it (given four times as long).
    await sleep(600);
    expect(pings.ticking).toBe(false);
    expect(stream.pings).toBe(0);
  });
});
