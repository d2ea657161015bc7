import { once } from 'node:events';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createConnectionSignals } from './connection-signals.js';

describe('connection signals', () => {
  it("gives a connection's calls one signal, aborted when the connection closes and not before", async () => {
    const signals = createConnectionSignals();
    const first = new Socket();
    const second = new Socket();
    const signal = signals.of(first);
    expect(signals.of(first)).toBe(signal);
    expect(signals.of(second)).not.toBe(signal);
    expect(signal.aborted).toBe(false);
    first.destroy();
    await once(first, 'close');
    expect(signal.aborted).toBe(true);
    expect(signals.of(second).aborted).toBe(false);
  });

  it('gives a connection already closed an aborted signal', async () => {
    const socket = new Socket();
    socket.destroy();
    expect(createConnectionSignals().of(socket).aborted).toBe(true);
  });
});
