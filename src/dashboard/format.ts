/** How the dashboard writes numbers and times (pure, so tests can compare a page with the data it shows). */

const counts = new Intl.NumberFormat('en-US');

export function formatCount(value: number): string {
  return counts.format(value);
}

/** Dollars with three significant digits below $1 (model calls often cost fractions of a cent), cents above. */
export function formatUsd(value: number): string {
  if (value === 0) return '$0.00';
  const sign = value < 0 ? '-' : '';
  const magnitude = Math.abs(value);
  if (magnitude >= 1) return `${sign}$${magnitude.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  const decimals = Math.min(10, Math.max(2, 2 - Math.floor(Math.log10(magnitude))));
  return `${sign}$${magnitude.toFixed(decimals)}`;
}

/** A share as a percentage, one decimal; "0%" for none. */
export function formatRate(value: number): string {
  if (value === 0) return '0%';
  return `${(value * 100).toFixed(1)}%`;
}

/** Milliseconds below a second, seconds above; a dash when there is no value. */
export function formatMs(value: number | null): string {
  if (value === null) return '—';
  if (value < 1000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(2)} s`;
}

/** UTC, to the second: the server does not know the viewer's zone, and a page with no script should still say it. */
export function formatTime(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A pass rate or bound, three decimals; a dash for none. */
export function formatRatio(value: number | null): string {
  return value === null ? '—' : value.toFixed(3);
}
