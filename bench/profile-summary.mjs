#!/usr/bin/env node
/**
 * Summarises a V8 CPU profile (`node --cpu-prof`) of taskgate: where the main
 * thread's busy time went, by category (taskgate's code, dependencies, Node's
 * internals, native work and GC) and by function, self time only. taskgate's
 * own functions are mapped back from dist/ to their src/*.ts line through the
 * source maps tsc writes next to each file.
 *
 *   node bench/profile-summary.mjs PROFILE.cpuprofile [--top N]
 *
 * `bench/overhead.mjs --cpu-prof DIR` prints the same summary for the profile
 * it records.
 */
import { readFileSync, existsSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/**
 * @typedef {object} FunctionCost
 * @property {string} name
 * @property {string} location   src/…:line for taskgate's code, else the script and line
 * @property {'taskgate' | 'dependency' | 'node' | 'native'} category
 * @property {number} samples      self samples
 * @property {number} percent      self time, % of the busy (non-idle) samples
 * @property {number} totalPercent self time plus the time of everything it called, % of the busy samples
 */

/**
 * @typedef {object} ProfileSummary
 * @property {number} busySamples
 * @property {number} idleSamples
 * @property {number} sampleIntervalMicros
 * @property {Record<string, number>} categoryPercent
 * @property {FunctionCost[]} functions   every function with self time, most expensive first
 */

/**
 * @param {string} profilePath
 * @param {{ repositoryRoot?: string }} [options]
 * @returns {ProfileSummary}
 */
export function summariseProfile(profilePath, options = {}) {
  const repositoryRoot = options.repositoryRoot ?? fileURLToPath(new URL('..', import.meta.url));
  const distUrl = pathToFileURL(resolve(repositoryRoot, 'dist')).href;
  const profile = JSON.parse(readFileSync(profilePath, 'utf8'));

  /** Samples per node id: each sample is one interval of the main thread spent in that node (self time). */
  const samplesByNode = new Map();
  for (const id of profile.samples) samplesByNode.set(id, (samplesByNode.get(id) ?? 0) + 1);

  /** @type {Map<string, SourceMap | null>} */
  const sourceMaps = new Map();
  /** @param {string} url */
  function sourceMapFor(url) {
    if (!sourceMaps.has(url)) {
      const mapPath = `${fileURLToPath(url)}.map`;
      sourceMaps.set(url, existsSync(mapPath) ? new SourceMap(JSON.parse(readFileSync(mapPath, 'utf8'))) : null);
    }
    return sourceMaps.get(url) ?? null;
  }

  /** @type {Map<number, any>} */
  const nodesById = new Map(profile.nodes.map((/** @type {any} */ node) => [node.id, node]));
  /** @type {Map<string, FunctionCost>} */
  const byFunction = new Map();
  /** The function each node belongs to (its key in `byFunction`), or null for (idle). */
  /** @type {Map<number, string | null>} */
  const keyOfNode = new Map();
  let idleSamples = 0;
  let busySamples = 0;
  for (const node of profile.nodes) {
    const samples = samplesByNode.get(node.id) ?? 0;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idleSamples += samples;
      keyOfNode.set(node.id, null);
      continue;
    }
    busySamples += samples;
    /** @type {FunctionCost['category']} */
    let category;
    let location;
    if (url.startsWith(distUrl) && !url.includes('/node_modules/')) {
      category = 'taskgate';
      location = sourceLocation(url, lineNumber, columnNumber, sourceMapFor(url), repositoryRoot);
    } else if (url.includes('/node_modules/')) {
      category = 'dependency';
      location = `${url.slice(url.lastIndexOf('/node_modules/') + 14)}:${lineNumber + 1}`;
    } else if (url.startsWith('node:') || (url !== '' && !url.startsWith('file:'))) {
      category = 'node';
      location = `${url}:${lineNumber + 1}`;
    } else {
      // (program), (garbage collector), (root), and native functions without a script.
      category = 'native';
      location = url === '' ? '(native)' : url;
    }
    const name = functionName === '' ? '(anonymous)' : functionName;
    const key = `${name}\u0000${location}`;
    keyOfNode.set(node.id, key);
    const entry = byFunction.get(key) ?? { name, location, category, samples: 0, percent: 0, totalPercent: 0 };
    entry.samples += samples;
    byFunction.set(key, entry);
  }

  // Total (inclusive) time: each node's samples count once for every distinct
  // function on its stack, so a recursive function is not counted twice.
  /** @type {Map<string, number>} */
  const totalSamples = new Map();
  /** @type {Array<{ id: number, leaving: boolean }>} */
  const work = [{ id: profile.nodes[0].id, leaving: false }];
  /** @type {Map<string, number>} how many times each function is on the current stack */
  const onStack = new Map();
  // Each node is entered and left once: the loop is bounded by twice the node count.
  for (let steps = 0; work.length > 0 && steps <= 2 * profile.nodes.length; steps++) {
    const { id, leaving } = /** @type {{ id: number, leaving: boolean }} */ (work.pop());
    const key = keyOfNode.get(id) ?? null;
    if (leaving) {
      if (key !== null) onStack.set(key, (onStack.get(key) ?? 1) - 1);
      continue;
    }
    if (key !== null) onStack.set(key, (onStack.get(key) ?? 0) + 1);
    const samples = samplesByNode.get(id) ?? 0;
    if (samples > 0 && key !== null) {
      for (const [stackKey, count] of onStack) if (count > 0) totalSamples.set(stackKey, (totalSamples.get(stackKey) ?? 0) + samples);
    }
    work.push({ id, leaving: true });
    for (const child of nodesById.get(id)?.children ?? []) work.push({ id: child, leaving: false });
  }
  for (const [key, samples] of totalSamples) {
    const entry = byFunction.get(key);
    if (entry !== undefined) entry.totalPercent = (samples / Math.max(1, busySamples)) * 100;
  }

  const functions = [...byFunction.values()].filter((entry) => entry.samples > 0).sort((a, b) => b.samples - a.samples);
  /** @type {Record<string, number>} */
  const categoryPercent = { taskgate: 0, dependency: 0, node: 0, native: 0 };
  for (const entry of functions) {
    entry.percent = (entry.samples / Math.max(1, busySamples)) * 100;
    categoryPercent[entry.category] += entry.percent;
  }
  const totalMicros = profile.endTime - profile.startTime;
  return {
    busySamples,
    idleSamples,
    sampleIntervalMicros: totalMicros / Math.max(1, profile.samples.length),
    categoryPercent,
    functions,
  };
}

/**
 * `src/…/file.ts:line` of a function in dist/ (the profile's positions are 0-based).
 * @param {string} url @param {number} line @param {number} column @param {SourceMap | null} map @param {string} repositoryRoot
 */
function sourceLocation(url, line, column, map, repositoryRoot) {
  const generatedPath = fileURLToPath(url);
  if (map !== null && line >= 0) {
    const entry = map.findEntry(line, Math.max(0, column));
    if (entry !== null && typeof entry === 'object' && 'originalSource' in entry && entry.originalSource) {
      const source = resolve(dirname(generatedPath), entry.originalSource);
      return `${relative(repositoryRoot, source)}:${entry.originalLine + 1}`;
    }
  }
  return `${relative(repositoryRoot, generatedPath)}:${line + 1}`;
}

/**
 * @param {ProfileSummary} summary
 * @param {{ top?: number }} [options]
 */
export function formatProfileSummary(summary, options = {}) {
  const top = options.top ?? 15;
  const lines = [];
  const busyMs = (summary.busySamples * summary.sampleIntervalMicros) / 1000;
  lines.push(
    `main thread busy ${Math.round(busyMs)} ms (${summary.busySamples} samples of ~${Math.round(summary.sampleIntervalMicros)} µs; idle ${summary.idleSamples}); ` +
      `self time by category: ${Object.entries(summary.categoryPercent)
        .map(([category, percent]) => `${category} ${percent.toFixed(1)}%`)
        .join(', ')}`,
  );
  lines.push('', `Top ${top} functions by self time (all code):`, '', '| Self % | Function | Where |', '|---:|---|---|');
  for (const entry of summary.functions.slice(0, top)) lines.push(`| ${entry.percent.toFixed(1)} | ${entry.name} | ${entry.location} |`);
  lines.push('', `Top ${top} taskgate functions by self time:`, '', '| Self % | Total % | Function | Where |', '|---:|---:|---|---|');
  for (const entry of summary.functions.filter((candidate) => candidate.category === 'taskgate').slice(0, top)) {
    lines.push(`| ${entry.percent.toFixed(1)} | ${entry.totalPercent.toFixed(1)} | ${entry.name} | ${entry.location} |`);
  }
  /** @type {Map<string, number>} */
  const byFile = new Map();
  for (const entry of summary.functions) {
    if (entry.category !== 'taskgate') continue;
    const file = entry.location.replace(/:\d+$/, '');
    byFile.set(file, (byFile.get(file) ?? 0) + entry.percent);
  }
  lines.push('', 'taskgate self time by file:', '', '| Self % | File |', '|---:|---|');
  for (const [file, percent] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`| ${percent.toFixed(1)} | ${file} |`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '15' } } });
  const profilePath = positionals[0];
  if (profilePath === undefined) {
    process.stderr.write('Usage: node bench/profile-summary.mjs PROFILE.cpuprofile [--top N]\n');
    process.exit(2);
  }
  process.stdout.write(`${formatProfileSummary(summariseProfile(profilePath), { top: Number(values.top) || 15 })}\n`);
}
