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
 *
 * With streams, the time to first byte is taken the same way after the CPU
 * rounds: streams at the fixed rate in all, dealt to the two in turns
 * (first-byte-in-turns.mjs says why), through the mock with gaps. In all,
 * not to each, so the machine carries what it carries when the paths run
 * one after the other.
 */
import { ratioInTurns } from './cpu-per-call.mjs';
import { firstByteInTurns } from './first-byte-in-turns.mjs';
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
 * @typedef {object} FirstByteAgainstBare
 * @property {number} rate  streams a second in all (each path gets every other one)
 * @property {number} seconds
 * @property {import('./first-byte-in-turns.mjs').FirstBytes} bare
 * @property {import('./first-byte-in-turns.mjs').FirstBytes} taskgate
 */

/**
 * @param {{ bare: { pid: number }, taskgate: { pid: number } }} servers
 * @param {(path: 'bare' | 'through', kind: string, gap?: boolean) => import('./chat-request.mjs').LoadTarget} targetFor
 * @param {{ kinds: string[], rounds: number, seconds: number, connections: number, directory: string, firstByte: { rate: number, seconds: number } | null, name?: string }} settings
 *   `firstByte`: the time-to-first-byte run in turns (with streams only), or null for none;
 *   `name`: which taskgate, in the progress lines and errors (default 'taskgate')
 * @returns {Promise<{ rounds: number, seconds: number, kinds: AgainstBareOfKind[], firstByte: FirstByteAgainstBare | null }>}
 */
export async function measureAgainstBare(
  servers,
  targetFor,
  { kinds, rounds, seconds, connections, directory, firstByte, name = 'taskgate' },
) {
  /** @type {AgainstBareOfKind[]} */
  const results = [];
  for (const kind of kinds) {
    const { cpu, ratios, ratio } = await ratioInTurns(
      [servers.bare, servers.taskgate],
      [targetFor('bare', kind), targetFor('through', kind)],
      {
        rounds,
        seconds,
        connections,
        directory,
        label: `${name} against the bare pass-through`,
        onRound: (round) => log(`${name} against the bare pass-through, in turns: ${kind}, round ${round + 1}/${rounds}`),
      },
    );
    results.push({ kind, bare: cpu[0], taskgate: cpu[1], ratios, ratio });
  }
  if (firstByte === null || !kinds.includes('stream')) return { rounds, seconds, kinds: results, firstByte: null };
  log(`${name} against the bare pass-through, in turns: stream time to first byte, ${firstByte.rate}/s in all for ${firstByte.seconds} s`);
  const destinations = [targetFor('bare', 'stream', true), targetFor('through', 'stream', true)].map(({ url, headers, body }) => {
    const { origin, pathname } = new URL(url);
    return { origin, path: pathname, headers, body };
  });
  // The machine carries --ttfb-rate streams a second in all, as in the runs one path after the other; each path gets every other one.
  const [bare, taskgate] = await firstByteInTurns(destinations, { rate: firstByte.rate / destinations.length, seconds: firstByte.seconds });
  if (bare === undefined || taskgate === undefined) throw new Error('first byte in turns: a server is missing from the result');
  return { rounds, seconds, kinds: results, firstByte: { ...firstByte, bare, taskgate } };
}
