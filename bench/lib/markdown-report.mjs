/**
 * The report as Markdown: the tables printed at the end of a run and written
 * next to the JSON in the results directory.
 */
import { addedLabels, pathLabels, serverNames } from './measurement-paths.mjs';
import { format, ratio, signed } from './number-format.mjs';
import { median } from './statistics.mjs';

/** @typedef {import('./measurement-paths.mjs').PathName} PathName */

/** @param {any} report */
export function markdownReport(report) {
  const { environment, settings, medians } = report;
  /** @type {PathName[]} */
  const paths = settings.paths;
  const proxies = paths.filter((path) => path !== 'direct');
  const hasShared = paths.includes('shared') || paths.includes('fleet');
  /** Rows whose server is taskgate: their CPU is in bold. */
  const taskgatePaths = ['through', 'shared', 'fleet'];
  const lines = [];
  lines.push(`### taskgate overhead (${settings.repeat === 1 ? 'one run' : `medians of ${settings.repeat} runs`})`, '');
  lines.push(
    `Machine: ${environment.cpuModel}, ${environment.cores} cores, ${format(environment.memoryGigabytes, 0)} GB; Node ${environment.node}; ` +
      `taskgate ${environment.commit}${environment.sourceChanged ? ' (with uncommitted src/ changes)' : ''}; ` +
      `load generator: ${environment.loadGenerator}; load average at start ${environment.loadAverageAtStart}.`,
    '',
  );
  const shared = report.shared ?? { skipped: null };
  if (hasShared) {
    lines.push(
      `PostgreSQL + Redis rows: ${shared.processes} taskgate processes on one fresh database (${shared.postgres}) and Redis ${shared.redis}, ` +
        `each on its own port, with the same config and admin key. The one-process row is process 1 alone (the other two running, idle); ` +
        `the ${shared.processes}-process row spreads the load evenly over all of them (connections, and fixed-rate requests, in turn)` +
        `${shared.routerLeader == null ? '' : `; process ${shared.routerLeader} led the router`}.`,
      '',
    );
  }

  if (medians.saturation.length > 0) {
    lines.push(
      `**Saturation** (${settings.connections} connections, ${settings.durationSeconds} s, ${environment.loadGenerator.split(' ')[0]}):`,
      '',
    );
    lines.push(
      `| Load | Path | req/s | p50 ms | p99 ms | Server CPU µs/req | of which kernel | Mock CPU µs/req |${hasShared ? ' PostgreSQL / Redis CPU µs/req |' : ''} Server peak RSS MB |`,
    );
    lines.push(`|---|---|---:|---:|---:|---:|---:|---:|${hasShared ? '---:|' : ''}---:|`);
    const backendCell = (/** @type {any} */ figures) =>
      hasShared
        ? figures.postgresCpuMicrosPerRequest === undefined && figures.redisCpuMicrosPerRequest === undefined
          ? ' — |'
          : ` ${figures.postgresCpuMicrosPerRequest == null ? 'n/a' : format(figures.postgresCpuMicrosPerRequest)} / ${figures.redisCpuMicrosPerRequest == null ? 'n/a' : format(figures.redisCpuMicrosPerRequest)} |`
        : '';
    for (const entry of medians.saturation) {
      const label = entry.kind === 'json' ? 'JSON' : 'stream (23 events)';
      /** The spread of a figure over the repeats, to show how noisy the machine was. @param {PathName} path @param {string} field */
      const spread = (path, field) => {
        if (report.runs.length < 2) return '';
        const values = report.runs.map(
          (/** @type {any} */ run) => run.saturation.find((/** @type {any} */ candidate) => candidate.kind === entry.kind)[path][field],
        );
        return ` [${format(Math.min(...values))}–${format(Math.max(...values))}]`;
      };
      for (const path of paths) {
        const figures = entry[path];
        const cpu = `${format(figures.serverCpuMicrosPerRequest)}${spread(path, 'serverCpuMicrosPerRequest')} (${serverNames[path]})`;
        const backends = path === 'shared' || path === 'fleet' ? backendCell(figures) : hasShared ? ' — |' : '';
        lines.push(
          `| ${label} | ${pathLabels[path]} | ${format(figures.requestsPerSecond)}${spread(path, 'requestsPerSecond')} | ${format(figures.p50Ms, 2)} | ${format(figures.p99Ms, 2)} | ` +
            `${taskgatePaths.includes(path) ? `**${cpu}**` : cpu} | ${format(figures.serverSystemMicrosPerRequest)} | ${figures.mockCpuMicrosPerRequest === null ? '—' : format(figures.mockCpuMicrosPerRequest)} |` +
            `${backends} ${format(figures.serverPeakRssMegabytes)} (${serverNames[path]}) |`,
        );
      }
      /** A row of ratios between two paths. @param {string} name @param {any} top @param {any} bottom */
      const ratioRow = (name, top, bottom) =>
        `| ${label} | ${name} | ${ratio(top.requestsPerSecond, bottom.requestsPerSecond)} | ${ratio(top.p50Ms, bottom.p50Ms)} | ${ratio(top.p99Ms, bottom.p99Ms)} | ` +
        `${ratio(top.serverCpuMicrosPerRequest, bottom.serverCpuMicrosPerRequest)} | ${ratio(top.serverSystemMicrosPerRequest, bottom.serverSystemMicrosPerRequest)} | |${hasShared ? ' |' : ''} ` +
        `${ratio(top.serverPeakRssMegabytes, bottom.serverPeakRssMegabytes)} |`;
      lines.push(ratioRow('through / direct', entry.through, entry.direct));
      if (entry.shared !== undefined)
        lines.push(ratioRow('PostgreSQL + Redis / SQLite + memory (1 process each)', entry.shared, entry.through));
      if (entry.shared !== undefined && entry.fleet !== undefined)
        lines.push(ratioRow(`${shared.processes} processes / 1 process (PostgreSQL + Redis)`, entry.fleet, entry.shared));
    }
    const notes = [];
    if (report.runs.length > 1) notes.push('[min–max] over the runs.');
    if (paths.includes('bare')) {
      const own = medians.saturation
        .map(
          (/** @type {any} */ entry) =>
            `${entry.kind === 'json' ? 'JSON' : 'streams'} ${signed(entry.through.serverCpuMicrosPerRequest - entry.bare.serverCpuMicrosPerRequest)} µs`,
        )
        .join(', ');
      notes.push(`taskgate's own work per call (its CPU minus the bare pass-through's): ${own}.`);
    }
    if (hasShared) notes.push(...sharedNotes(report));
    if (notes.length > 0) lines.push('', notes.join(' '));
    lines.push('');
  }

  if (medians.fixedRate !== null) {
    const figures = medians.fixedRate;
    lines.push(`**Fixed rate**, JSON, ${format(settings.rate)} req/s open loop (undici), ${settings.durationSeconds} s:`, '');
    lines.push('| Path | p50 ms | p99 ms | Server CPU µs/req at this rate |');
    lines.push('|---|---:|---:|---:|');
    for (const path of paths) {
      lines.push(
        `| ${pathLabels[path]} | ${format(figures[path].p50Ms, 3)} | ${format(figures[path].p99Ms, 3)} | ${format(figures[path].serverCpuMicrosPerRequest)} (${serverNames[path]}) |`,
      );
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
      lines.push(
        `| ${pathLabels[path]} | ${format(firstByteP50Ms, 3)} | ${format(firstByteP99Ms, 3)} | ${format(p50Ms, 1)} | ${format(p99Ms, 1)} |`,
      );
    }
    for (const path of proxies) {
      const { firstByteP50Ms, firstByteP99Ms, p50Ms, p99Ms } = figures.added[path];
      lines.push(
        `| ${addedLabels[path]} | ${signed(firstByteP50Ms, 3)} | ${signed(firstByteP99Ms, 3)} | ${signed(p50Ms, 1)} | ${signed(p99Ms, 1)} |`,
      );
    }
    lines.push('');
  }

  if (report.againstBare != null) lines.push(...againstBareLines(report.againstBare), '');
  const undici = report.undiciTransport;
  if (report.againstBare != null && undici != null && undici.skipped === null)
    lines.push(...transportLines(report.againstBare, undici), '');
  if (report.growth != null) {
    const { growth } = report;
    lines.push(
      `**Memory under sustained load**: taskgate (SQLite + memory) saturated for ${format(growth.seconds)} s (JSON and streams at once, ${format(growth.calls)} calls); ` +
        `RSS MB every 10 s: ${growth.samples.map((/** @type {{ rssMegabytes: number }} */ sample) => format(sample.rssMegabytes)).join(', ')}.`,
      '',
    );
  }
  if (report.exportCost != null) lines.push(...exportCostLines(report.exportCost), '');

  if (report.targets.length > 0) {
    lines.push("**Targets** (tracing on; taskgate's default transport, http1):", '');
    lines.push('| Target | Measured | Met |');
    lines.push('|---|---|---|');
    for (const target of report.targets) lines.push(`| ${target.target} | ${target.measured} | ${target.met ? 'yes' : '**no**'} |`);
    lines.push('');
  }
  if (shared.skipped !== null && shared.skipped !== undefined) lines.push(`> PostgreSQL + Redis rows not measured: ${shared.skipped}`);
  if (undici != null && undici.skipped != null) lines.push(`> undici transport (reference) not measured: ${undici.skipped}`);
  for (const warning of report.warnings) lines.push(`> warning: ${warning}`);
  return lines.join('\n');
}

/**
 * What the PostgreSQL + Redis rows mean, under the saturation table.
 * @param {any} report
 */
function sharedNotes(report) {
  const { environment, settings, medians } = report;
  const count = report.shared.processes;
  const notes = [];
  /** @param {any} entry */
  const kindName = (entry) => (entry.kind === 'json' ? 'JSON' : 'streams');
  const withShared = medians.saturation.filter((/** @type {any} */ entry) => entry.shared !== undefined);
  if (withShared.length > 0) {
    const extra = withShared
      .map(
        (/** @type {any} */ entry) =>
          `${kindName(entry)} ${signed(entry.shared.serverCpuMicrosPerRequest - entry.through.serverCpuMicrosPerRequest)} µs`,
      )
      .join(', ');
    notes.push(`taskgate's CPU per call on PostgreSQL + Redis minus on SQLite + memory (one process each): ${extra}.`);
    const backends = withShared
      .map((/** @type {any} */ entry) => {
        const { postgresCpuMicrosPerRequest: postgres, redisCpuMicrosPerRequest: redis } = entry.shared;
        return `${kindName(entry)} ${postgres == null ? 'n/a' : format(postgres)} µs in PostgreSQL and ${redis == null ? 'n/a' : format(redis)} µs in Redis`;
      })
      .join(', ');
    notes.push(
      `Besides taskgate's own CPU, each call of the one-process row cost ${backends} ` +
        "(the bench database's backends; all of redis-server, which other clients on the machine may also use).",
    );
    const idle = withShared
      .filter((/** @type {any} */ entry) => entry.shared.idleCpuMicrosPerRequest != null)
      .map((/** @type {any} */ entry) => `${kindName(entry)} ${format(entry.shared.idleCpuMicrosPerRequest)} µs`);
    if (idle.length > 0) notes.push(`Its ${count - 1} idle siblings used, per call it answered: ${idle.join(', ')}.`);
  }
  const fleet = medians.saturation.find((/** @type {any} */ entry) => entry.fleet !== undefined);
  if (fleet !== undefined) {
    notes.push(
      `The ${count}-process row runs ${count} taskgates on this machine's ${environment.cores} cores, beside the mocks, PostgreSQL, Redis and the load generator: ` +
        `${count} processes on ${environment.cores} cores cannot multiply throughput by ${count}, so its req/s is not a measure of scale; ` +
        `it shows what a call costs when ${count} processes share one database and one Redis (server CPU summed over the ${count}: coordination, ` +
        `plus each process batching fewer calls per event-loop turn and per trace write, plus more context switches), against one process on the same back ends. ` +
        `It uses ${fleet.fleet.connections ?? settings.connections} connections (a multiple of ${count}), ${Math.round((fleet.fleet.connections ?? settings.connections) / count)} per process` +
        `${environment.loadGenerator.startsWith('wrk') ? `, from ${count} wrk threads (one per process)` : ''}.`,
    );
  }
  return notes;
}

/**
 * taskgate against the bare pass-through, in turns (against-bare.mjs).
 * @param {Awaited<ReturnType<typeof import('./against-bare.mjs').measureAgainstBare>>} against
 */
function againstBareLines(against) {
  const lines = [
    `**Against the bare pass-through, in turns**: taskgate (SQLite + memory, default transport http1) and the pass-through loaded in turns within each round ` +
      `(${format(2 * against.seconds)} s, switching every 100 ms), ${against.rounds} rounds at saturation; the CPU-per-call targets use the median of the rounds' ratios:`,
    '',
    "| Load | bare pass-through CPU µs/req | taskgate CPU µs/req | taskgate / bare (median of the rounds) | rounds' ratios [min–max] |",
    '|---|---:|---:|---:|---|',
  ];
  for (const entry of against.kinds) {
    lines.push(
      `| ${entry.kind === 'json' ? 'JSON' : 'stream (23 events)'} | ${format(median(entry.bare))} | ${format(median(entry.taskgate))} | **${format(entry.ratio, 2)}×** | ` +
        `[${format(Math.min(...entry.ratios), 2)}–${format(Math.max(...entry.ratios), 2)}] |`,
    );
  }
  const firstByte = against.firstByte;
  if (firstByte != null) {
    lines.push(
      '',
      `Stream time to first byte in turns (the target's figure): ${format(firstByte.rate)} streams/s in all for ${format(firstByte.seconds)} s, dealt to the two in turns, mock with gaps:`,
      '',
      '| Path | streams | p25 ms | p50 ms | p75 ms | p99 ms |',
      '|---|---:|---:|---:|---:|---:|',
    );
    for (const [label, figures] of /** @type {const} */ ([
      ['bare pass-through', firstByte.bare],
      ['taskgate (SQLite + memory)', firstByte.taskgate],
    ])) {
      lines.push(
        `| ${label} | ${format(figures.streams)} | ${format(figures.p25Ms, 3)} | ${format(figures.p50Ms, 3)} | ${format(figures.p75Ms, 3)} | ${format(figures.p99Ms, 3)} |`,
      );
    }
    lines.push(
      `| taskgate over the pass-through | | ${signed(firstByte.taskgate.p25Ms - firstByte.bare.p25Ms, 3)} | **${signed(firstByte.taskgate.p50Ms - firstByte.bare.p50Ms, 3)}** | ${signed(firstByte.taskgate.p75Ms - firstByte.bare.p75Ms, 3)} | ${signed(firstByte.taskgate.p99Ms - firstByte.bare.p99Ms, 3)} |`,
    );
  }
  return lines;
}

/**
 * The undici transport beside the default one (undici-transport.mjs): each
 * one's ratios to the pass-through of its own rounds, and first byte over it.
 * @param {Awaited<ReturnType<typeof import('./against-bare.mjs').measureAgainstBare>>} against  the default transport's
 * @param {Awaited<ReturnType<typeof import('./undici-transport.mjs').measureUndiciTransport>>} undici
 */
function transportLines(against, undici) {
  const rows = /** @type {const} */ ([
    ['http1 (default: the targets)', against],
    ['undici (reference: reported, not a target)', undici],
  ]);
  const lines = [
    `**undici transport (reference), reported, not a target**: a second taskgate (SQLite + memory) with \`transport: undici\` on both engines, ` +
      `started after the run above and measured against the same pass-through the same way (${undici.rounds} ${undici.rounds === 1 ? 'round' : 'rounds'} of ${format(2 * undici.seconds)} s in turns` +
      `${undici.firstByte == null ? '' : ', then the first byte in turns'}, in ${format(undici.elapsedSeconds)} s). Each ratio is to the pass-through of its own rounds; ` +
      'the targets hold for the default transport only:',
    '',
    "| Load | Transport | bare pass-through CPU µs/req | taskgate CPU µs/req | taskgate / bare (median of the rounds) | rounds' ratios [min–max] |",
    '|---|---|---:|---:|---:|---|',
  ];
  for (const { kind } of against.kinds) {
    for (const [label, measured] of rows) {
      const entry = measured.kinds.find((candidate) => candidate.kind === kind);
      if (entry === undefined) continue;
      lines.push(
        `| ${kind === 'json' ? 'JSON' : 'stream (23 events)'} | ${label} | ${format(median(entry.bare))} | ${format(median(entry.taskgate))} | ` +
          `${measured === against ? `**${format(entry.ratio, 2)}×**` : `${format(entry.ratio, 2)}×`} | [${format(Math.min(...entry.ratios), 2)}–${format(Math.max(...entry.ratios), 2)}] |`,
      );
    }
  }
  if (against.firstByte != null && undici.firstByte != null) {
    lines.push(
      '',
      '| Stream time to first byte, in turns | streams | bare p50 ms | taskgate p50 ms | taskgate over the pass-through, p50 ms | p99 ms |',
      '|---|---:|---:|---:|---:|---:|',
    );
    for (const [label, measured] of rows) {
      const { bare, taskgate } = /** @type {FirstByteFigures} */ (measured.firstByte);
      const over = signed(taskgate.p50Ms - bare.p50Ms, 3);
      lines.push(
        `| ${label} | ${format(taskgate.streams)} | ${format(bare.p50Ms, 3)} | ${format(taskgate.p50Ms, 3)} | ${measured === against ? `**${over}**` : over} | ` +
          `${signed(taskgate.p99Ms - bare.p99Ms, 3)} |`,
      );
    }
  }
  return lines;
}

/** @typedef {import('./against-bare.mjs').FirstByteAgainstBare} FirstByteFigures */

/**
 * The OpenTelemetry export A/B: each kind's medians over every round of
 * every process, and each pair's own, so a pair that ran apart shows.
 * @param {Awaited<ReturnType<typeof import('./export-cost.mjs').measureExportCost>>} cost
 */
function exportCostLines(cost) {
  const how = cost.inTurns
    ? `the two of a pair in turns within each round (${format(2 * cost.seconds)} s, switching every 100 ms)`
    : `the two of a pair one after the other (${format(cost.seconds)} s each; wrk would take turns, which a drifting machine disturbs less)`;
  const lines = [
    `**OpenTelemetry export**, A/B: ${cost.pairs} ${cost.pairs === 1 ? 'pair' : 'pairs'} of fresh taskgates on SQLite + memory, the second of each exporting every span ` +
      `over OTLP/HTTP (protobuf) to a local sink; ${cost.rounds} rounds at saturation, ${how}:`,
    '',
    "| Load | Server CPU µs/req, export off | export on | on / off (median of the rounds) | rounds' on / off [min–max] | each pair (off → on) |",
    '|---|---:|---:|---:|---|---|',
  ];
  for (const entry of cost.kinds) {
    const pairs = entry.off.map((rounds, index) => `${format(median(rounds))} → ${format(median(entry.on[index] ?? []))}`).join(', ');
    lines.push(
      `| ${entry.kind === 'json' ? 'JSON' : 'stream (23 events)'} | ${format(entry.offMedian)} | ${format(entry.onMedian)} | **${format(entry.ratio, 3)}×** | ` +
        `[${format(Math.min(...entry.ratios), 2)}–${format(Math.max(...entry.ratios), 2)}] | ${pairs} |`,
    );
  }
  lines.push(
    '',
    `CPU per call: medians over every round of every process. Spans exported: ${cost.spansExported === null ? 'unknown' : format(cost.spansExported)}; dropped: ${cost.spansDropped ?? 'unknown'}.`,
  );
  return lines;
}
