/**
 * How long the primary of `serve --workers N` waits before replacing a worker
 * that died: at once (almost) for a worker that had been serving for a
 * while, and twice as long after each further quick death, up to a cap, so a
 * worker that cannot start (a broken model file, a full disk) is retried
 * without spinning the CPU or flooding the log.
 */

export interface RestartPolicy {
  /** The wait after a worker that had lived `stableMs` or more. */
  firstMs: number;
  maxMs: number;
  /** A worker that lived this long was healthy: its death restarts the backoff. */
  stableMs: number;
}

export const defaultRestartPolicy: RestartPolicy = { firstMs: 250, maxMs: 30_000, stableMs: 30_000 };

/** The slot's count of quick deaths in a row, after a worker that lived `livedMs` died. */
export function quickDeathsAfter(previousQuickDeaths: number, livedMs: number, policy: RestartPolicy = defaultRestartPolicy): number {
  return livedMs >= policy.stableMs ? 0 : previousQuickDeaths + 1;
}

/** The wait before the next worker in a slot with that many quick deaths in a row. */
export function restartDelayMs(quickDeaths: number, policy: RestartPolicy = defaultRestartPolicy): number {
  return Math.min(policy.maxMs, policy.firstMs * 2 ** Math.min(quickDeaths, 30));
}
