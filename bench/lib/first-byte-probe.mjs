/**
 * Loaded into a server with `node --import` (bench/first-byte-stamps.mjs):
 * stamps each streamed call's way to its first byte from inside the process,
 * without a change to the server's code, so taskgate and the bare
 * pass-through are timed by the same means.
 *
 *   before  the request's head parsed (`http.server.request.start`) -> the
 *           first write on another socket (the engine request);
 *   engine  that write -> the engine's first bytes read on that socket;
 *   after   those bytes -> the first write on the client's socket.
 *
 * A server may also call `globalThis.__stamp(label)` (a throwaway build with
 * stamps): the time of each label since the request's start (before the
 * engine request) or since the engine's first bytes (after) is kept too.
 * The legs and stamps are written to `$FIRST_BYTE_PROBE_DIR/<pid>.json` when
 * the process exits.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

const directory = process.env.FIRST_BYTE_PROBE_DIR;
const now = () => performance.now();

/** @typedef {{ start: number, socket: net.Socket, sent: number, engineBytes: number, stamps: Array<string | number> }} Call */

/** The call whose engine request has not gone yet. @type {Call | null} */
let waiting = null;
/** The call stamps go to. @type {Call | null} */
let current = null;
/** @type {WeakMap<net.Socket, Call>} */
const byClientSocket = new WeakMap();
/** @type {Array<{ legs: number[], stamps: Record<string, number> }>} */
const calls = [];

/** @param {string} label */
globalThis.__stamp = (label) => {
  if (current !== null) current.stamps.push(label, now());
};

diagnosticsChannel.subscribe('http.server.request.start', (message) => {
  const { request, socket } = /** @type {{ request: import('node:http').IncomingMessage, socket: net.Socket }} */ (message);
  if (request.method !== 'POST') return;
  waiting = { start: now(), socket, sent: 0, engineBytes: 0, stamps: [] };
  current = waiting;
  byClientSocket.set(socket, waiting);
});

const writeGeneric = net.Socket.prototype._writeGeneric;
net.Socket.prototype._writeGeneric = function stampedWrite(...parts) {
  if (waiting !== null && this !== waiting.socket) {
    const call = waiting;
    waiting = null;
    call.sent = now();
    this.prependOnceListener('data', () => {
      if (call.engineBytes !== 0) return;
      call.engineBytes = now();
      current = call;
    });
  }
  const call = byClientSocket.get(this);
  if (call !== undefined && call.engineBytes !== 0) {
    byClientSocket.delete(this);
    const written = now();
    /** @type {Record<string, number>} */
    const stamps = {};
    for (let index = 0; index < call.stamps.length; index += 2) {
      const at = /** @type {number} */ (call.stamps[index + 1]);
      stamps[/** @type {string} */ (call.stamps[index])] = at < call.sent ? at - call.start : at - call.engineBytes;
    }
    calls.push({ legs: [call.sent - call.start, call.engineBytes - call.sent, written - call.engineBytes], stamps });
    if (current === call) current = null;
  }
  return writeGeneric.apply(this, parts);
};

process.on('exit', () => {
  if (directory !== undefined) writeFileSync(join(directory, `${process.pid}.json`), JSON.stringify(calls));
});
