/**
 * taskgate's overhead targets, and whether the medians meet them.
 */
import { format, signed } from './number-format.mjs';

/**
 * @param {any} medians
 * @param {Awaited<ReturnType<typeof import('./export-cost.mjs').measureExportCost>> | null} exportCost
 * @param {import("./options.mjs").Options} options
 */
export function evaluateTargets(medians, exportCost, options) {
  const targets = [];
  const json = medians.saturation.find((/** @type {any} */ entry) => entry.kind === 'json');
  if (json !== undefined) {
    const cpu = json.through.serverCpuMicrosPerRequest;
    const baseline = json.bare === undefined ? '' : ` (bare pass-through: ${format(json.bare.serverCpuMicrosPerRequest)} µs)`;
    targets.push({ target: 'taskgate CPU per non-streamed call ≤ 150 µs (saturation)', measured: `${format(cpu)} µs${baseline}`, met: cpu <= 150 });
  }
  // Same run, same load: the CPU a span per call costs, with its export to a local OTLP sink (the A/B's median ratio).
  for (const { kind, ratio } of exportCost?.kinds ?? []) {
    const name = kind === 'json' ? 'non-streamed call' : 'stream';
    targets.push({ target: `taskgate CPU per ${name} with OTel export on ≤ 110% of export off (saturation, A/B)`, measured: `${format(100 * ratio, 1)}% (median of the rounds' on / off)`, met: ratio <= 1.1 });
  }
  if (medians.fixedRate !== null) {
    const added = medians.fixedRate.added.through.p50Ms;
    const baseline = medians.fixedRate.added.bare === undefined ? '' : ` (bare pass-through: ${signed(medians.fixedRate.added.bare.p50Ms, 3)} ms)`;
    targets.push({ target: `added p50 latency < 0.5 ms at ${format(options.rate)} req/s`, measured: `${signed(added, 3)} ms${baseline}`, met: added < 0.5 });
  }
  if (medians.firstByte !== null) {
    const { through, added: { through: addedTimes } } = medians.firstByte;
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
