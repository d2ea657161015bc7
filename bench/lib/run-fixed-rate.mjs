/**
 * Open-loop load at a fixed rate with undici, for latency below saturation
 * and for the time to first byte of streams.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { withDeadline } from './child-processes.mjs';
import { percentile } from './statistics.mjs';

/** @typedef {import('./chat-request.mjs').LoadTarget} LoadTarget */

/**
 * Open-loop load at a fixed rate with undici: a request is sent when it is
 * due, whether or not the earlier ones have finished, so a slow server cannot
 * slow the client down and hide its own latency. A target with several
 * servers gets request i on server i mod n.
 * @param {LoadTarget} target
 * @param {{ rate: number, durationSeconds: number, stream: boolean }} settings
 */
export async function runFixedRate(target, { rate, durationSeconds, stream }) {
  const urls = (target.urls ?? [target.url]).map((text) => new URL(text));
  const pools = urls.map((url) => new Pool(url.origin, { connections: 256, pipelining: 1 }));
  const total = Math.max(1, Math.round(rate * durationSeconds));
  const intervalMs = 1_000 / rate;
  /** @type {number[]} */
  const latencies = [];
  /** @type {number[]} */
  const firstBytes = [];
  let failed = 0;
  /** @type {Set<Promise<void>>} */
  const pending = new Set();

  /** @param {number} index */
  async function one(index) {
    const server = index % pools.length;
    const pool = /** @type {Pool} */ (pools[server]);
    const sentAt = performance.now();
    const response = await pool.request({
      method: 'POST',
      path: /** @type {URL} */ (urls[server]).pathname,
      headers: target.headers,
      body: target.body,
      signal: AbortSignal.timeout(10_000),
    });
    let firstByteAt = 0;
    let text = '';
    for await (const part of response.body) {
      if (firstByteAt === 0 && part.length > 0) firstByteAt = performance.now();
      // Only stream replies are checked for their end; keep them (they are small).
      if (stream) text += part.toString();
    }
    const endAt = performance.now();
    if (response.statusCode !== 200 || (stream && !text.endsWith('data: [DONE]\n\n'))) {
      failed++;
      return;
    }
    latencies.push(endAt - sentAt);
    firstBytes.push(firstByteAt - sentAt);
  }

  const startedAt = performance.now();
  for (let index = 0; index < total; index++) {
    const wait = startedAt + index * intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    const request = one(index).catch(() => {
      failed++;
    });
    pending.add(request);
    void request.finally(() => pending.delete(request));
  }
  const sendingSeconds = (performance.now() - startedAt) / 1_000;
  // Every request has its own 10 s timeout; this bound is only a backstop.
  await withDeadline(Promise.allSettled([...pending]), 15_000, 'fixed-rate requests still pending').catch(() => undefined);
  await Promise.all(pools.map((pool) => pool.destroy()));
  return {
    sent: total,
    completed: latencies.length,
    failed,
    achievedRate: total / sendingSeconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    firstByteP50Ms: percentile(firstBytes, 50),
    firstByteP99Ms: percentile(firstBytes, 99),
  };
}
