/**
 * The slow-connection guard. A connection is slow once it has waited over a
 * second for its client to deliver a whole request: from connect until the
 * first request's head and body are in, and again while each later request's
 * body arrives. An idle keep-alive connection has delivered and is not
 * waiting; a burst of new connections is not slow; a client trickling headers
 * or a body, or holding a connection open without a request, is.
 *
 * No connection is ever refused, for slowness or anything else: a new one has
 * not been slow yet. When an address holds more than `perAddress` slow
 * connections, or the server more than `total`, the oldest slow ones are shed
 * (`whichToShed`): answered 408 when no request is under way on them, else
 * cut. Slow connections then cost a bounded number of sockets, and a prompt
 * client sharing an address with a slow one, as every client behind a proxy
 * does, is served all the same.
 *
 * Only the client's delay counts against it:
 * - a request is delivered once the parser has all of it (`complete`),
 *   whether or not its handler has read it yet;
 * - while a request holds body bytes its handler has not read, backpressure
 *   may have stopped reading the socket: that wait is ours, so its clock
 *   starts again;
 * - a late sweep means the loop was busy, not the client: the lateness goes
 *   into `lagMs`, and what accrued while a connection waited comes off its
 *   wait. Sweeps run in the loop's timers phase, before the poll phase that
 *   reads what arrived while the loop was busy, so without this one blocked
 *   second would make every waiting connection slow at once. The lateness is
 *   taken off whole, even for a connection that began waiting during it,
 *   which errs for the client.
 *
 * One timer sweeps the waiting connections 4 times a second (a connection is
 * seen slow between 1 and 1.25 s of waiting, plus lag), rather than a timer
 * set and cleared for every request: most bodies are in a few microseconds
 * after their head, and a timer each is dear on the way to a stream's first
 * byte (not measured yet: docs/benchmarks.md). The per-request work is a map
 * lookup and an update.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { SlowConnectionShedError } from '../api/errors.js';
import { bodyStillArriving } from './read-body.js';

export interface SlowCaps {
  /** Slow connections one address may hold before its oldest are shed; 0 for no cap. */
  perAddress: number;
  /** Slow connections all addresses together may hold before the oldest are shed; 0 for no cap. */
  total: number;
}

export interface SlowConnection<Key> {
  key: Key;
  address: string;
  /** When it began to wait, on any one clock: smaller is older. */
  since: number;
}

export interface ShedConnection<Key> {
  connection: SlowConnection<Key>;
  /** The cap it was shed for. */
  cap: 'address' | 'total';
}

/**
 * Which slow connections to close so that no address holds more than
 * `caps.perAddress` and all together no more than `caps.total`: the oldest
 * first, an address's own oldest for its cap, then the oldest of the rest for
 * the total. Equal ages keep the order given.
 */
export function whichToShed<Key>(slow: readonly SlowConnection<Key>[], caps: SlowCaps): ShedConnection<Key>[] {
  const heldBy = new Map<string, number>();
  let over = caps.total > 0 && slow.length > caps.total;
  if (caps.perAddress > 0) {
    for (const connection of slow) {
      const held = (heldBy.get(connection.address) ?? 0) + 1;
      heldBy.set(connection.address, held);
      if (held > caps.perAddress) over = true;
    }
  }
  if (!over) return [];

  const oldestFirst = [...slow].sort((a, b) => a.since - b.since);
  const shed: ShedConnection<Key>[] = [];
  const kept: SlowConnection<Key>[] = [];
  for (const connection of oldestFirst) {
    const held = heldBy.get(connection.address) ?? 0;
    if (caps.perAddress > 0 && held > caps.perAddress) {
      heldBy.set(connection.address, held - 1);
      shed.push({ connection, cap: 'address' });
    } else {
      kept.push(connection);
    }
  }
  if (caps.total > 0) for (const connection of kept.slice(0, kept.length - caps.total)) shed.push({ connection, cap: 'total' });
  return shed;
}

export interface SlowConnectionsOptions {
  caps: SlowCaps;
  /** Closes a shed connection: with `reply` written first when there is one and the socket takes it, else at once. */
  shed(socket: Socket, reply: SlowConnectionShedError | null, cap: 'address' | 'total'): void;
  slowAfterMs?: number;
}

export interface SlowConnections {
  /** A new connection: waiting for its first request from now. */
  connected(socket: Socket): void;
  /** A request's head is in; its connection is delivered once its body is too. */
  requestStarted(request: IncomingMessage): void;
}

interface Watch {
  /** Read at connect: a closed socket no longer has one. */
  address: string;
  /** `performance.now()` when it began to wait. */
  since: number;
  /** `lagMs` then. */
  lagAtStart: number;
  /** The request whose body is awaited; null before the first request's head. */
  request: IncomingMessage | null;
}

export function createSlowConnections(options: SlowConnectionsOptions): SlowConnections {
  const { caps, slowAfterMs = 1_000 } = options;
  const sweepEveryMs = slowAfterMs / 4;
  const watches = new WeakMap<Socket, Watch>();
  /** Connections waiting for a whole request. */
  const waiting = new Map<Socket, Watch>();
  /** How late the sweeps have fired, in all: time the loop was busy with something else. */
  let lagMs = 0;
  let lastSweepAt = 0;
  let sweeper: NodeJS.Timeout | null = null;
  /** Sweeps in a row that found nothing waiting: after 40 (10 s) the timer stops until a connection waits again. */
  let idleSweeps = 0;

  function sweep(): void {
    const now = performance.now();
    lagMs += Math.max(0, now - lastSweepAt - sweepEveryMs);
    lastSweepAt = now;
    if (waiting.size === 0) {
      if (++idleSweeps >= 40 && sweeper !== null) {
        clearInterval(sweeper);
        sweeper = null;
      }
      return;
    }
    idleSweeps = 0;
    const slow: SlowConnection<Socket>[] = [];
    for (const [socket, watch] of waiting) {
      const request = watch.request;
      if (request !== null) {
        if (request.complete || request.destroyed) {
          waiting.delete(socket);
          watch.request = null;
          continue;
        }
        if (request.readableLength > 0) {
          // Bytes in that the handler has not read: the wait is ours.
          watch.since = now;
          watch.lagAtStart = lagMs;
          continue;
        }
      }
      if (now - watch.since - (lagMs - watch.lagAtStart) >= slowAfterMs)
        slow.push({ key: socket, address: watch.address, since: watch.since });
    }
    if (slow.length === 0) return;
    for (const { connection, cap } of whichToShed(slow, caps)) {
      const socket = connection.key;
      // A request under way belongs to its handler, which may be answering it: no reply of ours on top.
      const requestUnderWay = waiting.get(socket)?.request !== null;
      waiting.delete(socket);
      options.shed(
        socket,
        requestUnderWay ? null : new SlowConnectionShedError(cap, cap === 'address' ? caps.perAddress : caps.total),
        cap,
      );
    }
  }

  function wait(socket: Socket, watch: Watch): void {
    watch.since = performance.now();
    watch.lagAtStart = lagMs;
    waiting.set(socket, watch);
    idleSweeps = 0;
    if (sweeper === null) {
      lastSweepAt = watch.since;
      sweeper = setInterval(sweep, sweepEveryMs);
      sweeper.unref();
    }
  }

  if (caps.perAddress === 0 && caps.total === 0) return { connected: () => undefined, requestStarted: () => undefined };
  return {
    connected(socket) {
      const watch: Watch = { address: socket.remoteAddress ?? '', since: 0, lagAtStart: 0, request: null };
      watches.set(socket, watch);
      wait(socket, watch);
      socket.once('close', () => waiting.delete(socket));
    },
    requestStarted(request) {
      const socket = request.socket;
      const watch = watches.get(socket);
      if (watch === undefined) return;
      if (!bodyStillArriving(request)) {
        waiting.delete(socket);
        watch.request = null;
        return;
      }
      watch.request = request;
      wait(socket, watch);
    },
  };
}
