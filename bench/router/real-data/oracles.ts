/**
 * What a router that knew the answers could save, from per-prompt
 * correctness of a cheap model and the requested one, each policy holding
 * accuracy at `bar` (0.95) times the requested model's alone:
 *
 * - whole workloads: each workload served by the cheap model when its
 *   accuracy on the workload reaches the bar, else by the requested model;
 * - shares per workload: on each workload the largest share of calls sent to
 *   the cheap model at random that keeps the workload at the bar;
 * - a random share: one such share over all calls, whatever their workload
 *   (the bar holds over all calls, not per workload);
 * - per query: the cheap model answers exactly the prompts it gets right or
 *   the requested model gets wrong (never below the requested model).
 *
 * Savings are against the requested model serving every call. Accuracy
 * counts calls; cost counts what each call costs, so the same prompts give
 * different savings when calls are weighed by their tokens.
 */

export interface OracleItem {
  cheapCorrect: boolean;
  requestedCorrect: boolean;
  /** USD of one call of this prompt on each model. */
  cheapCost: number;
  requestedCost: number;
  /** Calls of this prompt. */
  count: number;
}

export interface OracleWorkload {
  name: string;
  items: OracleItem[];
}

export interface OracleCosts {
  /** The requested model on every call. */
  requested: number;
  whole: number;
  shares: number;
  randomShare: number;
  perQuery: number;
}

export interface OracleResult {
  bar: number;
  /** The random share over all calls. */
  randomShare: number;
  perWorkload: Array<{
    name: string;
    calls: number;
    cheapAccuracy: number;
    requestedAccuracy: number;
    wholeToCheap: boolean;
    share: number;
    costs: OracleCosts;
  }>;
  total: OracleCosts;
}

export type OracleSavings = Omit<OracleCosts, 'requested'>;

/**
 * The largest share s of calls sent at random to the cheap model with
 * s·cheap + (1 − s)·requested ≥ bar·requested (accuracies, or counts of right
 * answers over the same calls): 1 when the cheap model alone reaches the bar.
 */
export function largestShare(cheapRight: number, requestedRight: number, bar: number): number {
  if (cheapRight >= bar * requestedRight) return 1;
  return ((1 - bar) * requestedRight) / (requestedRight - cheapRight);
}

export function computeOracles(workloads: OracleWorkload[], bar = 0.95): OracleResult {
  const summaries = workloads.map(summarize);
  const allCheap = summaries.reduce((sum, item) => sum + item.cheapRight, 0);
  const allRequested = summaries.reduce((sum, item) => sum + item.requestedRight, 0);
  const randomShare = largestShare(allCheap, allRequested, bar);
  const perWorkload = summaries.map((item) => {
    const wholeToCheap = item.cheapRight >= bar * item.requestedRight;
    const share = largestShare(item.cheapRight, item.requestedRight, bar);
    const mix = (cheapShare: number): number => cheapShare * item.cheapCost + (1 - cheapShare) * item.requestedCost;
    const costs: OracleCosts = {
      requested: item.requestedCost,
      whole: wholeToCheap ? item.cheapCost : item.requestedCost,
      shares: mix(share),
      randomShare: mix(randomShare),
      perQuery: item.perQueryCost,
    };
    return {
      name: item.name,
      calls: item.calls,
      cheapAccuracy: item.cheapRight / item.calls,
      requestedAccuracy: item.requestedRight / item.calls,
      wholeToCheap,
      share,
      costs,
    };
  });
  const total = (key: keyof OracleCosts): number => perWorkload.reduce((sum, item) => sum + item.costs[key], 0);
  return {
    bar,
    randomShare,
    perWorkload,
    total: {
      requested: total('requested'),
      whole: total('whole'),
      shares: total('shares'),
      randomShare: total('randomShare'),
      perQuery: total('perQuery'),
    },
  };
}

/** Each oracle's saving as a share of the requested model's cost. */
export function oracleSavings(costs: OracleCosts): OracleSavings {
  const saving = (cost: number): number => 1 - cost / costs.requested;
  return {
    whole: saving(costs.whole),
    shares: saving(costs.shares),
    randomShare: saving(costs.randomShare),
    perQuery: saving(costs.perQuery),
  };
}

function summarize(workload: OracleWorkload): {
  name: string;
  calls: number;
  cheapRight: number;
  requestedRight: number;
  cheapCost: number;
  requestedCost: number;
  perQueryCost: number;
} {
  const summary = { name: workload.name, calls: 0, cheapRight: 0, requestedRight: 0, cheapCost: 0, requestedCost: 0, perQueryCost: 0 };
  for (const item of workload.items) {
    summary.calls += item.count;
    if (item.cheapCorrect) summary.cheapRight += item.count;
    if (item.requestedCorrect) summary.requestedRight += item.count;
    summary.cheapCost += item.count * item.cheapCost;
    summary.requestedCost += item.count * item.requestedCost;
    summary.perQueryCost += item.count * (item.cheapCorrect || !item.requestedCorrect ? item.cheapCost : item.requestedCost);
  }
  return summary;
}
