/**
 * Server CPU per call of several processes over one load, and the in-turns
 * load that makes two processes comparable on a noisy machine (one wrk per
 * server, one paused while the other runs, switching every `TURN_MS`).
 * Used by the OpenTelemetry A/B (export-cost.mjs), the targets against the
 * bare pass-through (against-bare.mjs) and bench/ab-builds.mjs.
 */
import { runWrkInTurns } from './load-generators.mjs';
import { cpuMicroseconds } from './process-statistics.mjs';
import { median } from './statistics.mjs';

/** How often the servers take turns within a round. */
const TURN_MS = 100;

/**
 * Runs `load` (one result per server, in order) and returns each server's CPU µs per call over it; any failed call throws.
 * @param {{ pid: number }[]} servers
 * @param {() => Promise<import('./load-generators.mjs').LoadResult[]>} load
 * @param {string} label  names the measurement in the error
 * @returns {Promise<number[]>}
 */
export async function cpuPerCall(servers, load, label) {
  const before = servers.map((server) => cpuMicroseconds(server.pid));
  const loads = await load();
  return servers.map((server, at) => {
    const result = /** @type {import('./load-generators.mjs').LoadResult} */ (loads[at]);
    if (result.failed > 0)
      throw new Error(`${label}: ${result.failed} of ${result.completed + result.failed} calls failed on pid ${server.pid}`);
    return (cpuMicroseconds(server.pid) - /** @type {number} */ (before[at])) / result.completed;
  });
}

/**
 * CPU µs per call of each server, loaded in turns for `seconds` each.
 * @param {{ pid: number }[]} servers
 * @param {import('./chat-request.mjs').LoadTarget[]} targets  one per server
 * @param {{ connections: number, seconds: number, directory: string, label: string }} options
 */
export function cpuPerCallInTurns(servers, targets, { connections, seconds, directory, label }) {
  return cpuPerCall(
    servers,
    () => runWrkInTurns(targets, { connections, durationSeconds: servers.length * seconds, directory, sliceMs: TURN_MS }),
    label,
  );
}

/**
 * Two servers over `rounds` rounds in turns: each one's CPU µs per call round
 * by round, the second's over the first's per round, and the median of those.
 * @param {{ pid: number }[]} servers  two
 * @param {import('./chat-request.mjs').LoadTarget[]} targets  one per server
 * @param {{ rounds: number, connections: number, seconds: number, directory: string, label: string, onRound?: (round: number) => void }} options
 */
export async function ratioInTurns(servers, targets, { rounds, onRound, ...load }) {
  /** @type {[number[], number[]]} */
  const cpu = [[], []];
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    onRound?.(round);
    const [first, second] = /** @type {[number, number]} */ (await cpuPerCallInTurns(servers, targets, load));
    cpu[0].push(first);
    cpu[1].push(second);
    ratios.push(second / first);
  }
  return { cpu, ratios, ratio: median(ratios) };
}
