/** Summaries of measured values: percentiles of one run, medians over the repeats. */

/** Nearest-rank percentile. @param {number[]} values @param {number} rank */
export function percentile(values, rank) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((rank / 100) * sorted.length) - 1))];
}

/** The middle value; the mean of the two middle ones for an even count. @param {number[]} values */
export function median(values) {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Medians of every numeric field over the repeats.
 * @template {Record<string, any>} T
 * @param {T[]} runs
 * @returns {T}
 */
function medianOf(runs) {
  /** @type {Record<string, any>} */
  const result = {};
  for (const key of Object.keys(runs[0] ?? {})) {
    const values = runs.map((run) => run[key]);
    result[key] = typeof values[0] === 'number' ? median(values) : values[0];
  }
  return /** @type {T} */ (result);
}

/**
 * Medians per path, and of the per-run differences when the entries have them.
 * @param {Array<Record<string, any>>} entries @param {import("./measurement-paths.mjs").PathName[]} paths
 */
export function medianOfPaths(entries, paths) {
  /** @type {Record<string, any>} */
  const result = {};
  for (const path of paths) result[path] = medianOf(entries.map((entry) => entry[path]));
  if (entries[0]?.added !== undefined) {
    result.added = {};
    for (const path of paths) if (path !== 'direct') result.added[path] = medianOf(entries.map((entry) => entry.added[path]));
  }
  return result;
}
