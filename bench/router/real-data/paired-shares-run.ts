/**
 * The router's relative default (paired-shares.ts) on every recorded
 * workload, on the same calls as the absolute router, measured the same way
 * (summarizeRun), with what only it has: its certified shares against the
 * oracle's, its samples, where its eval spend goes, and how much it served
 * on the project's pooled prior. A project's workloads run together over
 * their pool (paired-pool.ts) unless the variant runs each alone.
 */
import { simulateRelativeWorkloads } from './paired-pool.js';
import type { EvalSpend, RouterRunPlan } from './relative-outcome.js';
import type { RelativeVariant } from './relative-variants.js';
import { largestShare } from './oracles.js';
import { groupsOf, median, summarizeRun, type GroupFigures, type RealRunPlan, type ServedFigures } from './real-data-run.js';
import { realWorkload, type RealWorkload } from './real-workloads.js';
import type { RecordedData } from './routellm-data.js';

export interface RelativeWorkloadFigures extends ServedFigures {
  samples: { exploration: number; monitoring: number };
  lastExplorationCall: number | null;
  /** The certified share at the end (1: Mixtral serves outright, since `wholeFromCall`). */
  share: number;
  wholeFromCall: number | null;
  diffLower: number;
  requestedLower: number;
  spend: EvalSpend;
  demotions: number;
  fallbacks: number;
  /** Exploration replays per day of the run. */
  dailyExploration: number[];
  /** The grader measured against the verdicts, and the grade error of the last decision (null: its grades dropped). */
  graderChecks: { compared: number; differed: number };
  gradeError: number | null;
  /** Mixtral's share averaged over the run's calls, and the calls its share rested on the pooled prior. */
  meanRunShare: number;
  priorCalls: number;
}

export interface RelativeGroupFigures extends GroupFigures {
  /** Eval spend / gross saving (∞ when nothing was saved). */
  evaluationShareOfSaving: number;
  /** Each kind of eval spend as a share of GPT-4 serving every call. */
  spendShares: EvalSpend;
  /** Mean over the workloads of the certified share at the end, and of the oracle's share. */
  meanShare: number;
  meanOracleShare: number;
  /** Mean over the workloads of Mixtral's share averaged over the run; how many workloads were ever served a share on the pooled prior. */
  meanRunShare: number;
  onPrior: number;
  /** Medians over the workloads: exploration replays, and the call of the last one (the run's length when one never stopped). */
  medianSamples: number;
  medianLastExploration: number;
  /** Per day of the run, the median over the workloads of that day's exploration replays. */
  medianDailyExploration: number[];
  demotions: number;
  fallbacks: number;
  /** The grader's checks summed over the workloads; the grade error at the end: median and largest over the workloads whose grades count, how many had the assumption refuted (charged above ε, or dropped), and how many had them dropped. */
  graderChecks: { compared: number; differed: number };
  gradeError: { median: number; max: number; refuted: number; dropped: number };
}

export interface RelativeRun {
  variant: RelativeVariant;
  plan: RouterRunPlan;
  workloads: RelativeWorkloadFigures[];
  groups: RelativeGroupFigures[];
}

/** The data's workloads as every rule runs them (the same calls); build once per plan and pass to each variant. */
export function realWorkloads(data: RecordedData, plan: RealRunPlan, seed: number): RealWorkload[] {
  return data.workloads.map((recorded, id) => realWorkload(data, recorded, id, plan.callsPerWorkload, seed));
}

export function runRelativeRouter(
  data: RecordedData,
  plan: RealRunPlan,
  variant: RelativeVariant,
  seed: number,
  reals = realWorkloads(data, plan, seed),
): RelativeRun {
  const routerPlan: RouterRunPlan = { calls: plan.callsPerWorkload, callsPerDay: plan.callsPerDay, sampleRate: plan.sampleRate };
  const calls = plan.callsPerWorkload;
  const outcomes = simulateRelativeWorkloads(reals, data, routerPlan, variant, seed);
  const runs = reals.map((real, index) => {
    const outcome = outcomes[index];
    if (outcome === undefined) throw new Error(`no outcome for ${real.recorded.name}`);
    const evaluation = Object.values(outcome.spend).reduce((sum, value) => sum + value, 0);
    let cheapRight = 0;
    let agree = 0;
    for (let call = 0; call < calls; call += 1) {
      const prompt = real.prompts[real.promptOf(call)];
      cheapRight += Number(prompt?.cheapCorrect === true);
      agree += Number(prompt?.agrees === true);
    }
    const figures = {
      name: real.recorded.name,
      prompts: real.recorded.prompts.length,
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
      samples: outcome.samples,
      lastExplorationCall: outcome.lastExplorationCall,
      share: outcome.share,
      wholeFromCall: outcome.wholeFromCall,
      diffLower: outcome.diffLower,
      requestedLower: outcome.requestedLower,
      spend: outcome.spend,
      demotions: outcome.demotions,
      fallbacks: outcome.fallbacks,
      dailyExploration: outcome.daily.exploration,
      graderChecks: outcome.graderChecks,
      gradeError: outcome.gradeError,
      meanRunShare: outcome.meanShare,
      priorCalls: outcome.priorCalls,
    };
    return { real, figures };
  });
  const { workloads, groups } = summarizeRun(data, runs, calls);
  const memberLists = groupsOf(data.workloads).map(({ members }) =>
    workloads.filter((_, index) => {
      const recorded = runs[index]?.real.recorded;
      return recorded !== undefined && members.includes(recorded);
    }),
  );
  return {
    variant,
    plan: routerPlan,
    workloads,
    groups: groups.map((group, index) => {
      const members = memberLists[index] ?? [];
      const total = (pick: (item: RelativeWorkloadFigures) => number): number => members.reduce((sum, item) => sum + pick(item), 0);
      const medianOf = (pick: (item: RelativeWorkloadFigures) => number): number =>
        median(members.map(pick).sort((left, right) => left - right)) ?? 0;
      const saved = group.requestedCost - group.production;
      const spendShare = (kind: keyof EvalSpend): number => total((item) => item.spend[kind]) / group.requestedCost;
      return {
        ...group,
        evaluationShareOfSaving: saved > 0 ? group.evaluation / saved : Number.POSITIVE_INFINITY,
        spendShares: {
          candidateReplays: spendShare('candidateReplays'),
          referenceReplays: spendShare('referenceReplays'),
          verdicts: spendShare('verdicts'),
          grades: spendShare('grades'),
          selfChecks: spendShare('selfChecks'),
        },
        meanShare: total((item) => item.share) / members.length,
        meanOracleShare: total((item) => item.oracleShare) / members.length,
        meanRunShare: total((item) => item.meanRunShare) / members.length,
        onPrior: members.filter((item) => item.priorCalls > 0).length,
        medianSamples: medianOf((item) => item.samples.exploration),
        medianLastExploration: medianOf((item) => item.lastExplorationCall ?? 0),
        medianDailyExploration: (members[0]?.dailyExploration ?? []).map((_, day) => medianOf((item) => item.dailyExploration[day] ?? 0)),
        demotions: total((item) => item.demotions),
        fallbacks: total((item) => item.fallbacks),
        graderChecks: { compared: total((item) => item.graderChecks.compared), differed: total((item) => item.graderChecks.differed) },
        gradeError: gradeErrorsOf(members, variant.judgeError),
      };
    }),
  };
}

function gradeErrorsOf(members: readonly RelativeWorkloadFigures[], judgeError: number): RelativeGroupFigures['gradeError'] {
  const kept = members
    .map((item) => item.gradeError)
    .filter((error): error is number => error !== null)
    .sort((left, right) => left - right);
  const refuted = members.length - kept.filter((error) => error <= judgeError).length;
  return { median: median(kept) ?? 0, max: kept[kept.length - 1] ?? 0, refuted, dropped: members.length - kept.length };
}

/**
 * Evidence pooled over every workload asking the same pair (issue 37 item 4),
 * at its limit: the largest random share of all calls that keeps them
 * together at the bar (the prompts' own correctness), and what that one
 * share would do to each workload: why the router's prior (pooled-prior.ts)
 * is shrunk toward each workload's own evidence and capped, not this share.
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
  const share = largestShare(
    rights.reduce((sum, item) => sum + item.cheap, 0),
    rights.reduce((sum, item) => sum + item.requested, 0),
    qualityBar,
  );
  const ratios = rights
    .map((item) => ({ name: item.name, qualityRatio: item.requested === 0 ? 1 : 1 - share * (1 - item.cheap / item.requested) }))
    .sort((left, right) => left.qualityRatio - right.qualityRatio);
  return {
    share,
    qualityBar,
    workloads: ratios.length,
    belowBar: ratios.filter((item) => item.qualityRatio < qualityBar).length,
    belowNinety: ratios.filter((item) => item.qualityRatio < 0.9).length,
    worst: ratios[0] ?? { name: 'none', qualityRatio: 1 },
  };
}
