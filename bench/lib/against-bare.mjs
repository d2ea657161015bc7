/**
 * taskgate's CPU per call against the bare pass-through's, in turns: the two
 * servers of the run (taskgate on SQLite + memory, the bare proxy), one wrk
 * each, loaded in turns within every round (paused and resumed every 100 ms,
 * as the OpenTelemetry A/B does: export-cost.mjs says why), and the ratio of
 * their CPU per call taken per round; the figure is the median of the rounds'.
 *
 * The saturation table measures the paths one after the other, which on a
 * shared VM moved the pass-through's own CPU per call by half from one run to
 * the next (80 to 159 µs a JSON call on 2026-11-26): a ratio of two such
 * figures is good to a third. In turns, both see the same machine.
 */
import { ratioInTurns } from './cpu-per-call.mjs';
import { log } from './log.mjs';

/**
 * @typedef {object} AgainstBareOfKind
 * @property {string} kind
 * @property {number[]} bare  CPU µs per call of the pass-through, round by round
 * @property {number[]} taskgate  the same, taskgate
 * @property {number[]} ratios  taskgate / bare of each round
 * @property {number} ratio  the median of `ratios`
 */

/**
 * @param {{ bare: { pid: number }, taskgate: { pid: number } }} servers
 * @param {(path: 'bare' | 'through', kind: string) => import('./chat-request.mjs').LoadTarget} targetFor
 * @param {{ kinds: string[], rounds: number, seconds: number, connections: number, directory: string }} settings
 * @returns {Promise<{ rounds: number, seconds: number, kinds: AgainstBareOfKind[] }>}
 */
export async function measureAgainstBare(servers, targetFor, { kinds, rounds, seconds, connections, directory }) {
  /** @type {AgainstBareOfKind[]} */
  const results = [];
  for (const kind of kinds) {
    const { cpu, ratios, ratio } = await ratioInTurns([servers.bare, servers.taskgate], [targetFor('bare', kind), targetFor('through', kind)], {
      rounds,
      seconds,
      connections,
      directory,
      label: 'taskgate against the bare pass-through',
      onRound: (round) => log(`against the bare pass-through, in turns: ${kind}, round ${round + 1}/${rounds}`),
    });
    results.push({ kind, bare: cpu[0], taskgate: cpu[1], ratios, ratio });
  }
  return { rounds, seconds, kinds: results };
}
