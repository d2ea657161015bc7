/**
 * Does taskgate's memory grow under sustained load? One taskgate (SQLite +
 * memory) saturated for `seconds` (JSON and streams, one wrk each, at once),
 * its resident set read every `sampleSeconds`. The run's start is the first
 * tenth (code compiled, young generation grown to its working size); growth
 * is the last sample against the largest sample of that first tenth, so a
 * full collection that happens to fall just before the end cannot hide a
 * leak, nor one just before the start fake one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { log } from './log.mjs';
import { rssMegabytes } from './process-statistics.mjs';

/**
 * @param {{ pid: number }} server
 * @param {import('./chat-request.mjs').LoadTarget[]} targets  loaded together for the whole run
 * @param {{ seconds: number, sampleSeconds: number, saturate: (seconds: number) => (target: import('./chat-request.mjs').LoadTarget) => Promise<import('./load-generators.mjs').LoadResult> }} settings
 */
export async function measureMemoryGrowth(server, targets, { seconds, sampleSeconds, saturate }) {
  log(`memory growth: ${seconds} s of saturation (${targets.length} loads at once), RSS every ${sampleSeconds} s`);
  /** @type {{ atSeconds: number, rssMegabytes: number }[]} */
  const samples = [];
  const startedAt = performance.now();
  let running = true;
  const loads = Promise.all(targets.map((target) => saturate(seconds)(target))).finally(() => {
    running = false;
  });
  while (running) {
    samples.push({ atSeconds: (performance.now() - startedAt) / 1000, rssMegabytes: rssMegabytes(server.pid) });
    await Promise.race([sleep(sampleSeconds * 1000), loads.catch(() => undefined)]);
  }
  const results = await loads;
  samples.push({ atSeconds: (performance.now() - startedAt) / 1000, rssMegabytes: rssMegabytes(server.pid) });
  const early = samples.filter((sample) => sample.atSeconds <= seconds / 10 + sampleSeconds);
  const startMegabytes = Math.max(...early.map((sample) => sample.rssMegabytes));
  const endMegabytes = /** @type {{ rssMegabytes: number }} */ (samples[samples.length - 1]).rssMegabytes;
  return {
    seconds,
    calls: results.reduce((sum, result) => sum + result.completed, 0),
    failed: results.reduce((sum, result) => sum + result.failed, 0),
    startMegabytes,
    endMegabytes,
    peakMegabytes: Math.max(...samples.map((sample) => sample.rssMegabytes)),
    samples,
  };
}
