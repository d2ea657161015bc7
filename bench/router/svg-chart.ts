/**
 * A line chart as SVG text: axes with round ticks, one polyline per series,
 * optional dashed goal lines, a legend. Enough for the router report's plots
 * without a plotting dependency.
 */

export interface Series {
  name: string;
  color: string;
  points: Array<readonly [number, number]>;
  dashed?: boolean;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Horizontal reference lines, e.g. a goal. */
  guides?: Array<{ y: number; label: string }>;
  formatX?: (value: number) => string;
  formatY?: (value: number) => string;
  yMin?: number;
  yMax?: number;
  /** Where the legend goes inside the plot; top left when omitted. */
  legend?: 'top-left' | 'bottom-right';
  width?: number;
  height?: number;
}

const margin = { top: 40, right: 20, bottom: 50, left: 80 };

export function lineChart(options: ChartOptions): string {
  const width = options.width ?? 760;
  const height = options.height ?? 420;
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const xs = options.series.flatMap((series) => series.points.map(([x]) => x));
  const ys = options.series.flatMap((series) => series.points.map(([, y]) => y)).concat((options.guides ?? []).map((guide) => guide.y));
  const xTicks = niceTicks(Math.min(...xs), Math.max(...xs));
  const yTicks = niceTicks(options.yMin ?? Math.min(0, ...ys), options.yMax ?? Math.max(...ys));
  const [xLow, xHigh] = [xTicks[0] ?? 0, xTicks[xTicks.length - 1] ?? 1];
  const [yLow, yHigh] = [yTicks[0] ?? 0, yTicks[yTicks.length - 1] ?? 1];
  const toX = (x: number): number => margin.left + ((x - xLow) / (xHigh - xLow || 1)) * plotWidth;
  const toY = (y: number): number =>
    margin.top + plotHeight - ((Math.min(Math.max(y, yLow), yHigh) - yLow) / (yHigh - yLow || 1)) * plotHeight;
  const formatX = options.formatX ?? compact;
  const formatY = options.formatY ?? compact;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escape(options.title)}</text>`,
  ];
  for (const tick of yTicks) {
    const y = toY(tick).toFixed(1);
    parts.push(`<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${margin.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${escape(formatY(tick))}</text>`);
  }
  for (const tick of xTicks) {
    const x = toX(tick).toFixed(1);
    parts.push(`<line x1="${x}" x2="${x}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="#f0f0f0"/>`);
    parts.push(`<text x="${x}" y="${margin.top + plotHeight + 18}" text-anchor="middle">${escape(formatX(tick))}</text>`);
  }
  parts.push(`<rect x="${margin.left}" y="${margin.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#888"/>`);
  parts.push(`<text x="${margin.left + plotWidth / 2}" y="${height - 10}" text-anchor="middle">${escape(options.xLabel)}</text>`);
  parts.push(
    `<text transform="translate(16 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escape(options.yLabel)}</text>`,
  );
  for (const guide of options.guides ?? []) {
    const y = toY(guide.y).toFixed(1);
    parts.push(`<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${y}" y2="${y}" stroke="#c00" stroke-dasharray="2 4"/>`);
    parts.push(`<text x="${margin.left + plotWidth - 4}" y="${Number(y) - 4}" text-anchor="end" fill="#c00">${escape(guide.label)}</text>`);
  }
  const legendWidth = 30 + 7 * Math.max(...options.series.map((series) => series.name.length));
  const bottomRight = options.legend === 'bottom-right';
  if (bottomRight) {
    const height = options.series.length * 18 + 6;
    parts.push(
      `<rect x="${margin.left + plotWidth - 18 - legendWidth}" y="${margin.top + plotHeight - height - 3}" width="${legendWidth + 12}" height="${height}" fill="white" fill-opacity="0.85"/>`,
    );
  }
  for (const series of options.series) {
    const path = series.points.map(([x, y]) => `${toX(x).toFixed(1)},${toY(y).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline points="${path}" fill="none" stroke="${series.color}" stroke-width="2"${series.dashed === true ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
  }
  options.series.forEach((series, index) => {
    const y = bottomRight ? margin.top + plotHeight - 12 - (options.series.length - 1 - index) * 18 : margin.top + 12 + index * 18;
    const x = bottomRight ? margin.left + plotWidth - 12 - legendWidth : margin.left + 12;
    parts.push(
      `<line x1="${x}" x2="${x + 24}" y1="${y}" y2="${y}" stroke="${series.color}" stroke-width="2"${series.dashed === true ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    parts.push(`<text x="${x + 30}" y="${y}" dominant-baseline="middle">${escape(series.name)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** About six round ticks covering [low, high]. */
export function niceTicks(low: number, high: number): number[] {
  if (!(high > low)) return [low, low + 1];
  const raw = (high - low) / 6;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((factor) => factor * magnitude >= raw) ?? 10) * magnitude;
  const ticks: number[] = [];
  for (let tick = Math.floor(low / step) * step; tick < high + step * 0.999; tick += step) ticks.push(Number(tick.toPrecision(12)));
  return ticks;
}

function compact(value: number): string {
  const size = Math.abs(value);
  if (size >= 1e6) return `${Number((value / 1e6).toPrecision(3))}M`;
  if (size >= 1e3) return `${Number((value / 1e3).toPrecision(3))}k`;
  return `${Number(value.toPrecision(3))}`;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
