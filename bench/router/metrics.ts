/**
 * The figures the report gives, from the simulation's per-bucket totals:
 * quality (share of served calls on a bad model), savings against the
 * reference and against the oracle, and eval spend.
 */
import type { Totals, WorkloadOutcome } from './worker-simulation.js';

export interface SpendFigures {
  calls: number;
  reference: number;
  production: number;
  oracle: number;
  evaluation: number;
  bad: number;
  badAfterDrift: number;
  belowThreshold: number;
}

export interface RunFigures extends SpendFigures {
  /** Share of served calls on a model below pass_rate - 0.02. */
  badShare: number;
  savings: number;
  oracleSavings: number;
  /** savings / oracle savings, before and after eval spend. */
  savingsVsOracle: number;
  netSavingsVsOracle: number;
  /** Eval spend / savings over the second half and the last quarter of the horizon. */
  evalShareSecondHalf: number;
  evalShareLastQuarter: number;
  /** Net savings vs oracle when the horizon ends at each checkpoint (in calls per workload). */
  checkpoints: Array<{ calls: number; savingsVsOracle: number; netSavingsVsOracle: number; badShare: number }>;
}

export function sumBuckets(totals: Totals, from: number, to: number): SpendFigures {
  const sum = (values: Float64Array): number => values.subarray(from, to).reduce((total, value) => total + value, 0);
  return {
    calls: sum(totals.calls),
    reference: sum(totals.reference),
    production: sum(totals.production),
    oracle: sum(totals.oracle),
    evaluation: sum(totals.evaluation),
    bad: sum(totals.bad),
    badAfterDrift: sum(totals.badAfterDrift),
    belowThreshold: sum(totals.belowThreshold),
  };
}

export function runFigures(totals: Totals, checkpointCalls: number[]): RunFigures {
  const buckets = totals.calls.length;
  const all = sumBuckets(totals, 0, buckets);
  const evalShare = (from: number): number => {
    const part = sumBuckets(totals, from, buckets);
    return part.evaluation / (part.reference - part.production);
  };
  const checkpoints = checkpointCalls
    .filter((calls) => calls <= buckets * totals.bucketCalls)
    .map((calls) => {
      const part = sumBuckets(totals, 0, Math.round(calls / totals.bucketCalls));
      const oracleSavings = part.reference - part.oracle;
      return {
        calls,
        savingsVsOracle: (part.reference - part.production) / oracleSavings,
        netSavingsVsOracle: (part.reference - part.production - part.evaluation) / oracleSavings,
        badShare: part.bad / part.calls,
      };
    });
  const savings = all.reference - all.production;
  const oracleSavings = all.reference - all.oracle;
  return {
    ...all,
    badShare: all.bad / all.calls,
    savings,
    oracleSavings,
    savingsVsOracle: savings / oracleSavings,
    netSavingsVsOracle: (savings - all.evaluation) / oracleSavings,
    evalShareSecondHalf: evalShare(Math.floor(buckets / 2)),
    evalShareLastQuarter: evalShare(Math.floor((buckets * 3) / 4)),
    checkpoints,
  };
}

export interface OutcomeFigures {
  certifications: number;
  /** Certifications of a model whose true rate was below pass_rate, and below pass_rate - 0.02. */
  certifiedBelowThreshold: number;
  certifiedBad: number;
  demotions: number;
  /** Demotions of a model whose true rate was still at or above pass_rate. */
  healthyDemotions: number;
  driftsWhileServing: number;
  driftServedCalls: number[];
  driftEnds: Record<string, number>;
}

export function outcomeFigures(outcomes: WorkloadOutcome[], badMargin: number): OutcomeFigures {
  const certifications = outcomes.flatMap((outcome) => outcome.certifications);
  const demotions = outcomes.flatMap((outcome) => outcome.demotions);
  const drifts = outcomes.flatMap((outcome) => (outcome.driftCaught === null ? [] : [outcome.driftCaught]));
  const driftEnds: Record<string, number> = {};
  for (const drift of drifts) driftEnds[drift.end] = (driftEnds[drift.end] ?? 0) + 1;
  return {
    certifications: certifications.length,
    certifiedBelowThreshold: certifications.filter((item) => item.trueRate < item.passRate).length,
    certifiedBad: certifications.filter((item) => item.trueRate < item.passRate - badMargin).length,
    demotions: demotions.length,
    healthyDemotions: demotions.filter((item) => item.trueRate >= item.passRate).length,
    driftsWhileServing: drifts.length,
    driftServedCalls: drifts.filter((drift) => drift.end === 'demoted').map((drift) => drift.servedCalls),
    driftEnds,
  };
}

/** Nearest-rank percentile (0-100); NaN for no values. */
export function percentile(values: number[], rank: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((rank / 100) * sorted.length) - 1))] ?? Number.NaN;
}
