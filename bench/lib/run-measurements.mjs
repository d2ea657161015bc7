/**
 * The measured runs: `--repeat` times every kind of load on every path, then
 * the medians over the repeats and the warnings the runs call for.
 */
import { log } from './log.mjs';
import { addedOver, measureFixedRate, measureQuietly, measureSaturation } from './measurements.mjs';
import { pathLabels, processesOf } from './measurement-paths.mjs';
import { describeNoise } from './process-statistics.mjs';
import { medianOfPaths } from './statistics.mjs';

/** @typedef {import('./measurement-paths.mjs').PathName} PathName */
/** @typedef {import('./chat-request.mjs').LoadTarget} LoadTarget */
/** @typedef {import('./load-generators.mjs').LoadResult} LoadResult */

/**
 * @typedef {object} MeasurementPlan
 * @property {import('./options.mjs').Options} options
 * @property {string[]} kinds
 * @property {PathName[]} paths
 * @property {import('./measurement-paths.mjs').Servers} servers
 * @property {(path: PathName, kind: string, gap?: boolean) => LoadTarget} targetFor
 * @property {(durationSeconds: number) => (target: LoadTarget) => Promise<LoadResult>} saturate
 */

/**
 * @param {MeasurementPlan} plan
 * @returns {Promise<{ runs: any[], completedByPath: Record<string, number> }>} completedByPath: calls answered on each path, to check taskgate's traces against
 */
export async function runMeasurements({ options, kinds, paths, servers, targetFor, saturate }) {
  /** @type {any[]} */
  const runs = [];
  /** @type {Record<string, number>} */
  const completedByPath = Object.fromEntries(paths.map((path) => [path, 0]));
  for (let repetition = 0; repetition < options.repeat; repetition++) {
    // Alternate the order of the paths, so a drift in the machine's load does not favour one.
    const order = repetition % 2 === 0 ? paths : [...paths].reverse();
    const step = `run ${repetition + 1}/${options.repeat}`;
    const run = { saturation: /** @type {any[]} */ ([]), fixedRate: /** @type {any} */ (null), firstByte: /** @type {any} */ (null) };
    for (const kind of kinds) {
      /** @type {Record<string, any>} */
      const entry = { kind };
      for (const path of order) {
        log(`${step}: ${kind} saturation, ${pathLabels[path]}`);
        const processes = processesOf(path, servers, false);
        entry[path] = await measureQuietly(options, () =>
          measureSaturation(targetFor(path, kind), processes, saturate(options.durationSeconds)),
        );
        completedByPath[path] += entry[path].completed;
      }
      run.saturation.push(entry);
    }
    if (kinds.includes('json')) {
      /** @type {Record<string, any>} */
      const entry = {};
      for (const path of order) {
        log(`${step}: JSON at ${options.rate} req/s, ${pathLabels[path]}`);
        const { serverPids } = processesOf(path, servers, false);
        const settings = { rate: options.rate, durationSeconds: options.durationSeconds, stream: false };
        entry[path] = await measureQuietly(options, () => measureFixedRate(targetFor(path, 'json'), serverPids, settings));
        completedByPath[path] += entry[path].completed;
      }
      entry.added = addedOver(entry, paths, ['p50Ms', 'p99Ms']);
      run.fixedRate = entry;
    }
    if (kinds.includes('stream')) {
      /** @type {Record<string, any>} */
      const entry = {};
      for (const path of order) {
        log(`${step}: stream time to first byte at ${options.ttfbRate}/s, ${pathLabels[path]}`);
        const { serverPids } = processesOf(path, servers, true);
        const settings = { rate: options.ttfbRate, durationSeconds: options.durationSeconds, stream: true };
        entry[path] = await measureQuietly(options, () => measureFixedRate(targetFor(path, 'stream', true), serverPids, settings));
        completedByPath[path] += entry[path].completed;
      }
      entry.added = addedOver(entry, paths, ['firstByteP50Ms', 'firstByteP99Ms', 'p50Ms', 'p99Ms']);
      run.firstByte = entry;
    }
    runs.push(run);
  }
  return { runs, completedByPath };
}

/** @param {any[]} runs @param {string[]} kinds @param {PathName[]} paths */
export function mediansOf(runs, kinds, paths) {
  return {
    saturation: kinds.map((kind) => ({
      kind,
      ...medianOfPaths(
        runs.map((run) => run.saturation.find((/** @type {any} */ entry) => entry.kind === kind)),
        paths,
      ),
    })),
    fixedRate:
      runs[0].fixedRate === null
        ? null
        : medianOfPaths(
            runs.map((run) => run.fixedRate),
            paths,
          ),
    firstByte:
      runs[0].firstByte === null
        ? null
        : medianOfPaths(
            runs.map((run) => run.firstByte),
            paths,
          ),
  };
}

/**
 * Failed requests, disturbed runs and peak RSS that could not be reset, in the order the runs saw them.
 * @param {any[]} runs @param {PathName[]} paths @param {number} maxNoisePercent
 */
export function warningsOf(runs, paths, maxNoisePercent) {
  const warnings = [];
  for (const run of runs) {
    const parts = [
      ...run.saturation.map((/** @type {any} */ entry) => [`${entry.kind} saturation`, entry]),
      ['fixed-rate JSON', run.fixedRate],
      ['stream TTFB', run.firstByte],
    ];
    for (const [label, part] of parts) {
      if (part === null) continue;
      for (const path of paths) {
        if (part[path].failed > 0) warnings.push(`${label}, ${pathLabels[path]}: ${part[path].failed} failed requests`);
        if (part[path].noisePercent > maxNoisePercent) warnings.push(`${label}, ${pathLabels[path]}: ${describeNoise(part[path])}`);
        if (part[path].peakRssIsPerRun === false) warnings.push('peak RSS could not be reset between runs: it is the peak since start');
      }
    }
  }
  return warnings;
}
