#!/usr/bin/env node
/**
 * What a stream's first byte costs on cold caches, function by function, in
 * taskgate and in the bare pass-through side by side. Both run under
 * `node --cpu-prof`, sampling every 50 µs, while streams at 20 a second in
 * all are dealt to them in turns (as `npm run bench` takes the first byte).
 *
 * In each profile, a request's window runs from the first sample inside
 * Node's `parserOnIncoming` (the request's head parsed) to the next idle
 * sample: the request read, admitted, checked and sent to the engine, and
 * the process waiting for the engine's reply. Each function's self time in
 * the windows, per request, is printed for both servers, with the windows'
 * busy time. Functions both run (Node's HTTP, undici) show whether the
 * process is colder; the rest is what taskgate adds.
 *
 *   npm run build && node bench/first-byte-profile.mjs [--seconds 60] [--top 40]
 *
 * Sampling this often slows both servers (their first bytes are printed, for
 * reference only); compare the two columns, not with the bench. Sends
 * traffic only to 127.0.0.1.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stopChild, withMockEngine } from './lib/child-processes.mjs';
import { firstByteInTurns } from './lib/first-byte-in-turns.mjs';
import { startBesideBare } from './lib/start-beside-bare.mjs';
import { percentile } from './lib/statistics.mjs';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' }, top: { type: 'string', default: '40' } } });
const seconds = Number(values.seconds);
const top = Number(values.top);
if (!Number.isFinite(seconds) || seconds < 20) throw new Error(`--seconds must be a number >= 20, got ${values.seconds}`);
if (!Number.isInteger(top) || top < 1) throw new Error(`--top must be a whole number >= 1, got ${values.top}`);

/** @param {string} directory */
const profilerFlags = (directory) => ['--cpu-prof', '--cpu-prof-interval', '50', '--cpu-prof-dir', directory];

/**
 * @typedef {{ id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }} ProfileNode
 * @typedef {{ windows: number, busyMean: number, busyP50: number, selfPerRequest: Map<string, number> }} Windows
 */

/** A function as printed: its name and where it is (dist/, node_modules/ or Node's own module). @param {ProfileNode['callFrame']} frame */
function labelOf(frame) {
  const where = frame.url.replace(/^.*\/(dist|node_modules)\//, '$1/').replace(/^node:/, '');
  return `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`;
}

/** The request windows of one profile, as described above. @param {string} path @returns {Windows} */
function windowsOf(path) {
  const profile = JSON.parse(readFileSync(path, 'utf8'));
  /** @type {Map<number, ProfileNode>} */
  const nodes = new Map(profile.nodes.map((/** @type {ProfileNode} */ node) => [node.id, node]));
  /** @type {Map<number, number>} */
  const parents = new Map();
  for (const node of nodes.values()) for (const child of node.children ?? []) parents.set(child, node.id);
  /** @type {Map<number, boolean>} */
  const underParser = new Map();
  /** @param {number} id @returns {boolean} */
  const isUnderParser = (id) => {
    let known = underParser.get(id);
    if (known === undefined) {
      const parent = parents.get(id);
      known = nodes.get(id)?.callFrame.functionName === 'parserOnIncoming' || (parent !== undefined && isUnderParser(parent));
      underParser.set(id, known);
    }
    return known;
  };
  /** @type {Map<string, number>} */
  const self = new Map();
  /** @type {number[]} */
  const busy = [];
  let open = false;
  for (let index = 0; index < profile.samples.length; index++) {
    const id = profile.samples[index];
    const frame = /** @type {ProfileNode} */ (nodes.get(id)).callFrame;
    if (!open && !isUnderParser(id)) continue;
    if (frame.functionName === '(idle)') {
      open = false;
      continue;
    }
    if (!open) busy.push(0);
    open = true;
    const microseconds = profile.timeDeltas[index + 1] ?? 0;
    busy[busy.length - 1] += microseconds;
    const label = labelOf(frame);
    self.set(label, (self.get(label) ?? 0) + microseconds);
  }
  const windows = busy.length;
  for (const [label, total] of self) self.set(label, total / Math.max(1, windows));
  return {
    windows,
    busyMean: busy.reduce((sum, value) => sum + value, 0) / Math.max(1, windows),
    busyP50: percentile(busy, 50),
    selfPerRequest: self,
  };
}

/** The one profile a server wrote into its directory. @param {string} directory */
function profileIn(directory) {
  const files = readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length !== 1) throw new Error(`expected one CPU profile in ${directory}, found ${files.length}`);
  return join(directory, /** @type {string} */ (files[0]));
}

await withMockEngine({ name: 'first-byte-profile', gapMs: 20 }, async (setup) => {
  const profiles = { bare: join(setup.directory, 'bare-profile'), taskgate: join(setup.directory, 'taskgate-profile') };
  for (const profileDirectory of Object.values(profiles)) mkdirSync(profileDirectory);
  const { children, streams } = await startBesideBare(setup, {
    label: 'first-byte-profile',
    bareFlags: profilerFlags(profiles.bare),
    taskgateFlags: profilerFlags(profiles.taskgate),
  });
  const firstBytes = await firstByteInTurns(streams, { rate: 10, seconds, warmUp: 100 });
  // A profile is written as its process exits.
  for (const { child } of children) await stopChild(child, 10_000);
  const [bareWindows, taskgateWindows] = [windowsOf(profileIn(profiles.bare)), windowsOf(profileIn(profiles.taskgate))];

  const at = (/** @type {number} */ value) => value.toFixed(1).padStart(7);
  console.log(`Request windows (head parsed -> idle), sampled every 50 µs; ${seconds} s at 10 streams/s each`);
  for (const [name, windows, firstByte] of /** @type {const} */ ([
    ['pass-through', bareWindows, firstBytes[0]],
    ['taskgate', taskgateWindows, firstBytes[1]],
  ])) {
    const ownCode = [...windows.selfPerRequest].filter(([label]) => label.includes(' dist/')).reduce((sum, [, value]) => sum + value, 0);
    console.log(
      `${name.padEnd(13)} ${windows.windows} windows, busy µs mean ${at(windows.busyMean)}, p50 ${at(windows.busyP50)}; in dist/ ${at(ownCode)}` +
        `; first byte p50 ${firstByte === undefined ? '-' : firstByte.p50Ms.toFixed(3)} ms (under the profiler)`,
    );
  }
  const byCost = [...bareWindows.selfPerRequest, ...taskgateWindows.selfPerRequest].sort((one, other) => other[1] - one[1]);
  const labels = [...new Set(byCost.map(([label]) => label))].slice(0, top);
  console.log(`\nSelf µs per request   pass-through   taskgate   function`);
  for (const label of labels) {
    console.log(
      `                      ${at(bareWindows.selfPerRequest.get(label) ?? 0)}      ${at(taskgateWindows.selfPerRequest.get(label) ?? 0)}   ${label}`,
    );
  }
});
