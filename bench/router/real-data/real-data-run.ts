/**
 * The router under the absolute semantics on recorded data (a contract that
 * sets `pass_rate` 0.95: every serving model must itself agree with the
 * requested model's reply at that rate): every workload of the data set run
 * through the worker simulation (the real decision code, as for the
 * synthetic workloads) with a call source that answers as the data says.
 * Also the measures every rule shares: served quality against the requested
 * model alone and savings against the oracles (oracles.ts), per workload and
 * per group of workloads (MMLU, GSM8K, all).
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import { defaultSettings, type RouterSettings } from '../settings.js';
import { createTotals, simulateWorkload, type WorkloadOutcome } from '../worker-simulation.js';
import { computeOracles, oracleSavings, type OracleItem, type OracleSavings, type OracleWorkload } from './oracles.js';
import { oracleItems, realWorkload, type RealWorkload } from './real-workloads.js';
import type { RecordedData, RecordedWorkload } from './routellm-data.js';

export interface RealRunPlan {
  label: string;
  callsPerWorkload: number;
  /** The workload's traffic: the exploration plan's calls per day, and a day's cooldown. */
  callsPerDay: number;
  /** The contract's `sample_rate`, for both semantics. */
  sampleRate: number | 'auto';
}

/** What a rule served on a workload, measured against GPT-4 alone and the oracles on the same calls. */
export interface ServedFigures {
  name: string;
  prompts: number;
  calls: number;
  /** Over the simulated calls. */
  cheapAccuracy: number;
  requestedAccuracy: number;
  /** How often the cheap model's answer agrees with the requested model's: its pass rate under the default contract. */
  agreement: number;
  servedAccuracy: number;
  servedRight: number;
  requestedRight: number;
  /** Served accuracy / the requested model's on the same calls, over all calls and after the first fifth. */
  qualityRatio: number;
  qualityRatioAfterFirstFifth: number;
  requestedCost: number;
  production: number;
  evaluation: number;
  /** The most eval spend of one day (buckets of `callsPerDay` calls). */
  maxDailyEvaluation: number;
  savings: number;
  netSavings: number;
  oracles: OracleSavings;
  /** The oracle's largest share of the workload's calls that keeps it at the bar. */
  oracleShare: number;
  /** The first call served by a cheaper model (calls before it), or null. */
  firstSavingCall: number | null;
}

/** The router under the absolute semantics (the worker simulation) on a workload. */
export interface WorkloadFigures extends ServedFigures {
  finalModel: string;
  certifications: number;
  demotions: number;
}

export interface GroupFigures {
  name: string;
  workloads: number;
  calls: number;
  qualityRatio: number;
  minQualityRatioAfterFirstFifth: number;
  requestedCost: number;
  production: number;
  evaluation: number;
  savings: number;
  netSavings: number;
  oracles: OracleSavings;
  switched: number;
  /** Median calls to the first saving over the workloads that switched; null when none did. */
  medianFirstSaving: number | null;
}

export interface RealRun {
  plan: RealRunPlan;
  workloads: WorkloadFigures[];
  groups: GroupFigures[];
}

/** The router's untouched defaults (the default eval contract), at a workload's traffic and sample rate. */
export function realDataSettings(plan: Pick<RealRunPlan, 'sampleRate' | 'callsPerDay'>): RouterSettings {
  return {
    ...defaultSettings('taskgate'),
    confidence: DEFAULT_CONTRACT.confidence,
    minSamples: DEFAULT_CONTRACT.min_samples,
    sampleRate: plan.sampleRate,
    callsPerDay: plan.callsPerDay,
    // The cooldown is a day of the workload's traffic.
    cooldownCalls: plan.callsPerDay,
  };
}

export function runRealData(data: RecordedData, plan: RealRunPlan, seed: number): RealRun {
  const settings = realDataSettings(plan);
  const runs = data.workloads.map((recorded, id) => {
    const real = realWorkload(data, recorded, id, plan.callsPerWorkload, seed);
    const totals = createTotals(plan.callsPerWorkload, Math.max(1, Math.ceil(plan.callsPerWorkload / plan.callsPerDay)));
    const outcome = simulateWorkload(real.workload, settings, totals, seed, real.source);
    const sum = (values: Float64Array): number => values.reduce((total, value) => total + value, 0);
    const requestedCost = sum(totals.reference);
    const production = sum(totals.production);
    const evaluation = sum(totals.evaluation);
    const switched = outcome.servedFrom.find((entry) => entry.model !== real.workload.reference.name);
    return {
      real,
      figures: {
        name: recorded.name,
        prompts: recorded.prompts.length,
        calls: plan.callsPerWorkload,
        ...servedQuality(real, outcome, plan.callsPerWorkload),
        requestedCost,
        production,
        evaluation,
        maxDailyEvaluation: Math.max(...totals.evaluation),
        savings: 1 - production / requestedCost,
        netSavings: 1 - (production + evaluation) / requestedCost,
        firstSavingCall: switched?.atCall ?? null,
        finalModel: outcome.finalModel,
        certifications: outcome.certifications.length,
        demotions: outcome.demotions.length,
      },
    };
  });
  return { plan, ...summarizeRun(data, runs, plan.callsPerWorkload) };
}

/**
 * Each workload's figures completed with its oracles on the same calls (its
 * random share is the one of all calls together), and the totals per group
 * of workloads (MMLU, GSM8K, all): whatever rule served them.
 */
export function summarizeRun<T extends Omit<ServedFigures, 'oracles' | 'oracleShare'>>(
  data: RecordedData,
  runs: Array<{ real: RealWorkload; figures: T }>,
  calls: number,
): { workloads: Array<T & Pick<ServedFigures, 'oracles' | 'oracleShare'>>; groups: GroupFigures[] } {
  const items = runs.map((run) => oracleItems(run.real, calls));
  const all = computeOracles(runs.map((run, index) => ({ name: run.real.recorded.name, items: items[index] ?? [] })));
  const workloads = runs.map((run, index) => {
    const oracle = all.perWorkload[index];
    return {
      ...run.figures,
      oracles:
        oracle === undefined
          ? { whole: Number.NaN, shares: Number.NaN, randomShare: Number.NaN, perQuery: Number.NaN }
          : oracleSavings(oracle.costs),
      oracleShare: oracle?.share ?? Number.NaN,
    };
  });
  const groups = groupsOf(data.workloads).map(({ name, members }): GroupFigures => {
    const indexes = runs.flatMap((run, index) => (members.includes(run.real.recorded) ? [index] : []));
    const chosen = indexes.map((index) => workloads[index] as T & Pick<ServedFigures, 'oracles' | 'oracleShare'>);
    const oracles = computeOracles(indexes.map((index) => ({ name: runs[index]?.real.recorded.name ?? '', items: items[index] ?? [] })));
    const sum = (key: 'requestedCost' | 'production' | 'evaluation' | 'servedRight' | 'requestedRight' | 'calls'): number =>
      chosen.reduce((total, item) => total + item[key], 0);
    const firstSavings = chosen
      .flatMap((item) => (item.firstSavingCall === null ? [] : [item.firstSavingCall]))
      .sort((left, right) => left - right);
    return {
      name,
      workloads: chosen.length,
      calls: sum('calls'),
      qualityRatio: sum('servedRight') / sum('requestedRight'),
      minQualityRatioAfterFirstFifth: Math.min(...chosen.map((item) => item.qualityRatioAfterFirstFifth)),
      requestedCost: sum('requestedCost'),
      production: sum('production'),
      evaluation: sum('evaluation'),
      savings: 1 - sum('production') / sum('requestedCost'),
      netSavings: 1 - (sum('production') + sum('evaluation')) / sum('requestedCost'),
      oracles: oracleSavings(oracles.total),
      switched: firstSavings.length,
      medianFirstSaving: median(firstSavings),
    };
  });
  return { workloads, groups };
}

/** The lower median of sorted values; null when there are none. */
export function median(sorted: number[]): number | null {
  return sorted.length === 0 ? null : (sorted[Math.floor((sorted.length - 1) / 2)] ?? null);
}

/**
 * The oracles on the data itself, each prompt asked once: `calls` counts
 * every call the same size (the data README's figures), `tokens` costs each
 * by its tokens as the simulation does.
 */
export function dataOracles(
  data: RecordedData,
  basis: 'calls' | 'tokens',
): Array<{ name: string; savings: OracleSavings; randomShare: number; prompts: number; cheapAccuracy: number; requestedAccuracy: number }> {
  const toWorkload = (recorded: RecordedWorkload): OracleWorkload => {
    const real = realWorkload(data, recorded, 0, recorded.prompts.length, 0);
    const items = real.prompts.map((prompt): OracleItem => {
      const costs =
        basis === 'calls' ? { cheapCost: data.cheap.pricePerMillionTokens, requestedCost: data.requested.pricePerMillionTokens } : prompt;
      return {
        cheapCorrect: prompt.cheapCorrect,
        requestedCorrect: prompt.requestedCorrect,
        cheapCost: costs.cheapCost,
        requestedCost: costs.requestedCost,
        count: 1,
      };
    });
    return { name: recorded.name, items };
  };
  return groupsOf(data.workloads).map(({ name, members }) => {
    const result = computeOracles(members.map(toWorkload));
    const prompts = result.perWorkload.reduce((sum, item) => sum + item.calls, 0);
    const right = (key: 'cheapAccuracy' | 'requestedAccuracy'): number =>
      result.perWorkload.reduce((sum, item) => sum + item[key] * item.calls, 0) / prompts;
    return {
      name,
      savings: oracleSavings(result.total),
      randomShare: result.randomShare,
      prompts,
      cheapAccuracy: right('cheapAccuracy'),
      requestedAccuracy: right('requestedAccuracy'),
    };
  });
}

/** MMLU, GSM8K and all workloads (the last group is always all of them). */
export function groupsOf(workloads: RecordedWorkload[]): Array<{ name: string; members: RecordedWorkload[] }> {
  const mmlu = workloads.filter((workload) => workload.suite === 'mmlu');
  const gsm8k = workloads.filter((workload) => workload.suite === 'gsm8k');
  return [
    ...(mmlu.length > 0 ? [{ name: `MMLU (${mmlu.length} subjects)`, members: mmlu }] : []),
    ...(gsm8k.length > 0 ? [{ name: 'GSM8K', members: gsm8k }] : []),
    { name: `all ${workloads.length} workloads`, members: workloads },
  ];
}

/** Who was right on each call, given which model served it. */
function servedQuality(
  real: RealWorkload,
  outcome: WorkloadOutcome,
  calls: number,
): Pick<
  ServedFigures,
  | 'cheapAccuracy'
  | 'requestedAccuracy'
  | 'agreement'
  | 'servedAccuracy'
  | 'servedRight'
  | 'requestedRight'
  | 'qualityRatio'
  | 'qualityRatioAfterFirstFifth'
> {
  const cheapName = real.workload.candidates[0]?.name;
  const firstFifth = Math.floor(calls / 5);
  let segment = 0;
  const counts = { cheap: 0, requested: 0, agree: 0, served: 0, servedLater: 0, requestedLater: 0 };
  for (let call = 0; call < calls; call += 1) {
    while ((outcome.servedFrom[segment + 1]?.atCall ?? Number.POSITIVE_INFINITY) <= call) segment += 1;
    const prompt = real.prompts[real.promptOf(call)];
    if (prompt === undefined) continue;
    const servedRight = outcome.servedFrom[segment]?.model === cheapName ? prompt.cheapCorrect : prompt.requestedCorrect;
    counts.cheap += Number(prompt.cheapCorrect);
    counts.requested += Number(prompt.requestedCorrect);
    counts.agree += Number(prompt.agrees);
    counts.served += Number(servedRight);
    if (call >= firstFifth) {
      counts.servedLater += Number(servedRight);
      counts.requestedLater += Number(prompt.requestedCorrect);
    }
  }
  return {
    cheapAccuracy: counts.cheap / calls,
    requestedAccuracy: counts.requested / calls,
    agreement: counts.agree / calls,
    servedAccuracy: counts.served / calls,
    servedRight: counts.served,
    requestedRight: counts.requested,
    qualityRatio: counts.served / counts.requested,
    qualityRatioAfterFirstFifth: counts.servedLater / counts.requestedLater,
  };
}
