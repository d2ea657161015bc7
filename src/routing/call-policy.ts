/**
 * A per-call policy (issue 37 item 3): which calls of a workload the
 * candidate C may answer in place of the requested model R, learned from the
 * workload's own paired samples (paired-quality.ts) on the request's
 * features (call-features.ts).
 *
 * The model: L2-regularised logistic regression for P(loss | x), the chance
 * that C's reply is worse than R's (outcome `loss`; `same`, `tie` and `win`
 * are not losses), trained online, one stochastic gradient step per sample
 * (Bottou's schedule η_t = η₀ / (1 + λ·η₀·t); the L2 decay is kept as one
 * scale factor, so a step costs the sample's non-zero features, not the
 * dimension). The weights are plain numbers, JSON as they are.
 *
 * A policy is a model frozen with a threshold τ: send x to C iff
 *   P(loss | x) ≤ τ · saving(x),
 * where saving(x) is what sending x to C would save, in any unit fixed for
 * the workload (its estimated tokens will do; 1 for every call when unknown,
 * which is the plain rule "predicted loss ≤ τ"). It must be a function of
 * the request alone, known before the call: the policy is then still fixed
 * before its held-out samples, as its certificate requires. Why the saving: the policy
 * wants the most saving for the quality it may spend, Σ π·saving subject to
 * E[π·d] + (1 − bar)·E[r] ≥ 0, a knapsack whose best fill takes calls in
 * increasing order of expected quality lost per unit saved, E[−d | x] /
 * saving(x), of which P(loss | x) / saving(x) is the estimate (wins ignored).
 * On a workload whose calls differ in length this matters more than the
 * words: the bar counts calls, the bill counts tokens (docs/routing.md).
 *
 * Its quality is E[r] + E[π·d] (paired-quality.ts), so it keeps the bar
 * when E[π·d] + (1 − bar)·E[r] ≥ 0. `chooseThreshold` picks τ on training
 * samples: the τ whose certificate, were the held-out evidence to look like
 * the training samples, would save the most (the routed share of the saving
 * × the certified fraction of `certifiedPolicyShare`). That margin is the
 * one the certificate will apply, so it shrinks as evidence grows; a τ that
 * routes more but needs a large margin loses to a smaller one.
 *
 * Training samples must be scored honestly, by the frozen model on samples
 * it did not learn from (policy-epochs.ts): on samples it learned from, its
 * predictions already know the answers and τ routes too much; and the online
 * model's own predictions as it learned swing from step to step, on another
 * scale than the frozen model's. Whatever τ is, only held-out evidence
 * certifies the policy.
 */
import { recordPairedSample, emptyPairedEvidence, type EvidenceErrors, type PairedSample, type PolicyEvidence } from './paired-quality.js';
import type { CallFeatures } from './call-features.js';
import { certifiedPolicyShare } from './workload-shares.js';

/** The online model: w = scale · weights (the L2 decay is the scale). */
export interface CallModel {
  dimension: number;
  weights: number[];
  scale: number;
  bias: number;
  /** Steps taken: t in the learning-rate schedule. */
  updates: number;
}

export interface TrainingOptions {
  /** λ: L2 penalty per sample. */
  regularization?: number;
  /** η₀. */
  learningRate?: number;
}

/** A frozen model and its threshold: send a call to the candidate iff its predicted loss ≤ threshold × its saving (threshold < 0: send none). */
export interface CallPolicy {
  dimension: number;
  weights: number[];
  bias: number;
  threshold: number;
}

/** Training samples with one honest score (see the file comment). */
export interface ScoredSample {
  /** P(loss | x) / saving(x): routed iff ≤ τ. */
  score: number;
  sample: PairedSample;
  /** How many samples the entry stands for (1 by default), and their savings together (`count` by default). */
  count?: number;
  saving?: number;
}

export interface ThresholdOptions extends EvidenceErrors {
  /** The confidence the policy will be certified at (its epoch's, policy-epochs.ts). */
  confidence: number;
  /** How many held-out samples the certificate is expected to see; the training samples' number by default. */
  heldOutSamples?: number;
  /** Thresholds tried: at most this many quantiles of the scores (each a certificate's cost). */
  candidates?: number;
}

export interface ThresholdChoice {
  /** < 0 when no threshold is expected to be certified: the policy sends nothing. */
  threshold: number;
  /** Share of the training samples it routes. */
  routedShare: number;
  /** Share of the training samples' saving it routes × the fraction certified on look-alike held-out evidence: the share of the possible saving it is expected to make. */
  expectedSaving: number;
}

const TRAINING_DEFAULTS: Required<TrainingOptions> = { regularization: 1e-3, learningRate: 0.5 };
/** Below this the scale is folded into the weights, before it underflows. */
const SMALLEST_SCALE = 1e-6;

export function emptyCallModel(dimension: number): CallModel {
  return { dimension, weights: new Array<number>(dimension).fill(0), scale: 1, bias: 0, updates: 0 };
}

/** The model's logit of P(loss | x). */
export function lossLogit(model: CallModel | CallPolicy, features: CallFeatures): number {
  if (features.dimension !== model.dimension)
    throw new RangeError(`features of dimension ${features.dimension} for a model of ${model.dimension}`);
  let sum = 0;
  for (let index = 0; index < features.indices.length; index += 1)
    sum += (model.weights[features.indices[index] ?? 0] ?? 0) * (features.values[index] ?? 0);
  return model.bias + ('scale' in model ? model.scale : 1) * sum;
}

export function lossProbability(model: CallModel | CallPolicy, features: CallFeatures): number {
  return 1 / (1 + Math.exp(-lossLogit(model, features)));
}

/** The model after one step on (x, whether C lost). Pure: the weights are copied (the router takes few samples; the bench trains in place with `trainInPlace`). */
export function trainCallModel(model: CallModel, features: CallFeatures, loss: boolean, options: TrainingOptions = {}): CallModel {
  const next = { ...model, weights: [...model.weights] };
  trainInPlace(next, features, loss, options);
  return next;
}

/** One step, changing `model`: for a caller that owns it. */
export function trainInPlace(model: CallModel, features: CallFeatures, loss: boolean, options: TrainingOptions = {}): void {
  const { regularization, learningRate } = { ...TRAINING_DEFAULTS, ...options };
  const rate = learningRate / (1 + regularization * learningRate * model.updates);
  const gradient = lossProbability(model, features) - (loss ? 1 : 0);
  model.scale *= 1 - rate * regularization;
  const step = (rate * gradient) / model.scale;
  for (let index = 0; index < features.indices.length; index += 1) {
    const at = features.indices[index] ?? 0;
    model.weights[at] = (model.weights[at] ?? 0) - step * (features.values[index] ?? 0);
  }
  model.bias -= rate * gradient;
  model.updates += 1;
  if (model.scale < SMALLEST_SCALE) foldScale(model);
}

/** The model frozen with a threshold; the weights are copied. */
export function freezePolicy(model: CallModel, threshold: number): CallPolicy {
  return { dimension: model.dimension, weights: model.weights.map((weight) => weight * model.scale), bias: model.bias, threshold };
}

/** P(loss | x) / saving(x), the quantity the threshold cuts. */
export function policyScore(model: CallModel | CallPolicy, features: CallFeatures, saving = 1): number {
  if (!(saving > 0)) throw new RangeError(`saving must be positive, got ${saving}`);
  return lossProbability(model, features) / saving;
}

export function routesToCandidate(policy: CallPolicy, features: CallFeatures, saving = 1): boolean {
  return policy.threshold >= 0 && policyScore(policy, features, saving) <= policy.threshold;
}

/** The evidence a set of samples would be, were each routed when its score ≤ threshold. */
export function evidenceAtThreshold(samples: readonly ScoredSample[], threshold: number): PolicyEvidence {
  let evidence: PolicyEvidence = { routed: emptyPairedEvidence(), kept: emptyPairedEvidence() };
  for (const scored of samples) {
    const side = scored.score <= threshold ? 'routed' : 'kept';
    evidence = { ...evidence, [side]: recordPairedSample(evidence[side], scored.sample, scored.count ?? 1) };
  }
  return evidence;
}

/** The threshold expected to save the most once certified (see the file comment). */
export function chooseThreshold(samples: readonly ScoredSample[], qualityBar: number, options: ThresholdOptions): ThresholdChoice {
  const count = (scored: ScoredSample): number => scored.count ?? 1;
  const saving = (scored: ScoredSample): number => scored.saving ?? count(scored);
  const total = samples.reduce((sum, scored) => sum + count(scored), 0);
  const totalSaving = samples.reduce((sum, scored) => sum + saving(scored), 0);
  const none: ThresholdChoice = { threshold: -1, routedShare: 0, expectedSaving: 0 };
  if (total === 0 || !(totalSaving > 0)) return none;
  // The held-out mean will differ from the training one by the noise of both: project at the sample size of that difference.
  const heldOut = options.heldOutSamples ?? total;
  const effective = (heldOut * total) / (heldOut + total);
  const contract = { ...options, qualityBar };
  const scaled = samples.map((scored) => ({ ...scored, count: Math.round((count(scored) * effective) / total) }));
  let best = none;
  for (const threshold of candidateThresholds(samples, options.candidates ?? 48)) {
    const routed = samples.filter((scored) => scored.score <= threshold);
    const routedSaving = routed.reduce((sum, scored) => sum + saving(scored), 0) / totalSaving;
    const expectedSaving = routedSaving * certifiedPolicyShare(evidenceAtThreshold(scaled, threshold), contract).share;
    if (expectedSaving > best.expectedSaving)
      best = { threshold, routedShare: routed.reduce((sum, scored) => sum + count(scored), 0) / total, expectedSaving };
  }
  return best;
}

/** Up to `count` distinct scores at evenly spaced ranks (the largest among them), each a threshold that routes the samples at or below it. */
function candidateThresholds(samples: readonly ScoredSample[], count: number): number[] {
  const scores = [...new Set(samples.map((scored) => scored.score))].sort((left, right) => left - right);
  if (scores.length <= count) return scores;
  return Array.from(
    { length: count },
    (_, index) => scores[Math.min(scores.length - 1, Math.round(((index + 1) * scores.length) / count) - 1)] ?? 1,
  );
}

function foldScale(model: CallModel): void {
  for (let index = 0; index < model.weights.length; index += 1) model.weights[index] = (model.weights[index] ?? 0) * model.scale;
  model.scale = 1;
}
