/**
 * Readings from /proc (Linux only): the CPU time and peak RSS of the servers,
 * and how disturbed the machine was while they were measured.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { format } from './number-format.mjs';

const clockTicksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU time the process (all its threads) has used so far, in microseconds: user and system (kernel).
 * @param {number} pid
 */
export function cpuTimes(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name, field 3 (state) is index 0, so utime (14) and stime (15) are 11 and 12.
  const microsPerTick = 1_000_000 / clockTicksPerSecond;
  return { user: Number(fields[11]) * microsPerTick, system: Number(fields[12]) * microsPerTick };
}

/** User + system CPU time so far, in microseconds. @param {number} pid */
export function cpuMicroseconds(pid) {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/**
 * Peak resident set size (VmHWM) in MB.
 * @param {number} pid
 */
export function peakRssMegabytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmHWM:\s+(\d+) kB/m.exec(status);
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

/**
 * Resident set size now (VmRSS) in MB.
 * @param {number} pid
 */
export function rssMegabytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

/**
 * Resets VmHWM to the current RSS, so the next reading is the peak of one run
 * (writing 5 to clear_refs; needs the same user, and Linux 4.0+).
 * @param {number} pid
 */
export function resetPeakRss(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The processes this script started and measures (servers); set once they run. */
const ownServerPids = /** @type {number[]} */ ([]);

/** Processes that work for the benchmark but that it did not start (PostgreSQL backends, redis-server), found anew at each reading. */
const ownPidSources = /** @type {Array<() => number[]>} */ ([]);

/**
 * Counts these processes' CPU as the benchmark's own, not as noise.
 * @param {...number} pids
 */
export function countAsOwn(...pids) {
  ownServerPids.push(...pids);
}

/**
 * Counts the CPU of the processes `pids()` names at each reading as the
 * benchmark's own (a process that comes and goes between two readings is
 * missed, and counted as noise).
 * @param {() => number[]} pids
 */
export function countAsOwnWhileRunning(pids) {
  ownPidSources.push(pids);
}

/**
 * CPU time so far (microseconds) of each of these processes that is still
 * there, by pid: for sets of processes that change (pooled database backends).
 * @param {number[]} pids
 * @returns {Map<number, number>}
 */
export function cpuByPid(pids) {
  const byPid = new Map();
  for (const pid of new Set(pids)) {
    try {
      byPid.set(pid, cpuMicroseconds(pid));
    } catch {
      // Gone.
    }
  }
  return byPid;
}

/**
 * CPU used between two `cpuByPid` readings: a process that appeared in between
 * counts from zero, one that ended in between is lost.
 * @param {Map<number, number>} before @param {Map<number, number>} after
 */
export function cpuBetween(before, after) {
  let total = 0;
  for (const [pid, micros] of after) total += micros - (before.get(pid) ?? 0);
  return total;
}

/**
 * What the machine as a whole, and this script with everything it started,
 * have used so far (microseconds). From /proc/stat's first line (all cores) and
 * /proc/<pid>/stat; this process's own line includes its reaped children (wrk).
 */
export function noiseSnapshot() {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map((field) => (Number(field) * 1_000_000) / clockTicksPerSecond);
  const self = readFileSync('/proc/self/stat', 'utf8');
  const selfFields = self.slice(self.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime are fields 14-17: indexes 11-14 after the name.
  const selfTicks = Number(selfFields[11]) + Number(selfFields[12]) + Number(selfFields[13]) + Number(selfFields[14]);
  let own = (selfTicks * 1_000_000) / clockTicksPerSecond;
  const dynamicPids = ownPidSources.flatMap((source) => source());
  for (const micros of cpuByPid([...ownServerPids, ...dynamicPids]).values()) own += micros;
  return { total: user + nice + system + idle + iowait + irq + softirq + steal, busy: user + nice + system + irq + softirq, steal, own };
}

/**
 * How disturbed a run was, in % of the machine's time (both cores): the time the
 * hypervisor gave to other guests (steal), and the CPU used by processes this
 * script did not start (other engineers' tests, say). Either makes every figure
 * of the run worse, CPU per request included (caches go cold).
 * @param {ReturnType<typeof noiseSnapshot>} before @param {ReturnType<typeof noiseSnapshot>} after
 */
export function noiseBetween(before, after) {
  const total = Math.max(1, after.total - before.total);
  const stealPercent = (100 * (after.steal - before.steal)) / total;
  const otherProcessesPercent = Math.max(0, (100 * (after.busy - before.busy - (after.own - before.own))) / total);
  return { stealPercent, otherProcessesPercent, noisePercent: stealPercent + otherProcessesPercent };
}

/**
 * Waits until the processes stop using CPU (at most one 10 ms tick each per
 * 200 ms window), for at most `maxMs`. taskgate keeps working after the last
 * response (it writes the traces of the run in batches); that work belongs to
 * the run, and must not spill into the next one.
 * @param {number[]} pids @param {number} maxMs
 * @returns {Promise<number>} how long it took, in ms
 */
export async function waitUntilIdle(pids, maxMs) {
  const startedAt = performance.now();
  const windowMs = 200;
  // By pid, skipping processes that end meanwhile (a pooled PostgreSQL backend closing its idle connection).
  let previous = cpuByPid(pids);
  for (let waited = 0; waited < maxMs; waited += windowMs) {
    await sleep(windowMs);
    const current = cpuByPid(pids);
    const busy = [...current].some(([pid, value]) => value - (previous.get(pid) ?? value) > 1_000_000 / clockTicksPerSecond);
    previous = current;
    if (!busy) break;
  }
  return performance.now() - startedAt;
}

/** @param {{ stealPercent: number, otherProcessesPercent: number }} noise */
export function describeNoise(noise) {
  return `disturbed: ${format(noise.stealPercent)}% of the machine stolen by the hypervisor, ${format(noise.otherProcessesPercent)}% used by other processes`;
}
