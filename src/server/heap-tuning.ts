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
 *
 * What still survives two young collections (traces waiting for their batch,
 * calls in flight) is promoted, and V8 by default lets the old generation
 * grow to 2-4x what the last full collection kept before the next: 20 MB of
 * live objects became 60-80 MB of heap at saturation. A full collection due
 * at 1.3x costs no measurable CPU here (in turns: 0.99x JSON, 1.02x streams)
 * and holds the peak resident set some 30 MB lower. V8 reads this flag at
 * every collection, so setting it at run time works (unlike the
 * young-generation sizes, which are fixed when the heap is made).
 */
import { setFlagsFromString } from 'node:v8';

export function tuneHeapForServing(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
  setFlagsFromString('--heap-growing-percent=30');
}
