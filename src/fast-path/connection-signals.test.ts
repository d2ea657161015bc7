import fc from 'fast-check';
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

/** The plain version: a signal for one call, aborted when its socket closes (at once if it has). */
function callSignal(socket: Socket): AbortSignal {
  const controller = new AbortController();
  if (socket.destroyed) controller.abort();
  else socket.once('close', () => controller.abort());
  return controller.signal;
}

describe('connection signals against a signal per call (differential)', () => {
  it('are aborted for every call exactly when a per-call signal would be, over generated calls and closes on a few connections', async () => {
    const step = fc.oneof(fc.record({ call: fc.nat(2) }), fc.record({ close: fc.nat(2) }));
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 12 }), async (steps) => {
        const signals = createConnectionSignals();
        const sockets = [new Socket(), new Socket(), new Socket()];
        const calls: Array<{ shared: AbortSignal; own: AbortSignal }> = [];
        const compare = () => expect(calls.map((call) => call.shared.aborted)).toEqual(calls.map((call) => call.own.aborted));
        for (const next of steps) {
          if ('call' in next) {
            const socket = sockets[next.call] as Socket;
            calls.push({ shared: signals.of(socket), own: callSignal(socket) });
          } else {
            const socket = sockets[next.close] as Socket;
            if (!socket.destroyed) {
              socket.destroy();
              compare();
              await once(socket, 'close');
            }
          }
          compare();
        }
        for (const socket of sockets) socket.destroy();
      }),
      { numRuns: 200 },
    );
  });
});
