/**
 * Time to first byte of streams, two (or more) servers in turns: one open
 * loop at a fixed rate per server, the streams dealt to the servers in
 * rotation, so every server sees the machine's same seconds.
 *
 * Taken one server after the other (as the fixed-rate table does), the
 * pass-through's own first byte moved from 0.89 to 1.18 ms between the
 * repeats of one run on 2026-11-27: a difference of two such figures cannot
 * hold a 0.2 ms target. In turns, an A/A comparison differs by about
 * 0.05 ms at the p50 with 860 streams each.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { percentile } from './statistics.mjs';

/**
 * @typedef {object} FirstBytes
 * @property {number} streams  streams counted (after the warm-up, answered 200)
 * @property {number} p25Ms
 * @property {number} p50Ms
 * @property {number} p75Ms
 * @property {number} p99Ms
 */

/**
 * @param {Array<{ origin: string, path: string, headers: Record<string, string>, body: string }>} servers  where and what to send
 * @param {{ rate: number, seconds: number, warmUp?: number }} settings
 *   `rate` streams a second to each server; the first `warmUp` streams of each (default 40) are not counted
 * @returns {Promise<FirstBytes[]>} one entry per server, in order
 */
export async function firstByteInTurns(servers, { rate, seconds, warmUp = 40 }) {
  const pools = servers.map((server) => new Pool(server.origin, { connections: 64, pipelining: 1 }));
  const total = Math.round(rate * seconds) * servers.length;
  const intervalMs = 1_000 / (rate * servers.length);
  /** @type {number[][]} */
  const firstBytes = servers.map(() => []);

  /** @param {number} index */
  async function oneStream(index) {
    const which = index % servers.length;
    const server = /** @type {(typeof servers)[number]} */ (servers[which]);
    const sentAt = performance.now();
    const response = await /** @type {Pool} */ (pools[which]).request({
      method: 'POST',
      path: server.path,
      headers: server.headers,
      body: server.body,
      signal: AbortSignal.timeout(10_000),
    });
    let firstByteAt = 0;
    for await (const part of response.body) if (firstByteAt === 0 && part.length > 0) firstByteAt = performance.now();
    if (response.statusCode === 200 && index >= warmUp * servers.length) firstBytes[which]?.push(firstByteAt - sentAt);
  }

  const startedAt = performance.now();
  const pending = [];
  for (let index = 0; index < total; index++) {
    const wait = startedAt + index * intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(oneStream(index).catch(() => undefined));
  }
  await Promise.all(pending);
  await Promise.all(pools.map((pool) => pool.destroy()));
  return firstBytes.map((times) => ({
    streams: times.length,
    p25Ms: percentile(times, 25),
    p50Ms: percentile(times, 50),
    p75Ms: percentile(times, 75),
    p99Ms: percentile(times, 99),
  }));
}
