/**
 * The undici transport's figures beside the default's: a second taskgate on
 * SQLite + memory, the same config but `transport: undici` on both engines
 * (src/engines/transport/undici-transport.ts, the reference implementation
 * of the transport contract), measured against the same bare pass-through
 * in turns exactly as the default taskgate is (against-bare.mjs, the same
 * settings: rounds, seconds, connections, first-byte run).
 *
 * Reported, not a target: the targets hold for the default transport
 * (http1, taskgate's own client), the one taskgate ships with. This shows
 * what that client saves over undici, or costs, on the same machine.
 *
 * It runs after the default's measurement, so the default's figures are
 * taken as before, with no third taskgate on the machine; while it runs, the
 * default taskgate is idle beside it. Each ratio is against the pass-through
 * of its own rounds, so the two transports' ratios compare even if the
 * machine drifted between the two measurements; their µs need not.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { measureAgainstBare } from './against-bare.mjs';
import { checkReply } from './chat-request.mjs';
import { stopChild } from './child-processes.mjs';
import { log, logWarnings } from './log.mjs';
import { countAsOwn } from './process-statistics.mjs';
import { runFixedRate } from './run-fixed-rate.mjs';
import { targetsOf } from './start-servers.mjs';
import { startTaskgate } from './start-taskgate.mjs';

/**
 * @typedef {object} UndiciTransportSettings
 * @property {Awaited<ReturnType<typeof import('./start-servers.mjs').startServers>>} servers  the run's: its mocks, pass-through and admin key
 * @property {string} directory  the run's temporary directory; this taskgate's data goes in a folder of its own
 * @property {Parameters<typeof measureAgainstBare>[2]} againstBare  the settings the default taskgate was measured with
 * @property {number} warmupSeconds  load on the new taskgate per kind of call before it is measured
 * @property {(durationSeconds: number) => (target: import('./chat-request.mjs').LoadTarget) => Promise<import('./load-generators.mjs').LoadResult>} saturate
 * @property {{ child: import('node:child_process').ChildProcess }[]} started  the taskgate is pushed here as soon as it runs (the caller stops it on failure)
 */

/**
 * Starts the taskgate, checks that it answers, warms it up, measures it, stops it.
 * @param {UndiciTransportSettings} settings
 * @returns {Promise<Awaited<ReturnType<typeof measureAgainstBare>> & { transport: 'undici', elapsedSeconds: number, warnings: string[] }>}
 */
export async function measureUndiciTransport({ servers, directory, againstBare, warmupSeconds, saturate, started }) {
  const startedAt = performance.now();
  if (servers.bare === null) throw new Error('the undici transport is measured against the bare pass-through, which was not started');
  const own = join(directory, 'transport-undici');
  mkdirSync(own, { recursive: true });
  const { adminKey } = servers.taskgate;
  const taskgate = await startTaskgate({
    directory: own,
    mockUrl: servers.mock.url,
    gapMockUrl: servers.gapMock.url,
    adminKey,
    transport: 'undici',
  });
  started.push(taskgate);
  countAsOwn(taskgate.pid);
  log(`undici transport: taskgate pid ${taskgate.pid} at ${taskgate.origin}`);
  // The same requests as the default's, to this taskgate on the 'through' path.
  const targetFor = targetsOf({ ...servers, taskgate: { ...taskgate, adminKey } });
  for (const kind of ['json', 'stream']) {
    await checkReply(targetFor('through', kind), kind === 'stream', `${kind} through taskgate (transport: undici)`);
    await checkReply(targetFor('through', kind, true), kind === 'stream', `${kind} through taskgate (transport: undici, gap mock)`);
  }
  log(`undici transport: warming up (${warmupSeconds} s per kind)`);
  for (const kind of againstBare.kinds) await saturate(warmupSeconds)(targetFor('through', kind));
  // The streams through the mock with gaps, as the default taskgate's warm-up ends with.
  const { firstByte } = againstBare;
  if (firstByte !== null && againstBare.kinds.includes('stream'))
    await runFixedRate(targetFor('through', 'stream', true), {
      rate: firstByte.rate,
      durationSeconds: Math.min(1, warmupSeconds),
      stream: true,
    });

  const measured = await measureAgainstBare({ bare: servers.bare, taskgate }, targetFor, {
    ...againstBare,
    name: 'taskgate (transport: undici)',
  });
  await stopChild(taskgate.child, 20_000);
  const warnings = logWarnings('taskgate (transport: undici)', taskgate.log.text);
  const elapsedSeconds = (performance.now() - startedAt) / 1_000;
  log(`undici transport: measured in ${elapsedSeconds.toFixed(0)} s`);
  return { ...measured, transport: 'undici', elapsedSeconds, warnings };
}
