/**
 * The recorded prompts as the per-call measurements use them (per-call-policy.ts,
 * per-call-curve.ts): each with its features, its recorded answers and costs,
 * and its saving as the router could estimate it; and the paired sample a
 * prompt gives when GPT-4 served it and it is replayed on Mixtral, judged and
 * graded as the router does by default (or with gold grades and a judge
 * never wrong).
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import { callFeatures, type CallFeatures } from '../../../src/routing/call-features.js';
import { ASSUMED_JUDGE_ERROR } from '../../../src/routing/judge-error.js';
import type { PairedOutcome, PairedSample, QualityBarContract } from '../../../src/routing/paired-quality.js';
import type { Random } from '../random.js';
import { JUDGE_OVERHEAD_TOKENS } from './paired-shares.js';
import { realWorkload, type RealPrompt } from './real-workloads.js';
import { REQUESTED_MODEL, type RecordedData } from './routellm-data.js';

/** The share of agreements the judge grades in the design. */
const GRADED_AGREEMENTS = 0.2;

export type Evidence = 'design' | 'gold';

export const EVIDENCE_LABELS: Record<Evidence, string> = {
  design: `a judge (ε ${ASSUMED_JUDGE_ERROR}), 20% of agreements graded`,
  gold: 'gold grades, a judge never wrong',
};

/** The default contract's bar, confidence and min_samples, told the judge's error and how agreements are graded. */
export function perCallContract(evidence: Evidence): QualityBarContract {
  const base = {
    qualityBar: DEFAULT_CONTRACT.quality_bar ?? 0.95,
    confidence: DEFAULT_CONTRACT.confidence,
    minSamples: DEFAULT_CONTRACT.min_samples,
  };
  return evidence === 'gold'
    ? base
    : { ...base, judgeError: ASSUMED_JUDGE_ERROR, gradeError: ASSUMED_JUDGE_ERROR, agreementGradesSampled: true };
}

export interface Item {
  workload: string;
  features: CallFeatures;
  real: RealPrompt;
  /** What sending it to Mixtral saves, in tokens as the router could estimate them: the prompt's, and the workload's mean completion. */
  saving: number;
}

/** Every workload's prompts as items, in the data's order. */
export function perCallItems(data: RecordedData, seed: number): Item[][] {
  return data.workloads.map((recorded, id) => {
    const real = realWorkload(data, recorded, id, recorded.prompts.length, seed);
    const completion = real.prompts.reduce((sum, prompt) => sum + prompt.tokens.requestedCompletion, 0) / real.prompts.length;
    return recorded.prompts.map((prompt, index): Item => {
      const recordedPrompt = real.prompts[index] as RealPrompt;
      return {
        workload: recorded.name,
        features: callFeatures({ messages: [{ role: 'user', content: prompt.text }] }),
        real: recordedPrompt,
        saving: recordedPrompt.tokens.prompt + completion,
      };
    });
  });
}

/** A paired sample of a prompt (GPT-4 served it, replayed on Mixtral) and its eval spend: a judge priced as GPT-4 on disagreements, wrong with probability ε; the same judge grades GPT-4's reply on a random 20% of agreements. */
export function pairedSample(prompt: RealPrompt, evidence: Evidence, random: Random): { sample: PairedSample; spend: number } {
  const judgeUsd = (tokens: number): number => ((tokens + JUDGE_OVERHEAD_TOKENS) * REQUESTED_MODEL.pricePerMillionTokens) / 1e6;
  let spend = prompt.cheapCost;
  const truth: PairedOutcome = prompt.cheapCorrect === prompt.requestedCorrect ? 'tie' : prompt.cheapCorrect ? 'win' : 'loss';
  if (evidence === 'gold') return { sample: { outcome: prompt.agrees ? 'same' : truth, requestedRight: prompt.requestedCorrect }, spend };
  const judgeError = ASSUMED_JUDGE_ERROR;
  if (!prompt.agrees) {
    spend += judgeUsd(prompt.tokens.prompt + prompt.tokens.cheapCompletion + prompt.tokens.requestedCompletion);
    // The data's truth, reversed with probability ε (a tie read as a win or a loss at random).
    const outcome: PairedOutcome = !(random() < judgeError)
      ? truth
      : truth === 'tie'
        ? random() < 0.5
          ? 'win'
          : 'loss'
        : truth === 'win'
          ? 'loss'
          : 'win';
    return { sample: { outcome }, spend };
  }
  if (!(random() < GRADED_AGREEMENTS)) return { sample: { outcome: 'same' }, spend };
  spend += judgeUsd(prompt.tokens.prompt + prompt.tokens.requestedCompletion);
  return { sample: { outcome: 'same', requestedRight: random() < judgeError ? !prompt.requestedCorrect : prompt.requestedCorrect }, spend };
}

export function shuffle<T>(items: readonly T[], random: Random): T[] {
  const shuffled = [...items];
  for (let index = shuffled.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [shuffled[index], shuffled[other]] = [shuffled[other] as T, shuffled[index] as T];
  }
  return shuffled;
}
