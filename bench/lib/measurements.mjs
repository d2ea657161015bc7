/**
 * One measurement of one path: the load, with the servers' CPU, peak RSS and
 * the machine's noise read around it; a disturbed run is measured again.
 */
import { log } from './log.mjs';
import { runFixedRate } from './run-fixed-rate.mjs';
import {
  cpuBetween,
  cpuByPid,
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
 * Runs closed-loop load on one path and reads the servers' CPU and peak RSS
 * around it. Several servers (the three taskgates) count as one: their CPU
 * and peak RSS are summed.
 * @param {LoadTarget} target
 * @param {import('./measurement-paths.mjs').PathProcesses} processes
 * @param {(target: LoadTarget) => Promise<LoadResult>} load
 */
export async function measureSaturation(target, { serverPids, upstreamPid, idlePids, backends }, load) {
  const peakResets = serverPids.map(resetPeakRss);
  const fixed = [...serverPids, ...(upstreamPid === null ? [] : [upstreamPid]), ...idlePids];
  const cpuBefore = new Map(fixed.map((pid) => [pid, cpuTimes(pid)]));
  const backendBefore = readBackends(backends);
  const noiseBefore = noiseSnapshot();
  const result = await load(target);
  const noise = noiseBetween(noiseBefore, noiseSnapshot());
  // Not redis-server: other people's work may keep it busy. The bench database's backends are the bench's alone.
  const settleMs = await waitUntilIdle([...fixed, ...(backends?.postgresPids?.() ?? [])], 10_000);
  const cpuAfter = new Map(fixed.map((pid) => [pid, cpuTimes(pid)]));
  const backendAfter = readBackends(backends);
  const requests = Math.max(1, result.completed);
  /** @param {number[]} pids @param {'user' | 'system' | 'both'} part */
  const perRequest = (pids, part) =>
    pids.reduce((sum, pid) => {
      const before = /** @type {{ user: number, system: number }} */ (cpuBefore.get(pid));
      const after = /** @type {{ user: number, system: number }} */ (cpuAfter.get(pid));
      const user = after.user - before.user;
      const system = after.system - before.system;
      return sum + (part === 'user' ? user : part === 'system' ? system : user + system);
    }, 0) / requests;
  return {
    requestsPerSecond: result.completed / result.durationSeconds,
    completed: result.completed,
    failed: result.failed,
    connections: result.connections,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    /** The process that answers the client: the mock, the bare proxy or taskgate (the three taskgates summed). */
    serverCpuMicrosPerRequest: perRequest(serverPids, 'both'),
    /** The kernel's share of it (sockets, epoll, SQLite's file writes). */
    serverSystemMicrosPerRequest: perRequest(serverPids, 'system'),
    /** The mock's CPU behind a proxy (null when the mock is the server). */
    mockCpuMicrosPerRequest: upstreamPid === null ? null : perRequest([upstreamPid], 'both'),
    /** Taskgates on the same back ends that got no calls (the one-process path's two siblings); null when there are none. */
    idleCpuMicrosPerRequest: idlePids.length === 0 ? null : perRequest(idlePids, 'both'),
    /** The bench database's PostgreSQL backends (null off PostgreSQL, or when they are not on this machine). */
    postgresCpuMicrosPerRequest:
      backendBefore.postgres === null || backendAfter.postgres === null
        ? null
        : cpuBetween(backendBefore.postgres, backendAfter.postgres) / requests,
    /** redis-server, all of it: other clients of the same Redis count too (null off Redis, or when it is not on this machine). */
    redisCpuMicrosPerRequest:
      backendBefore.redis === null || backendAfter.redis === null ? null : cpuBetween(backendBefore.redis, backendAfter.redis) / requests,
    serverPeakRssMegabytes: serverPids.reduce((sum, pid) => sum + peakRssMegabytes(pid), 0),
    peakRssIsPerRun: peakResets.every(Boolean),
    /** How long the servers kept busy after the last response (taskgate: trace writes). */
    settleMs,
    ...noise,
  };
}

/**
 * CPU so far of the PostgreSQL backends and of redis-server, each null when not measured.
 * @param {import('./measurement-paths.mjs').PathProcesses['backends']} backends
 */
function readBackends(backends) {
  return {
    postgres: backends?.postgresPids == null ? null : cpuByPid(backends.postgresPids()),
    redis: backends == null || backends.redisPid === null ? null : cpuByPid([backends.redisPid]),
  };
}

/**
 * The same fixed-rate load, with the servers' CPU per request at that rate (summed over several servers).
 * @param {LoadTarget} target
 * @param {number[]} serverPids
 * @param {{ rate: number, durationSeconds: number, stream: boolean }} settings
 */
export async function measureFixedRate(target, serverPids, settings) {
  const cpuOf = () => serverPids.reduce((sum, pid) => sum + cpuMicroseconds(pid), 0);
  const cpuBefore = cpuOf();
  const noiseBefore = noiseSnapshot();
  const result = await runFixedRate(target, settings);
  const noise = noiseBetween(noiseBefore, noiseSnapshot());
  await waitUntilIdle(serverPids, 10_000);
  return { ...result, serverCpuMicrosPerRequest: (cpuOf() - cpuBefore) / Math.max(1, result.completed + result.failed), ...noise };
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
