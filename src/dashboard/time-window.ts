/** The `?since=` window of the overview and workload pages, and the chart bucket that suits it. */
import type { StatsWindow } from '../tracking/stats-service.js';
import { html, type SafeHtml } from './html.js';

const HOUR_MS = 60 * 60 * 1000;

export const WINDOWS = {
  '24h': { label: '24 hours', durationMs: 24 * HOUR_MS, bucketMs: 15 * 60 * 1000 },
  '7d': { label: '7 days', durationMs: 7 * 24 * HOUR_MS, bucketMs: 2 * HOUR_MS },
  '30d': { label: '30 days', durationMs: 30 * 24 * HOUR_MS, bucketMs: 6 * HOUR_MS },
} as const;

export type WindowName = keyof typeof WINDOWS;

export interface SelectedWindow {
  name: WindowName;
  stats: StatsWindow;
  bucketMs: number;
}

/** An unknown `since` falls back to 24 h rather than failing: it comes from a link or a hand-edited URL. */
export function selectWindow(query: URLSearchParams, now: number): SelectedWindow {
  const asked = query.get('since');
  const name: WindowName = asked !== null && Object.hasOwn(WINDOWS, asked) ? (asked as WindowName) : '24h';
  const { durationMs, bucketMs } = WINDOWS[name];
  // Whole buckets, so the chart's first bucket is not a sliver and the stats cover exactly what the chart shows.
  const until = (Math.floor(now / bucketMs) + 1) * bucketMs;
  return { name, stats: { since: until - durationMs, until, environment: 'production' }, bucketMs };
}

export function windowPicker(current: WindowName, path: string): SafeHtml {
  return html`<nav class="windows" aria-label="Time window">${(Object.keys(WINDOWS) as WindowName[]).map(
    (name) => html`<a href="${`${path}?since=${name}`}"${current === name ? html` class="on" aria-current="true"` : null}>${name}</a>`,
  )}</nav>`;
}
