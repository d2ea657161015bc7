/** The workload page's time charts: the series the chart script draws, from the StatsService's buckets. */
import type { TimeBucket } from '../tracking/stats-service.js';
import { html, jsonForScript, type SafeHtml } from './html.js';

interface ChartSeries {
  label: string;
  color: string;
  fill?: string;
  values: Array<number | null>;
}

interface Chart {
  id: string;
  title: string;
  unit: 'count' | 'usd' | 'ms' | 'rate';
  series: ChartSeries[];
}

export interface ChartData {
  /** Bucket starts, epoch seconds (uPlot's time unit). */
  x: number[];
  charts: Chart[];
}

const blue = '#2563eb';
const violet = '#7c3aed';
const red = '#dc2626';
const green = '#059669';

export function chartData(buckets: readonly TimeBucket[]): ChartData {
  const column = (pick: (bucket: TimeBucket) => number | null) => buckets.map(pick);
  const percentileChart = (id: string, title: string, pick: (bucket: TimeBucket) => TimeBucket['latencyMs']): Chart => ({
    id,
    title,
    unit: 'ms',
    series: [
      { label: 'p50', color: blue, values: column((bucket) => pick(bucket).p50) },
      { label: 'p95', color: violet, values: column((bucket) => pick(bucket).p95) },
    ],
  });
  return {
    x: buckets.map((bucket) => Math.floor(bucket.start / 1000)),
    charts: [
      {
        id: 'calls',
        title: 'Calls',
        unit: 'count',
        series: [
          { label: 'calls', color: blue, fill: 'rgba(37, 99, 235, 0.08)', values: column((bucket) => bucket.calls) },
          { label: 'errors', color: red, values: column((bucket) => bucket.errors) },
        ],
      },
      {
        id: 'cost',
        title: 'Cost',
        unit: 'usd',
        series: [{ label: 'cost', color: green, fill: 'rgba(5, 150, 105, 0.08)', values: column((bucket) => bucket.costUsd) }],
      },
      {
        id: 'tokens',
        title: 'Tokens',
        unit: 'count',
        series: [
          { label: 'in', color: blue, values: column((bucket) => bucket.promptTokens) },
          { label: 'out', color: violet, values: column((bucket) => bucket.completionTokens) },
        ],
      },
      // An empty bucket has no error rate (null, a gap), not a rate of zero.
      {
        id: 'error-rate',
        title: 'Error rate',
        unit: 'rate',
        series: [{ label: 'error rate', color: red, values: column((bucket) => (bucket.calls === 0 ? null : bucket.errorRate)) }],
      },
      percentileChart('latency', 'Latency', (bucket) => bucket.latencyMs),
      percentileChart('ttft', 'Time to first token (streams)', (bucket) => bucket.ttftMs),
    ],
  };
}

/** The chart boxes (filled by the chart script) and their data. */
export function renderCharts(data: ChartData): SafeHtml {
  return html`<section class="charts">${data.charts.map(
    (chart) => html`<div class="chart"><h3>${chart.title}</h3><div class="plot" id="${`chart-${chart.id}`}"></div></div>`,
  )}</section>
<script type="application/json" id="chart-data">${jsonForScript(data)}</script>`;
}
