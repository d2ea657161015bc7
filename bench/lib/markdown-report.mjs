/**
 * The report as Markdown: the tables printed at the end of a run and written
 * next to the JSON in the results directory.
 */
import { addedLabels, pathLabels, serverNames } from './measurement-paths.mjs';
import { format, ratio, signed } from './number-format.mjs';

/** @typedef {import('./measurement-paths.mjs').PathName} PathName */

/** @param {any} report */
export function markdownReport(report) {
  const { environment, settings, medians } = report;
  /** @type {PathName[]} */
  const paths = settings.paths;
  const proxies = paths.filter((path) => path !== 'direct');
  const lines = [];
  lines.push(`### taskgate overhead (${settings.repeat === 1 ? 'one run' : `medians of ${settings.repeat} runs`})`, '');
  lines.push(
    `Machine: ${environment.cpuModel}, ${environment.cores} cores, ${format(environment.memoryGigabytes, 0)} GB; Node ${environment.node}; ` +
      `taskgate ${environment.commit}${environment.sourceChanged ? ' (with uncommitted src/ changes)' : ''}; ` +
      `load generator: ${environment.loadGenerator}; load average at start ${environment.loadAverageAtStart}.`,
    '',
  );

  if (medians.saturation.length > 0) {
    lines.push(`**Saturation** (${settings.connections} connections, ${settings.durationSeconds} s, ${environment.loadGenerator.split(' ')[0]}):`, '');
    lines.push('| Load | Path | req/s | p50 ms | p99 ms | Server CPU µs/req | of which kernel | Mock CPU µs/req | Server peak RSS MB |');
    lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const entry of medians.saturation) {
      const label = entry.kind === 'json' ? 'JSON' : 'stream (23 events)';
      /** The spread of a figure over the repeats, to show how noisy the machine was. @param {PathName} path @param {string} field */
      const spread = (path, field) => {
        if (report.runs.length < 2) return '';
        const values = report.runs.map((/** @type {any} */ run) => run.saturation.find((/** @type {any} */ candidate) => candidate.kind === entry.kind)[path][field]);
        return ` [${format(Math.min(...values))}–${format(Math.max(...values))}]`;
      };
      for (const path of paths) {
        const figures = entry[path];
        const cpu = `${format(figures.serverCpuMicrosPerRequest)}${spread(path, 'serverCpuMicrosPerRequest')} (${serverNames[path]})`;
        lines.push(
          `| ${label} | ${pathLabels[path]} | ${format(figures.requestsPerSecond)}${spread(path, 'requestsPerSecond')} | ${format(figures.p50Ms, 2)} | ${format(figures.p99Ms, 2)} | ` +
            `${path === 'through' ? `**${cpu}**` : cpu} | ${format(figures.serverSystemMicrosPerRequest)} | ${figures.mockCpuMicrosPerRequest === null ? '—' : format(figures.mockCpuMicrosPerRequest)} | ` +
            `${format(figures.serverPeakRssMegabytes)} (${serverNames[path]}) |`,
        );
      }
      const { direct, through } = entry;
      lines.push(
        `| ${label} | through / direct | ${ratio(through.requestsPerSecond, direct.requestsPerSecond)} | ${ratio(through.p50Ms, direct.p50Ms)} | ${ratio(through.p99Ms, direct.p99Ms)} | ` +
          `${ratio(through.serverCpuMicrosPerRequest, direct.serverCpuMicrosPerRequest)} | ${ratio(through.serverSystemMicrosPerRequest, direct.serverSystemMicrosPerRequest)} | | ` +
          `${ratio(through.serverPeakRssMegabytes, direct.serverPeakRssMegabytes)} |`,
      );
    }
    const notes = [];
    if (report.runs.length > 1) notes.push('[min–max] over the runs.');
    if (paths.includes('bare')) {
      const own = medians.saturation
        .map((/** @type {any} */ entry) => `${entry.kind === 'json' ? 'JSON' : 'streams'} ${signed(entry.through.serverCpuMicrosPerRequest - entry.bare.serverCpuMicrosPerRequest)} µs`)
        .join(', ');
      notes.push(`taskgate's own work per call (its CPU minus the bare pass-through's): ${own}.`);
    }
    if (notes.length > 0) lines.push('', notes.join(' '));
    lines.push('');
  }

  if (medians.fixedRate !== null) {
    const figures = medians.fixedRate;
    lines.push(`**Fixed rate**, JSON, ${format(settings.rate)} req/s open loop (undici), ${settings.durationSeconds} s:`, '');
    lines.push('| Path | p50 ms | p99 ms | Server CPU µs/req at this rate |');
    lines.push('|---|---:|---:|---:|');
    for (const path of paths) {
      lines.push(`| ${pathLabels[path]} | ${format(figures[path].p50Ms, 3)} | ${format(figures[path].p99Ms, 3)} | ${format(figures[path].serverCpuMicrosPerRequest)} (${serverNames[path]}) |`);
    }
    for (const path of proxies) {
      const added = figures.added[path];
      const p50 = signed(added.p50Ms, 3);
      lines.push(`| ${addedLabels[path]} | ${path === 'through' ? `**${p50}**` : p50} | ${signed(added.p99Ms, 3)} | |`);
    }
    lines.push('');
  }

  if (medians.firstByte !== null) {
    const figures = medians.firstByte;
    lines.push(
      `**Time to first byte** of streams, ${format(settings.ttfbRate)} streams/s open loop (undici), mock with ${format(settings.ttfbGapMs)} ms between events:`,
      '',
    );
    lines.push('| Path | TTFB p50 ms | TTFB p99 ms | whole stream p50 ms | whole stream p99 ms |');
    lines.push('|---|---:|---:|---:|---:|');
    for (const path of paths) {
      const { firstByteP50Ms, firstByteP99Ms, p50Ms, p99Ms } = figures[path];
      lines.push(`| ${pathLabels[path]} | ${format(firstByteP50Ms, 3)} | ${format(firstByteP99Ms, 3)} | ${format(p50Ms, 1)} | ${format(p99Ms, 1)} |`);
    }
    for (const path of proxies) {
      const { firstByteP50Ms, firstByteP99Ms, p50Ms, p99Ms } = figures.added[path];
      lines.push(`| ${addedLabels[path]} | ${signed(firstByteP50Ms, 3)} | ${signed(firstByteP99Ms, 3)} | ${signed(p50Ms, 1)} | ${signed(p99Ms, 1)} |`);
    }
    lines.push('');
  }

  if (report.targets.length > 0) {
    lines.push('**Targets** (tracing on):', '');
    lines.push('| Target | Measured | Met |');
    lines.push('|---|---|---|');
    for (const target of report.targets) lines.push(`| ${target.target} | ${target.measured} | ${target.met ? 'yes' : '**no**'} |`);
    lines.push('');
  }
  for (const warning of report.warnings) lines.push(`> warning: ${warning}`);
  return lines.join('\n');
}
