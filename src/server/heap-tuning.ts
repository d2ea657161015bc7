/**
 * V8 settings for a serving process, applied as it starts (`serve` and each
 * worker of `serve --workers`).
 *
 * A call's objects live for milliseconds, but V8's allocation-site
 * pretenuring, having seen some of them survive a young collection under
 * load, moves whole allocation sites to the old generation: the old
 * generation then fills with garbage only a full collection frees. At
 * saturation the heap climbed from 23 to 95 MB between full collections with
 * it, and stayed at 23-34 MB without it, for half the main thread's GC time
 * and 5-10 % less CPU a call (docs/benchmarks.md).
 */
import { setFlagsFromString } from 'node:v8';

export function tuneHeapForServing(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
