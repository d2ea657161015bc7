/**
 * V8 settings of a serving process, given on node's command line as it
 * starts: `taskgate serve` started without them serves from a child process
 * that has them (`cli/relaunch-with-flags.ts`), `npm start` and the benchmark
 * give them themselves, and the workers of `serve --workers` are forked with
 * them (`cluster/worker-fleet.ts`). Node documents changing V8 flags after
 * start (`v8.setFlagsFromString`) as unpredictable, and NODE_OPTIONS does not
 * take these two.
 *
 * A call's objects live for milliseconds, but V8's allocation-site
 * pretenuring, having seen some of them survive a young collection under
 * load, moves whole allocation sites to the old generation: the old
 * generation then fills with garbage only a full collection frees. At
 * saturation the heap climbed from 23 to 95 MB between full collections with
 * it, and stayed at 23-34 MB without it, for half the main thread's GC time
 * and 5-10 % less CPU a call (docs/benchmarks.md).
 *
 * What still survives two young collections (traces waiting for their batch,
 * calls in flight) is promoted, and V8 by default lets the old generation
 * grow to 2-4x what the last full collection kept before the next: 20 MB of
 * live objects became 60-80 MB of heap at saturation. A full collection due
 * at 1.3x costs no measurable CPU here and holds the peak resident set some
 * 30 MB lower (measured: docs/benchmarks.md).
 */

/** The flags, as node takes them on its command line (before the script). */
export const heapTuningFlags: readonly string[] = ['--no-allocation-site-pretenuring', '--heap-growing-percent=30'];

/**
 * Those of `heapTuningFlags` that node's own options (`process.execArgv`) do
 * not set, either way: an operator who starts node with, say,
 * `--heap-growing-percent=50` or `--allocation-site-pretenuring` keeps it.
 */
export function missingHeapTuningFlags(execArgv: readonly string[]): string[] {
  const given = new Set(execArgv.map(v8FlagName));
  return heapTuningFlags.filter((flag) => !given.has(v8FlagName(flag)));
}

/** `--no-allocation-site-pretenuring`, `--allocation_site_pretenuring`, `--heap-growing-percent=30` -> the flag's name, as V8 spells it either way. */
function v8FlagName(argument: string): string {
  const name = (argument.replace(/^--?/, '').split('=', 1)[0] ?? '').replaceAll('_', '-');
  return name.replace(/^no-?/, '');
}
