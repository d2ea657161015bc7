/**
 * taskgate's overhead targets, and whether the medians meet them. The hot
 * path's are relative to the bare pass-through measured in the same run (a
 * machine twice as slow makes both twice as dear); without it (`--skip-baseline`)
 * they are left out, and the report says so.
 */
import { format, signed } from './number-format.mjs';
import { median } from './statistics.mjs';

/** RSS at the end of the growth run, at most this much above its start. */
const GROWTH_RATIO = 1.1;
/** Server CPU per call, at most this many times the pass-through's. */
const CPU_RATIO = 2;
/** Stream time to first byte, p50, at most this much above the pass-through's. */
const TTFB_OVER_MS = 0.2;
/** Added p50 at the fixed rate, at most this much above the pass-through's. */
const ADDED_P50_OVER_MS = 0.3;
const PEAK_RSS_MB = 160;

/**
 * @param {any} medians
 * @param {Awaited<ReturnType<typeof import('./against-bare.mjs').measureAgainstBare>> | null} againstBare
 * @param {Awaited<ReturnType<typeof import('./memory-growth.mjs').measureMemoryGrowth>> | null} growth
 * @param {Awaited<ReturnType<typeof import('./export-cost.mjs').measureExportCost>> | null} exportCost
 * @param {import("./options.mjs").Options} options
 */
export function evaluateTargets(medians, againstBare, growth, exportCost, options) {
  const targets = [];
  // In turns when wrk could take them (the precise figure), else from the saturation table.
  for (const entry of againstBare?.kinds ?? []) {
    const name = entry.kind === 'json' ? 'non-streamed call' : 'stream';
    targets.push({
      target: `taskgate CPU per ${name} ≤ ${CPU_RATIO}.0× the bare pass-through's (saturation, in turns)`,
      measured: `${format(median(entry.taskgate))} µs against ${format(median(entry.bare))} µs: ${format(entry.ratio, 2)}× (median of ${entry.ratios.length} rounds' ratios, [${format(Math.min(...entry.ratios), 2)}–${format(Math.max(...entry.ratios), 2)}])`,
      met: entry.ratio <= CPU_RATIO,
    });
  }
  for (const entry of againstBare === null ? medians.saturation : []) {
    const name = entry.kind === 'json' ? 'non-streamed call' : 'stream';
    const cpu = entry.through.serverCpuMicrosPerRequest;
    if (entry.bare === undefined) continue;
    const bare = entry.bare.serverCpuMicrosPerRequest;
    targets.push({
      target: `taskgate CPU per ${name} ≤ ${CPU_RATIO}.0× the bare pass-through's (saturation)`,
      measured: `${format(cpu)} µs against ${format(bare)} µs: ${format(cpu / bare, 2)}×`,
      met: cpu <= CPU_RATIO * bare,
    });
  }
  const peakRss = Math.max(...medians.saturation.map((/** @type {any} */ entry) => entry.through.serverPeakRssMegabytes));
  if (Number.isFinite(peakRss))
    targets.push({
      target: `taskgate peak RSS ≤ ${PEAK_RSS_MB} MB (saturation)`,
      measured: `${format(peakRss)} MB`,
      met: peakRss <= PEAK_RSS_MB,
    });
  if (growth !== null) {
    targets.push({
      target: `no memory growth under ${format(growth.seconds / 60, 1)} minutes of saturation (RSS at the end ≤ ${format(100 * (GROWTH_RATIO - 1))}% over its start)`,
      measured: `${format(growth.startMegabytes)} MB at the start, ${format(growth.endMegabytes)} MB at the end (peak ${format(growth.peakMegabytes)} MB, ${format(growth.calls)} calls)`,
      met: growth.endMegabytes <= GROWTH_RATIO * growth.startMegabytes,
    });
  }
  // Same run, same load: the CPU a span per call costs, with its export to a local OTLP sink (the A/B's median ratio).
  for (const { kind, ratio } of exportCost?.kinds ?? []) {
    const name = kind === 'json' ? 'non-streamed call' : 'stream';
    targets.push({
      target: `taskgate CPU per ${name} with OTel export on ≤ 110% of export off (saturation, A/B)`,
      measured: `${format(100 * ratio, 1)}% (median of the rounds' on / off)`,
      met: ratio <= 1.1,
    });
  }
  if (medians.fixedRate !== null && medians.fixedRate.added.bare !== undefined) {
    const added = medians.fixedRate.added.through.p50Ms;
    const bare = medians.fixedRate.added.bare.p50Ms;
    targets.push({
      target: `added p50 latency at ${format(options.rate)} req/s ≤ ${ADDED_P50_OVER_MS} ms over the bare pass-through's`,
      measured: `${signed(added, 3)} ms against ${signed(bare, 3)} ms: ${signed(added - bare, 3)} ms`,
      met: added - bare <= ADDED_P50_OVER_MS,
    });
  }
  const inTurns = againstBare?.firstByte ?? null;
  if (inTurns !== null) {
    const over = inTurns.taskgate.p50Ms - inTurns.bare.p50Ms;
    targets.push({
      target: `stream time to first byte, p50, within ${TTFB_OVER_MS} ms of the bare pass-through's (in turns)`,
      measured: `${format(inTurns.taskgate.p50Ms, 3)} ms against ${format(inTurns.bare.p50Ms, 3)} ms: ${signed(over, 3)} ms (${format(inTurns.taskgate.streams)} streams each)`,
      met: over <= TTFB_OVER_MS,
    });
  }
  if (medians.firstByte !== null) {
    const {
      through,
      added: { through: addedTimes },
    } = medians.firstByte;
    // Without the run in turns (no pass-through, or --ttfb-turns-seconds 0): the paths' own runs, one after the other.
    if (medians.firstByte.bare !== undefined && inTurns === null) {
      const over = through.firstByteP50Ms - medians.firstByte.bare.firstByteP50Ms;
      targets.push({
        target: `stream time to first byte, p50, within ${TTFB_OVER_MS} ms of the bare pass-through's`,
        measured: `${format(through.firstByteP50Ms, 3)} ms against ${format(medians.firstByte.bare.firstByteP50Ms, 3)} ms: ${signed(over, 3)} ms`,
        met: over <= TTFB_OVER_MS,
      });
    }
    // A stall is the first event held back: until a later event arrives (at least one gap,
    // `--ttfb-gap-ms`), until the whole reply is in, or by Nagle and delayed ACKs (40 ms).
    // Each shows as added TTFB far above taskgate's per-call cost, so: p50 under 2 ms, p99 under half a gap.
    const p99Limit = options.ttfbGapMs / 2;
    targets.push({
      target: `no stall in stream TTFB (added p50 < 2 ms, added p99 < ${format(p99Limit, 0)} ms, with ${format(options.ttfbGapMs, 0)} ms between events)`,
      measured: `${signed(addedTimes.firstByteP50Ms, 2)} ms p50, ${signed(addedTimes.firstByteP99Ms, 2)} ms p99 (whole stream ${format(through.p50Ms, 0)} ms)`,
      met: addedTimes.firstByteP50Ms < 2 && addedTimes.firstByteP99Ms < p99Limit,
    });
  }
  return targets;
}
