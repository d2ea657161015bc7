/**
 * The paired-shares rule (paired-shares.ts) on every recorded workload, on
 * the same calls as today's router, measured the same way (summarizeRun),
 * with what only this rule has: its certified shares against the oracle's,
 * its samples, and where its eval spend goes.
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import { simulatePairedShares, type PairedSharesPlan, type PairedSharesVariant } from './paired-shares.js';
import { largestShare } from './oracles.js';
import { groupsOf, median, summarizeRun, type GroupFigures, type RealRunPlan, type ServedFigures } from './real-data-run.js';
import { realWorkload, type RealWorkload } from './real-workloads.js';
import type { RecordedData } from './routellm-data.js';

export interface PairedWorkloadFigures extends ServedFigures {
  sampleRate: number;
  samples: number;
  /** The certified share at the end. */
  share: number;
  diffLower: number;
  requestedLower: number;
  stopped: { atCall: number; reason: string } | null;
  spend: { replays: number; verdicts: number; grades: number };
}

export interface PairedGroupFigures extends GroupFigures {
  /** Eval spend / gross saving (∞ when nothing was saved). */
  evaluationShareOfSaving: number;
  /** Each kind of eval spend as a share of GPT-4 serving every call. */
  spendShares: { replays: number; verdicts: number; grades: number };
  /** Mean over the workloads of the certified share at the end, and of the oracle's share. */
  meanShare: number;
  meanOracleShare: number;
  medianSamples: number;
  sampleRates: { min: number; max: number };
}

export interface PairedSharesRun {
  variant: PairedSharesVariant;
  plan: PairedSharesPlan;
  workloads: PairedWorkloadFigures[];
  groups: PairedGroupFigures[];
}

/** The rule's plan for one of the real-data runs: its calls and traffic, and its sample rate. */
export function pairedPlan(plan: RealRunPlan): PairedSharesPlan {
  return { calls: plan.callsPerWorkload, callsPerDay: plan.callsPerDay, sampleRate: plan.pairedSampleRate, dailyBudgetUsd: DEFAULT_CONTRACT.daily_budget_usd };
}

/** The data's workloads as both rules run them (the same calls); build once per plan and pass to each variant. */
export function realWorkloads(data: RecordedData, plan: RealRunPlan, seed: number): RealWorkload[] {
  return data.workloads.map((recorded, id) => realWorkload(data, recorded, id, plan.callsPerWorkload, seed));
}

export function runPairedShares(data: RecordedData, plan: RealRunPlan, variant: PairedSharesVariant, seed: number, reals = realWorkloads(data, plan, seed)): PairedSharesRun {
  const rulePlan = pairedPlan(plan);
  const runs = reals.map((real) => {
    const recorded = real.recorded;
    const outcome = simulatePairedShares(real, data, rulePlan, variant, seed);
    const evaluation = outcome.spend.replays + outcome.spend.verdicts + outcome.spend.grades;
    let cheapRight = 0;
    let agree = 0;
    for (let call = 0; call < plan.callsPerWorkload; call += 1) {
      const prompt = real.prompts[real.promptOf(call)];
      cheapRight += Number(prompt?.cheapCorrect === true);
      agree += Number(prompt?.agrees === true);
    }
    const calls = plan.callsPerWorkload;
    const figures = {
      name: recorded.name,
      prompts: recorded.prompts.length,
      calls,
      cheapAccuracy: cheapRight / calls,
      requestedAccuracy: outcome.served.requestedRight / calls,
      agreement: agree / calls,
      servedAccuracy: outcome.served.right / calls,
      servedRight: outcome.served.right,
      requestedRight: outcome.served.requestedRight,
      qualityRatio: outcome.served.right / outcome.served.requestedRight,
      qualityRatioAfterFirstFifth: outcome.served.rightLater / outcome.served.requestedRightLater,
      requestedCost: outcome.requestedCost,
      production: outcome.production,
      evaluation,
      maxDailyEvaluation: outcome.maxDailyEvaluation,
      savings: 1 - outcome.production / outcome.requestedCost,
      netSavings: 1 - (outcome.production + evaluation) / outcome.requestedCost,
      firstSavingCall: outcome.firstSavingCall,
      sampleRate: outcome.sampleRate,
      samples: outcome.samples,
      share: outcome.share,
      diffLower: outcome.diffLower,
      requestedLower: outcome.requestedLower,
      stopped: outcome.stopped,
      spend: outcome.spend,
    };
    return { real, figures };
  });
  const { workloads, groups } = summarizeRun(data, runs, plan.callsPerWorkload);
  const memberLists = groupsOf(data.workloads).map(({ members }) =>
    workloads.filter((_, index) => {
      const recorded = runs[index]?.real.recorded;
      return recorded !== undefined && members.includes(recorded);
    }),
  );
  return {
    variant,
    plan: rulePlan,
    workloads,
    groups: groups.map((group, index) => {
      const members = memberLists[index] ?? [];
      const total = (pick: (item: PairedWorkloadFigures) => number): number => members.reduce((sum, item) => sum + pick(item), 0);
      const saved = group.requestedCost - group.production;
      return {
        ...group,
        evaluationShareOfSaving: saved > 0 ? group.evaluation / saved : Number.POSITIVE_INFINITY,
        spendShares: {
          replays: total((item) => item.spend.replays) / group.requestedCost,
          verdicts: total((item) => item.spend.verdicts) / group.requestedCost,
          grades: total((item) => item.spend.grades) / group.requestedCost,
        },
        meanShare: total((item) => item.share) / members.length,
        meanOracleShare: total((item) => item.oracleShare) / members.length,
        medianSamples: median(members.map((item) => item.samples).sort((left, right) => left - right)) ?? 0,
        sampleRates: { min: Math.min(...members.map((item) => item.sampleRate)), max: Math.max(...members.map((item) => item.sampleRate)) },
      };
    }),
  };
}

/**
 * Evidence pooled over every workload asking the same pair (issue 37 item 4),
 * at its limit: the largest random share of all calls that keeps them
 * together at the bar (the prompts' own correctness), and what that one
 * share would do to each workload. Not used for routing (docs/routing.md).
 */
export interface PooledShare {
  share: number;
  qualityBar: number;
  workloads: number;
  belowBar: number;
  belowNinety: number;
  worst: { name: string; qualityRatio: number };
}

export function pooledShare(data: RecordedData, qualityBar = 0.95): PooledShare {
  const rights = data.workloads.map((workload) => ({
    name: workload.name,
    cheap: workload.prompts.filter((prompt) => prompt.cheapCorrect).length,
    requested: workload.prompts.filter((prompt) => prompt.requestedCorrect).length,
  }));
  const share = largestShare(rights.reduce((sum, item) => sum + item.cheap, 0), rights.reduce((sum, item) => sum + item.requested, 0), qualityBar);
  const ratios = rights.map((item) => ({ name: item.name, qualityRatio: item.requested === 0 ? 1 : 1 - share * (1 - item.cheap / item.requested) })).sort((left, right) => left.qualityRatio - right.qualityRatio);
  return {
    share,
    qualityBar,
    workloads: ratios.length,
    belowBar: ratios.filter((item) => item.qualityRatio < qualityBar).length,
    belowNinety: ratios.filter((item) => item.qualityRatio < 0.9).length,
    worst: ratios[0] ?? { name: 'none', qualityRatio: 1 },
  };
}
