/**
 * One measurement of one path: the load, with the servers' CPU, peak RSS and
 * the machine's noise read around it; a disturbed run is measured again.
 */
import { log } from './log.mjs';
import { runFixedRate } from './run-fixed-rate.mjs';
import {
  cpuMicroseconds,
  cpuTimes,
  describeNoise,
  noiseBetween,
  noiseSnapshot,
  peakRssMegabytes,
  resetPeakRss,
  waitUntilIdle,
} from './process-statistics.mjs';

/** @typedef {import('./chat-request.mjs').LoadTarget} LoadTarget */
/** @typedef {import('./load-generators.mjs').LoadResult} LoadResult */
/** @typedef {import('./measurement-paths.mjs').PathName} PathName */

/**
 * Runs closed-loop load on one path and reads the servers' CPU and peak RSS around it.
 * @param {LoadTarget} target
 * @param {number} serverPid     the process that answers the client
 * @param {number | null} upstreamPid  the mock behind it, if it is not the mock itself
 * @param {(target: LoadTarget) => Promise<LoadResult>} load
 */
export async function measureSaturation(target, serverPid, upstreamPid, load) {
  const measured = upstreamPid === null ? [serverPid] : [serverPid, upstreamPid];
  const peakResets = measured.map(resetPeakRss);
  const cpuBefore = measured.map(cpuTimes);
  const noiseBefore = noiseSnapshot();
  const result = await load(target);
  const noise = noiseBetween(noiseBefore, noiseSnapshot());
  const settleMs = await waitUntilIdle(measured, 10_000);
  const cpuAfter = measured.map(cpuTimes);
  const requests = Math.max(1, result.completed);
  const userPerRequest = measured.map((_, index) => (cpuAfter[index].user - cpuBefore[index].user) / requests);
  const systemPerRequest = measured.map((_, index) => (cpuAfter[index].system - cpuBefore[index].system) / requests);
  const cpuPerRequest = measured.map((_, index) => userPerRequest[index] + systemPerRequest[index]);
  return {
    requestsPerSecond: result.completed / result.durationSeconds,
    completed: result.completed,
    failed: result.failed,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    /** The process that answers the client: the mock, the bare proxy or taskgate. */
    serverCpuMicrosPerRequest: cpuPerRequest[0],
    /** The kernel's share of it (sockets, epoll, SQLite's file writes). */
    serverSystemMicrosPerRequest: systemPerRequest[0],
    /** The mock's CPU behind a proxy (null when the mock is the server). */
    mockCpuMicrosPerRequest: upstreamPid === null ? null : cpuPerRequest[1],
    serverPeakRssMegabytes: peakRssMegabytes(serverPid),
    peakRssIsPerRun: peakResets[0],
    /** How long the servers kept busy after the last response (taskgate: trace writes). */
    settleMs,
    ...noise,
  };
}

/**
 * The same fixed-rate load, with the server's CPU per request at that rate.
 * @param {LoadTarget} target
 * @param {number} serverPid
 * @param {{ rate: number, durationSeconds: number, stream: boolean }} settings
 */
export async function measureFixedRate(target, serverPid, settings) {
  const cpuBefore = cpuMicroseconds(serverPid);
  const noiseBefore = noiseSnapshot();
  const result = await runFixedRate(target, settings);
  const noise = noiseBetween(noiseBefore, noiseSnapshot());
  await waitUntilIdle([serverPid], 10_000);
  return { ...result, serverCpuMicrosPerRequest: (cpuMicroseconds(serverPid) - cpuBefore) / Math.max(1, result.completed + result.failed), ...noise };
}

/**
 * A run disturbed by more than `--max-noise` % (see noiseBetween) is measured
 * again, up to `--retries` times; the least disturbed attempt is kept.
 * @template {{ noisePercent: number, stealPercent: number, otherProcessesPercent: number }} T
 * @param {import("./options.mjs").Options} options @param {() => Promise<T>} measure
 * @returns {Promise<T & { attempts: number }>}
 */
export async function measureQuietly(options, measure) {
  let best = await measure();
  let attempts = 1;
  while (best.noisePercent > options.maxNoisePercent && attempts <= options.retries) {
    log(`  ${describeNoise(best)} (over ${options.maxNoisePercent}%): measuring again`);
    const next = await measure();
    attempts++;
    if (next.noisePercent < best.noisePercent) best = next;
  }
  return { ...best, attempts };
}

/**
 * What each proxy path added to the direct figures of the same run (paired, so
 * drift in the machine's load between runs cancels out).
 * @param {Record<string, any>} entry @param {PathName[]} paths @param {string[]} fields
 */
export function addedOver(entry, paths, fields) {
  /** @type {Record<string, Record<string, number>>} */
  const added = {};
  for (const path of paths) {
    if (path === 'direct') continue;
    added[path] = Object.fromEntries(fields.map((field) => [field, entry[path][field] - entry.direct[field]]));
  }
  return added;
}
