/**
 * The router simulation's report: Markdown tables (goals first) and the SVG
 * plots of cost and quality over calls.
 */
import type { DropDetection, FalseAlarms, VerdictTimes } from './experiments.js';
import { percentile, type OutcomeFigures, type RunFigures } from './metrics.js';
import { lineChart, type Series } from './svg-chart.js';
import type { Totals } from './worker-simulation.js';
import type { Workload } from './workloads.js';

export interface RuleRun {
  label: string;
  settings: string;
  figures: RunFigures;
  outcomes: OutcomeFigures;
  totals: Totals;
}

export interface SimulationResults {
  options: { workloads: number; calls: number; seed: number; quick: boolean; overrides: object };
  workloads: Workload[];
  runs: RuleRun[];
  certification: Array<VerdictTimes & { label: string }>;
  threshold: Array<VerdictTimes & { label: string; horizon: number }>;
  drops: Array<DropDetection & { passRate: number }>;
  alarms: FalseAlarms[];
  seconds: number;
}

const percent = (value: number, digits = 1): string => (Number.isFinite(value) ? `${(value * 100).toFixed(digits)}%` : 'n/a');
const count = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const row = (cells: Array<string | number>): string => `| ${cells.join(' | ')} |`;
const table = (head: string[], rows: Array<Array<string | number>>): string =>
  [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');

export function renderReport(results: SimulationResults): string {
  const [taskgate, naive] = results.runs;
  if (taskgate === undefined || naive === undefined) throw new Error('the report needs the taskgate and naive runs');
  const mainDrop = results.drops[0];
  const dropMedian = mainDrop === undefined ? Number.NaN : percentile(mainDrop.servedCalls, 50);
  const goal = (met: boolean): string => (met ? 'met' : '**missed**');
  const goals = table(
    ['Goal', 'taskgate', '', 'naive', ''],
    [
      [
        'served calls on a model below pass_rate − 0.02 ≤ 0.5%',
        percent(taskgate.figures.badShare, 3),
        goal(taskgate.figures.badShare <= 0.005),
        percent(naive.figures.badShare, 3),
        goal(naive.figures.badShare <= 0.005),
      ],
      [
        'savings ≥ 75% of the oracle’s, before eval spend',
        percent(taskgate.figures.savingsVsOracle),
        goal(taskgate.figures.savingsVsOracle >= 0.75),
        percent(naive.figures.savingsVsOracle),
        goal(naive.figures.savingsVsOracle >= 0.75),
      ],
      [
        'savings ≥ 65% of the oracle’s, after eval spend',
        percent(taskgate.figures.netSavingsVsOracle),
        goal(taskgate.figures.netSavingsVsOracle >= 0.65),
        percent(naive.figures.netSavingsVsOracle),
        goal(naive.figures.netSavingsVsOracle >= 0.65),
      ],
      [
        'eval spend ≤ 10% of savings once converged (2nd half)',
        percent(taskgate.figures.evalShareSecondHalf),
        goal(taskgate.figures.evalShareSecondHalf <= 0.1),
        percent(naive.figures.evalShareSecondHalf),
        goal(naive.figures.evalShareSecondHalf <= 0.1),
      ],
      [
        'drop 0.95 → 0.85 caught in a median of about 1,000 served calls (≤ 1,250)',
        `${count(dropMedian)} calls`,
        goal(dropMedian <= 1250),
        'same detector',
        '',
      ],
    ],
  );

  const runs = table(
    [
      'Run',
      'bad calls',
      'of which drifted',
      'below pass_rate',
      'saved vs reference',
      'vs oracle',
      'net vs oracle',
      'eval / savings (all, 2nd half, last ¼)',
      'certified (below pass_rate, bad)',
      'demotions (healthy)',
      'drift caught: median, p90 served calls',
    ],
    results.runs.map((run) => [
      run.label,
      percent(run.figures.badShare, 3),
      percent(run.figures.badAfterDrift / run.figures.calls, 3),
      percent(run.figures.belowThreshold / run.figures.calls, 2),
      percent(run.figures.savings / run.figures.reference),
      percent(run.figures.savingsVsOracle),
      percent(run.figures.netSavingsVsOracle),
      `${percent(run.figures.evaluation / run.figures.savings)}, ${percent(run.figures.evalShareSecondHalf)}, ${percent(run.figures.evalShareLastQuarter)}`,
      `${run.outcomes.certifications} (${run.outcomes.certifiedBelowThreshold}, ${run.outcomes.certifiedBad})`,
      `${run.outcomes.demotions} (${run.outcomes.healthyDemotions})`,
      `${count(percentile(run.outcomes.driftServedCalls, 50))}, ${count(percentile(run.outcomes.driftServedCalls, 90))} (${run.outcomes.driftServedCalls.length} of ${run.outcomes.driftsWhileServing})`,
    ]),
  );

  const horizons = table(
    ['Horizon (calls per workload)', ...results.runs.map((run) => `${run.label}: vs oracle, net, bad`)],
    (taskgate.figures.checkpoints ?? []).map((checkpoint, index) => [
      count(checkpoint.calls),
      ...results.runs.map((run) => {
        const point = run.figures.checkpoints[index];
        return point === undefined
          ? 'n/a'
          : `${percent(point.savingsVsOracle)}, ${percent(point.netSavingsVsOracle)}, ${percent(point.badShare, 2)}`;
      }),
    ]),
  );

  const certification = table(
    ['Rule', 'true rate', 'certified', 'evals to certify: median', 'p90'],
    results.certification.map((item) => [
      item.label,
      item.trueRate,
      percent(item.certified / item.runs),
      count(percentile(item.evalsToCertify, 50)),
      count(percentile(item.evalsToCertify, 90)),
    ]),
  );
  const threshold = table(
    ['Rule', 'true rate', 'runs', 'evals at most', 'certified'],
    results.threshold.map((item) => [item.label, item.trueRate, item.runs, count(item.horizon), percent(item.certified / item.runs, 1)]),
  );
  const drops = table(
    ['pass_rate', 'drop', 'runs', 'served calls to demotion: median', 'p90', 'false alarms during a 20,000-call healthy warm-up'],
    results.drops.map((drop) => [
      drop.passRate,
      `${drop.from} → ${drop.to}`,
      drop.runs,
      count(percentile(drop.servedCalls, 50)),
      count(percentile(drop.servedCalls, 90)),
      `${drop.warmUpAlarms} in ${drop.runs} runs`,
    ]),
  );
  const alarms = table(
    ['pass_rate', 'true rate', 'served calls', 'false alarms', 'per million served calls'],
    results.alarms.map((item) => [
      item.passRate,
      item.trueRate,
      count(item.servedCalls),
      item.alarms,
      (item.alarms / (item.servedCalls / 1e6)).toFixed(1),
    ]),
  );

  return [
    '# Router simulation',
    '',
    `${results.options.workloads} workloads × ${count(results.options.calls)} calls, seed ${results.options.seed}${results.options.quick ? ' (quick)' : ''}, overrides ${JSON.stringify(results.options.overrides)}; ${results.seconds.toFixed(0)} s.`,
    '',
    describeWorkloads(results.workloads),
    '',
    '## Goals',
    '',
    goals,
    '',
    '## Runs',
    '',
    results.runs.map((run) => `- ${run.label}: ${run.settings}`).join('\n'),
    '',
    runs,
    '',
    '## Savings by horizon',
    '',
    horizons,
    '',
    '## Evals to certify (pass_rate 0.95)',
    '',
    certification,
    '',
    '## Certification at and below the threshold (pass_rate 0.95)',
    '',
    threshold,
    '',
    '## Drop detection (shadow-scored share of served calls, CUSUM)',
    '',
    drops,
    '',
    alarms,
    '',
  ].join('\n');
}

function describeWorkloads(workloads: Workload[]): string {
  const candidates = workloads.flatMap((workload) => workload.candidates.map((candidate) => ({ workload, candidate })));
  const gap = (low: number, high: number): number =>
    candidates.filter(
      ({ workload, candidate }) => candidate.trueRate - workload.passRate >= low && candidate.trueRate - workload.passRate < high,
    ).length;
  const byRate = [0.9, 0.95, 0.98]
    .map((rate) => `${workloads.filter((workload) => workload.passRate === rate).length} at ${rate}`)
    .join(', ');
  const oracleFractions = workloads.map(
    (workload) =>
      (workload.candidates.find((candidate) => candidate.trueRate >= workload.passRate)?.costPerCall ?? workload.reference.costPerCall) /
      workload.reference.costPerCall,
  );
  const none = workloads.filter((workload) => workload.candidates.every((candidate) => candidate.trueRate < workload.passRate)).length;
  return [
    `Workloads: ${byRate} (pass_rate); ${candidates.length} candidates; ${none} workloads with no passing candidate; ${workloads.filter((workload) => workload.drift !== null).length} with a drift.`,
    `Candidates by true rate − pass_rate: below −0.05: ${gap(-1, -0.05)}; [−0.05, −0.02): ${gap(-0.05, -0.02)}; [−0.02, 0): ${gap(-0.02, 0)}; [0, 0.02): ${gap(0, 0.02)}; ≥ 0.02: ${gap(0.02, 1)}.`,
    `The oracle's model costs a median ${percent(percentile(oracleFractions, 50))} of the reference (p25 ${percent(percentile(oracleFractions, 25))}, p75 ${percent(percentile(oracleFractions, 75))}).`,
  ].join('\n');
}

const colors = { reference: '#777777', taskgate: '#1f77b4', naive: '#ff7f0e', oracle: '#2ca02c' };

export function renderCharts(results: SimulationResults): Record<string, string> {
  const [taskgate, naive] = results.runs;
  if (taskgate === undefined || naive === undefined) throw new Error('the charts need the taskgate and naive runs');
  const totals = taskgate.totals;
  const x = (bucket: number): number => (bucket + 1) * totals.bucketCalls;
  const cumulative = (values: (bucket: number) => number): Array<readonly [number, number]> => {
    let sum = 0;
    return Array.from(totals.calls, (_, bucket) => [x(bucket), (sum += values(bucket))] as const);
  };
  const at = (values: Float64Array, bucket: number): number => values[bucket] ?? 0;
  const cost: Series[] = [
    { name: 'reference model for every call', color: colors.reference, points: cumulative((bucket) => at(totals.reference, bucket)) },
    {
      name: 'taskgate, with eval spend',
      color: colors.taskgate,
      points: cumulative((bucket) => at(totals.production, bucket) + at(totals.evaluation, bucket)),
    },
    {
      name: 'taskgate, production only',
      color: colors.taskgate,
      dashed: true,
      points: cumulative((bucket) => at(totals.production, bucket)),
    },
    {
      name: 'naive rule, with eval spend',
      color: colors.naive,
      points: cumulative((bucket) => at(naive.totals.production, bucket) + at(naive.totals.evaluation, bucket)),
    },
    { name: 'oracle (cheapest truly passing model)', color: colors.oracle, points: cumulative((bucket) => at(totals.oracle, bucket)) },
  ];
  const windowShare = (run: RuleRun): Array<readonly [number, number]> =>
    Array.from(run.totals.calls, (calls, bucket) => [x(bucket), at(run.totals.bad, bucket) / calls] as const);
  const shareSoFar = (run: RuleRun): Array<readonly [number, number]> => {
    let calls = 0;
    let bad = 0;
    return Array.from(run.totals.calls, (_, bucket) => {
      calls += at(run.totals.calls, bucket);
      bad += at(run.totals.bad, bucket);
      return [x(bucket), bad / calls] as const;
    });
  };
  // The naive rule without rollback (its share climbs past 10%) is left to the report's table: it would flatten the others.
  const bad: Series[] = [
    { name: `taskgate, per window of ${count(totals.bucketCalls)} calls`, color: colors.taskgate, points: windowShare(taskgate) },
    { name: 'taskgate, all calls so far', color: colors.taskgate, dashed: true, points: shareSoFar(taskgate) },
    { name: 'naive rule, per window', color: colors.naive, points: windowShare(naive) },
    { name: 'naive rule, all calls so far', color: colors.naive, dashed: true, points: shareSoFar(naive) },
  ];
  const versusOracle = (run: RuleRun, net: boolean): Array<readonly [number, number]> => {
    let saved = 0;
    let oracle = 0;
    return Array.from(run.totals.calls, (_, bucket) => {
      saved += at(run.totals.reference, bucket) - at(run.totals.production, bucket) - (net ? at(run.totals.evaluation, bucket) : 0);
      oracle += at(run.totals.reference, bucket) - at(run.totals.oracle, bucket);
      return [x(bucket), saved / oracle] as const;
    });
  };
  const savings: Series[] = [
    { name: 'taskgate, before eval spend', color: colors.taskgate, dashed: true, points: versusOracle(taskgate, false) },
    { name: 'taskgate, after eval spend', color: colors.taskgate, points: versusOracle(taskgate, true) },
    { name: 'naive rule, after eval spend', color: colors.naive, points: versusOracle(naive, true) },
  ];
  const cdf = (values: number[], runs: number): Array<readonly [number, number]> => {
    // A step at each distinct value: the share of runs certified within that many evals.
    const sorted = [...values].sort((left, right) => left - right);
    const points: Array<readonly [number, number]> = [[0, 0]];
    sorted.forEach((value, index) => {
      if (sorted[index + 1] === value) return;
      const previous = points[points.length - 1]?.[1] ?? 0;
      points.push([value, previous], [value, (index + 1) / runs]);
    });
    return points;
  };
  const shades: Record<string, string> = { '0.99': '#1f77b4', '0.98': '#2ca02c', '0.97': '#9467bd' };
  const certify: Series[] = results.certification
    .filter((item) => item.label !== 'naive')
    .map((item) => ({
      name: `${item.trueRate}, ${item.label}`,
      color: shades[String(item.trueRate)] ?? '#777',
      dashed: item.label === 'uniform prior',
      points: cdf(item.evalsToCertify, item.runs),
    }));
  const callsLabel = 'calls per workload (200 workloads in parallel)'.replace('200', String(results.options.workloads));
  return {
    'cumulative-cost.svg': lineChart({
      title: 'Cumulative cost of serving (USD, all workloads)',
      xLabel: callsLabel,
      yLabel: 'USD',
      series: cost,
      formatY: (value) => `$${value.toLocaleString('en-US')}`,
    }),
    'bad-share.svg': lineChart({
      title: 'Share of calls served by a model below pass_rate − 0.02',
      xLabel: callsLabel,
      yLabel: 'share of served calls',
      series: bad,
      guides: [{ y: 0.005, label: 'goal: 0.5% of all calls' }],
      formatY: (value) => percent(value),
    }),
    'savings-vs-oracle.svg': lineChart({
      title: 'Savings so far, as a share of the oracle’s',
      xLabel: callsLabel,
      yLabel: 'share of the oracle’s savings',
      series: savings,
      guides: [
        { y: 0.75, label: 'goal before eval spend: 75%' },
        { y: 0.65, label: 'goal after eval spend: 65%' },
      ],
      yMin: 0,
      legend: 'bottom-right',
      formatY: (value) => percent(value, 0),
    }),
    'evals-to-certify.svg': lineChart({
      title: 'Evals to certify against pass_rate 0.95 (share of runs certified)',
      xLabel: 'evals',
      yLabel: 'share of runs certified',
      series: certify,
      yMin: 0,
      yMax: 1,
      legend: 'bottom-right',
      formatY: (value) => percent(value, 0),
    }),
  };
}
