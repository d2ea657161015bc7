/**
 * The "paired shares" rule: issue 37's paired-comparison design, simulated
 * on one recorded workload before it is wired into the router. It uses the
 * pure statistics the router will use (src/routing/paired-quality.ts,
 * workload-shares.ts); the loop around them is this file's guess at the
 * production wiring, kept simple:
 *
 * - Routing: each call goes to the candidate (Mixtral) with probability the
 *   currently certified share (`certifiedShare`, quality_bar 0.95,
 *   confidence 0.95, min_samples 50), else to the requested model (GPT-4).
 *   The share starts at 0 and is recomputed after every sample (after 200
 *   samples, every 1% more: the bounds hold at every n, so looking less
 *   often costs nothing in validity).
 * - Sampling: each call at the plan's rate, independently of its content and
 *   of where it went, so the samples are a random sample of the workload's
 *   calls, whoever served them. A call served by GPT-4 is replayed on
 *   Mixtral, one served by Mixtral on GPT-4; the eval spend is the replay.
 * - Comparing: equal answers are "same" (no judge). Different answers go to a
 *   judge priced as GPT-4 on the prompt, both replies and
 *   `JUDGE_OVERHEAD_TOKENS`; its verdict is the truth from the data (win,
 *   loss, or tie when both are wrong), wrong with probability ε (a win or
 *   loss reversed, a tie read as a win or a loss at random).
 * - Grades of GPT-4's reply (the bound on E[r]): a gateway has no gold
 *   answers, so by default the judge grades GPT-4's reply on a random 20% of
 *   the agreements (priced on the prompt, one reply and the overhead; wrong
 *   with probability ε), and the contract sets `agreementGradesSampled`.
 *   Verdicts already say who was right on a disagreement. Variants grade
 *   every agreement, or read gold grades on every sample for free (what no
 *   gateway has: the ceiling of better grades). Other variants price the
 *   judge as Mixtral, or replay only calls GPT-4 served (still a random
 *   sample of the calls, because a call's route is drawn at random), or
 *   never stop sampling; every variant keeps the design's sample rate.
 * - Stopping: sampling stops for good once the share is certified at 1, or
 *   once the saving still possible is below what more evidence would cost:
 *   (ŝ − s) · saving per call · calls left < eval spend per sample so far × n,
 *   where ŝ is the share the sample means would give (1 before min_samples),
 *   s the certified share, and n the samples so far (the bounds narrow by
 *   about √2 when the evidence doubles, so "as many again" stands for the
 *   samples still needed). Calls left: those left in the run, which the
 *   simulation knows; production would take a payback window of traffic.
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import { emptyPairedEvidence, pairedSampleCount, recordPairedSample, sampleValues, type PairedEvidence, type PairedOutcome, type QualityBarContract } from '../../../src/routing/paired-quality.js';
import { certifiedShare, shareFromBounds } from '../../../src/routing/workload-shares.js';
import { createRandom, seedFor } from '../random.js';
import type { RealPrompt, RealWorkload } from './real-workloads.js';
import type { RecordedModel } from './routellm-data.js';

/** The judge's instructions and its short verdict, on top of the prompt and the replies it reads. */
export const JUDGE_OVERHEAD_TOKENS = 60;
/** The share is recomputed after every sample up to this many, then after every 1% more. */
const EVERY_SAMPLE_UNTIL = 200;

export interface PairedSharesVariant {
  label: string;
  /** ε: how often the judge's verdict (or grade) is wrong; the contract is told the same ε. */
  judgeError: number;
  /** Who grades GPT-4's reply: the judge on a random share of the agreements, or the data's gold answers on every sample at no cost. */
  grading: { by: 'judge'; agreementShare: number } | { by: 'gold' };
  /** Whose price the judge has: GPT-4's (the design) or Mixtral's (what a cheap judge with the same ε would change). */
  judgePrice: 'requested' | 'cheap';
  /** Which sampled calls are replayed: any (the design) or only those GPT-4 served (no GPT-4 replays). */
  replay: 'any call' | 'calls GPT-4 served';
  /** When sampling stops: by the rule above (the design), or never (what the statistics reach on all the evidence the rate gives, spend ignored). */
  stopping: 'when not worth it' | 'never';
}

export const PAIRED_SHARES: PairedSharesVariant = { label: 'paired shares', judgeError: 0.02, grading: { by: 'judge', agreementShare: 0.2 }, judgePrice: 'requested', replay: 'any call', stopping: 'when not worth it' };

export interface PairedSharesPlan {
  calls: number;
  callsPerDay: number;
  /** A fixed rate, or `budget`: the largest rate at which even the dearest sample (a Mixtral-served call replayed on GPT-4 and judged) keeps a day's spend within `dailyBudgetUsd`. */
  sampleRate: number | 'budget';
  dailyBudgetUsd: number;
}

export interface PairedSharesOutcome {
  sampleRate: number;
  samples: number;
  /** The call at which sampling stopped, and why; null if it never did. */
  stopped: { atCall: number; reason: 'share 1' | 'not worth it' } | null;
  /** The certified share at the end, and its bounds. */
  share: number;
  diffLower: number;
  requestedLower: number;
  /** The first call served by Mixtral (calls before it), or null. */
  firstSavingCall: number | null;
  requestedCost: number;
  production: number;
  spend: { replays: number; verdicts: number; grades: number };
  maxDailyEvaluation: number;
  served: { right: number; requestedRight: number; rightLater: number; requestedRightLater: number };
}

export function pairedContract(variant: PairedSharesVariant): QualityBarContract {
  const judged = variant.grading.by === 'judge';
  return {
    qualityBar: 0.95,
    confidence: DEFAULT_CONTRACT.confidence,
    minSamples: DEFAULT_CONTRACT.min_samples,
    judgeError: variant.judgeError,
    gradeError: judged ? variant.judgeError : 0,
    agreementGradesSampled: variant.grading.by === 'judge' && variant.grading.agreementShare < 1,
  };
}

export function simulatePairedShares(real: RealWorkload, models: { requested: RecordedModel; cheap: RecordedModel }, plan: PairedSharesPlan, variant: PairedSharesVariant, seed: number): PairedSharesOutcome {
  // One stream for every variant (common random numbers): they route and sample the same calls until their shares differ.
  const random = createRandom(seedFor(seed, 'paired shares', real.recorded.name));
  const contract = pairedContract(variant);
  const usd = (tokens: number, model: RecordedModel): number => ((tokens + JUDGE_OVERHEAD_TOKENS) * model.pricePerMillionTokens) / 1e6;
  const judgeUsd = (tokens: number): number => usd(tokens, variant.judgePrice === 'cheap' ? models.cheap : models.requested);
  // The rate is the design's whatever the variant: a GPT-4 replay and a GPT-4-priced verdict per sample at most.
  const designVerdictCost = (prompt: RealPrompt): number => usd(prompt.tokens.prompt + prompt.tokens.cheapCompletion + prompt.tokens.requestedCompletion, models.requested);
  const verdictCost = (prompt: RealPrompt): number => judgeUsd(prompt.tokens.prompt + prompt.tokens.cheapCompletion + prompt.tokens.requestedCompletion);
  const gradeCost = (prompt: RealPrompt): number => judgeUsd(prompt.tokens.prompt + prompt.tokens.requestedCompletion);
  const mean = (value: (prompt: RealPrompt) => number): number => real.prompts.reduce((sum, prompt) => sum + value(prompt), 0) / real.prompts.length;
  const savingPerCall = mean((prompt) => prompt.requestedCost - prompt.cheapCost);
  const sampleRate = plan.sampleRate === 'budget' ? Math.min(1, plan.dailyBudgetUsd / (plan.callsPerDay * mean((prompt) => prompt.requestedCost + designVerdictCost(prompt)))) : plan.sampleRate;

  let evidence: PairedEvidence = emptyPairedEvidence();
  let verdict = certifiedShare(evidence, contract);
  let nextCheck = 1;
  let sampling = sampleRate > 0;
  let stopped: PairedSharesOutcome['stopped'] = null;
  let firstSavingCall: number | null = null;
  const spend = { replays: 0, verdicts: 0, grades: 0 };
  const daily = new Float64Array(Math.max(1, Math.ceil(plan.calls / plan.callsPerDay)));
  const served = { right: 0, requestedRight: 0, rightLater: 0, requestedRightLater: 0 };
  let requestedCost = 0;
  let production = 0;
  const firstFifth = Math.floor(plan.calls / 5);

  for (let call = 0; call < plan.calls; call += 1) {
    const prompt = real.prompts[real.promptOf(call)];
    if (prompt === undefined) throw new Error(`no prompt for call ${call}`);
    const toCheap = verdict.share > 0 && random() < verdict.share;
    if (toCheap && firstSavingCall === null) firstSavingCall = call;
    const right = toCheap ? prompt.cheapCorrect : prompt.requestedCorrect;
    requestedCost += prompt.requestedCost;
    production += toCheap ? prompt.cheapCost : prompt.requestedCost;
    served.right += Number(right);
    served.requestedRight += Number(prompt.requestedCorrect);
    if (call >= firstFifth) {
      served.rightLater += Number(right);
      served.requestedRightLater += Number(prompt.requestedCorrect);
    }
    if (!sampling || random() >= sampleRate || (toCheap && variant.replay === 'calls GPT-4 served')) continue;

    const day = Math.min(daily.length - 1, Math.floor(call / plan.callsPerDay));
    const pay = (kind: keyof typeof spend, amount: number): void => {
      spend[kind] += amount;
      daily[day] = (daily[day] ?? 0) + amount;
    };
    pay('replays', toCheap ? prompt.requestedCost : prompt.cheapCost);
    const outcome = prompt.agrees ? 'same' : judgeVerdict(prompt, variant.judgeError, random);
    if (outcome !== 'same') pay('verdicts', verdictCost(prompt));
    let requestedRight: boolean | undefined;
    if (variant.grading.by === 'gold') requestedRight = prompt.requestedCorrect;
    else if (outcome === 'same' && random() < variant.grading.agreementShare) {
      pay('grades', gradeCost(prompt));
      requestedRight = random() < variant.judgeError ? !prompt.requestedCorrect : prompt.requestedCorrect;
    }
    evidence = recordPairedSample(evidence, requestedRight === undefined ? { outcome } : { outcome, requestedRight });

    const samples = pairedSampleCount(evidence);
    if (samples < nextCheck) continue;
    nextCheck = samples < EVERY_SAMPLE_UNTIL ? samples + 1 : Math.ceil(samples * 1.01);
    verdict = certifiedShare(evidence, contract);
    const evalPerSample = (spend.replays + spend.verdicts + spend.grades) / samples;
    const possible = samples < (contract.minSamples ?? 0) ? 1 : estimatedShare(evidence, contract);
    const left = plan.calls - call - 1;
    if (verdict.share >= 1) stopped = { atCall: call + 1, reason: 'share 1' };
    else if (variant.stopping === 'never') continue;
    else if (Math.max(0, possible - verdict.share) * savingPerCall * left < evalPerSample * samples) stopped = { atCall: call + 1, reason: 'not worth it' };
    if (stopped !== null) sampling = false;
  }
  return {
    sampleRate,
    samples: pairedSampleCount(evidence),
    stopped,
    share: verdict.share,
    diffLower: verdict.diffLower,
    requestedLower: verdict.requestedLower,
    firstSavingCall,
    requestedCost,
    production,
    spend,
    maxDailyEvaluation: Math.max(...daily),
    served,
  };
}

/** The judge's verdict on a disagreement: the truth from the data, wrong with probability ε. */
function judgeVerdict(prompt: RealPrompt, judgeError: number, random: () => number): PairedOutcome {
  const truth: PairedOutcome = prompt.cheapCorrect === prompt.requestedCorrect ? 'tie' : prompt.cheapCorrect ? 'win' : 'loss';
  if (!(random() < judgeError)) return truth;
  if (truth === 'tie') return random() < 0.5 ? 'win' : 'loss';
  return truth === 'win' ? 'loss' : 'win';
}

/**
 * The share the sample means would certify (no confidence margin): what the
 * evidence suggests is there to win. E[r] from the graded agreements when
 * they are a sample of them (1 while none is graded: optimistic, so that
 * sampling goes on).
 */
function estimatedShare(evidence: PairedEvidence, contract: QualityBarContract): number {
  const values = sampleValues({ routed: evidence, kept: emptyPairedEvidence() }, contract);
  const samples = pairedSampleCount(evidence);
  const total = (pick: (value: (typeof values)[number]) => number): number => values.reduce((sum, value) => sum + value.count * pick(value), 0);
  const diff = total((value) => value.diff) / samples;
  let requested = total((value) => value.requested) / samples;
  if (contract.agreementGradesSampled === true) {
    const agreements = total((value) => Number(value.agreement));
    const graded = values.filter((value) => value.agreement && value.graded);
    const gradedCount = graded.reduce((sum, value) => sum + value.count, 0);
    const gradedMean = gradedCount === 0 ? 1 : graded.reduce((sum, value) => sum + value.count * value.requested, 0) / gradedCount;
    requested = total((value) => (value.agreement ? 0 : value.requested)) / samples + (agreements / samples) * gradedMean;
  }
  return shareFromBounds(diff, requested, contract.qualityBar);
}
