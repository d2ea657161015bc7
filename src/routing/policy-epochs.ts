/**
 * Policy epochs: learning a per-call policy (call-policy.ts) from a
 * workload's paired samples and certifying it on evidence it was not trained
 * on, with the guarantee of a certified share (workload-shares.ts): with
 * probability ≥ 1 − α, at every moment, no certificate the router acts on
 * overstates the workload's quality. A pure state, one per (workload,
 * candidate); the router calls `recordEpochSample` after each sample and
 * `certifiedPolicies` when it routes.
 *
 * ## Three uses of the samples, split in time
 * At freeze points (`firstFreeze` samples, then at every doubling; the
 * schedule depends on the number of samples only):
 *   1. the model trained on every sample so far is frozen ("pending");
 *   2. until the next freeze point, each sample is scored by the pending
 *      model, which never learned from it: honest scores, on that model's
 *      own scale, for `chooseThreshold` (scores of the online model as it
 *      learned are not: its predictions swing from step to step, and a
 *      threshold chosen on them routed nearly every call of the final one);
 *   3. at the next freeze point the pending model and that threshold become
 *      a policy, certified on the samples that come after, and only on them.
 * Every sample also trains the model and counts as held-out evidence for
 * each policy already made. A policy made at sample t is a function of
 * samples 1..t; samples after t are fresh draws of the workload's calls,
 * independent of it; so its evidence is exactly the held-out stream that
 * `certifyPolicy` / `certifiedPolicyShare` assume. Which samples are held out
 * for a policy is fixed before they are seen (those after it is made), never
 * by their outcome. A policy whose threshold would route nothing is not made.
 *
 * ## Why α is split across epochs
 * The k-th policy made (k = 1, 2, …) is certified at α_k = α·p·2^−k, where
 * p is `policyAlphaShare`. Each certificate holds at every moment with
 * probability ≥ 1 − α_k (its own held-out stream), so by the union bound all
 * hold together with probability ≥ 1 − α·p·Σ2^−k ≥ 1 − α·p, however many
 * policies are ever made. The router may then act on any certified policy
 * (the one that saves the most, changing its mind as evidence comes)
 * without a test per look or per choice. Giving every policy the full α
 * would not do: with many policies, one is bound to be certified by luck.
 * The rest of α, α·(1 − p), is for the random share certified on the same
 * samples (`certifiedShare` at `randomShareConfidence`, 1 − α·(1 − p)): the
 * router may then serve whichever of the two saves more and still holds the
 * bar with probability ≥ 1 − α. A router that certifies no random share beside the
 * policies may set p = 1.
 *
 * Only the `activeEpochs` newest policies keep collecting evidence; dropping
 * a certificate never hurts the guarantee.
 */
import {
  chooseThreshold,
  emptyCallModel,
  freezePolicy,
  policyScore,
  routesToCandidate,
  trainCallModel,
  type CallModel,
  type CallPolicy,
  type ScoredSample,
  type TrainingOptions,
} from './call-policy.js';
import type { CallFeatures } from './call-features.js';
import {
  emptyPairedEvidence,
  pairedSampleCount,
  recordPairedSample,
  type PairedSample,
  type PolicyEvidence,
  type QualityBarContract,
} from './paired-quality.js';
import { certifiedPolicyShare, type ShareVerdict } from './workload-shares.js';

export interface PolicyEpochOptions {
  /** Samples before the first policy is frozen; then at every doubling. */
  firstFreeze?: number;
  /** How many of the newest policies keep collecting held-out evidence. */
  activeEpochs?: number;
  /** p: the share of the contract's α the policies spend together (see the file comment). */
  policyAlphaShare?: number;
  training?: TrainingOptions;
}

export interface PolicyEpoch {
  /** k: the k-th policy made on this state, from 1. */
  epoch: number;
  /** Samples seen when it was made: its model and threshold come from those, and it is certified on the later ones. */
  madeAt: number;
  policy: CallPolicy;
  evidence: PolicyEvidence;
  /** Savings of its held-out samples: those it routes, and all. */
  saving: { routed: number; all: number };
}

/** One paired sample of the workload: the call's features, its outcome, and what sending it to the candidate saves (1 when unknown; see call-policy.ts). */
export interface EpochSample {
  features: CallFeatures;
  sample: PairedSample;
  saving?: number;
}

/** A frozen model waiting for its threshold, and its honest scores of the samples since it was frozen, binned. */
export interface PendingModel {
  frozenAt: number;
  /** The frozen model (its threshold unset: −1). */
  model: CallPolicy;
  scored: ScoredSample[];
}

export interface PolicyEpochs {
  /** Trained on every sample. */
  model: CallModel;
  samples: number;
  nextFreeze: number;
  pending: PendingModel | null;
  /** The active policies, oldest first. */
  epochs: PolicyEpoch[];
  /** Policies made so far. */
  made: number;
}

export interface CertifiedPolicy {
  epoch: number;
  verdict: ShareVerdict;
  /** Share of its held-out samples the policy routes. */
  routedShare: number;
  /** verdict.share × routedShare: the share of the workload's calls it may send to the candidate. */
  callShare: number;
  /** verdict.share × the routed share of the held-out samples' saving: the share of the possible saving it may make (a random share s makes s). */
  savingShare: number;
}

/**
 * p, the policies' share of α: small, because most workloads are too small
 * for a policy to win (docs/routing.md), and there the random share pays for
 * the policies' α; a policy that wins does so by far, at any α.
 */
export const DEFAULT_POLICY_ALPHA_SHARE = 0.2;
const DEFAULTS: Required<Omit<PolicyEpochOptions, 'training'>> = {
  firstFreeze: 100,
  activeEpochs: 2,
  policyAlphaShare: DEFAULT_POLICY_ALPHA_SHARE,
};
/** Scores are kept as their logarithm rounded up to a tenth, so a sample's bin is ≤ τ (a bin) exactly when its score is. */
const LOG_BIN = 10;

export function emptyPolicyEpochs(dimension: number, options: PolicyEpochOptions = {}): PolicyEpochs {
  return {
    model: emptyCallModel(dimension),
    samples: 0,
    nextFreeze: options.firstFreeze ?? DEFAULTS.firstFreeze,
    pending: null,
    epochs: [],
    made: 0,
  };
}

/** The confidence of the random share certified beside the policies, on the same samples: 1 − α·(1 − p). */
export function randomShareConfidence(confidence: number, policyAlphaShare = DEFAULTS.policyAlphaShare): number {
  if (!(policyAlphaShare > 0 && policyAlphaShare <= 1)) throw new RangeError(`policyAlphaShare must be in (0, 1], got ${policyAlphaShare}`);
  return 1 - (1 - confidence) * (1 - policyAlphaShare);
}

/** The confidence of the k-th policy's certificate: 1 − α·p·2^−k. */
export function epochConfidence(confidence: number, epoch: number, policyAlphaShare = DEFAULTS.policyAlphaShare): number {
  if (!(Number.isInteger(epoch) && epoch >= 1)) throw new RangeError(`epoch must be an integer ≥ 1, got ${epoch}`);
  if (!(policyAlphaShare > 0 && policyAlphaShare <= 1)) throw new RangeError(`policyAlphaShare must be in (0, 1], got ${policyAlphaShare}`);
  return 1 - (1 - confidence) * policyAlphaShare * 2 ** -epoch;
}

/** The state after one more sample of the workload (pure). */
export function recordEpochSample(
  state: PolicyEpochs,
  observed: EpochSample,
  contract: QualityBarContract,
  options: PolicyEpochOptions = {},
): PolicyEpochs {
  const settings = { ...DEFAULTS, ...options };
  const { features, sample } = observed;
  const saving = observed.saving ?? 1;
  const epochs = state.epochs.map((active) => {
    const routed = routesToCandidate(active.policy, features, saving);
    const side = routed ? 'routed' : 'kept';
    return {
      ...active,
      evidence: { ...active.evidence, [side]: recordPairedSample(active.evidence[side], sample) },
      saving: { routed: active.saving.routed + (routed ? saving : 0), all: active.saving.all + saving },
    };
  });
  const pending =
    state.pending === null
      ? null
      : { ...state.pending, scored: addScored(state.pending.scored, policyScore(state.pending.model, features, saving), sample, saving) };
  const model = trainCallModel(state.model, features, sample.outcome === 'loss', options.training);
  const samples = state.samples + 1;
  if (samples < state.nextFreeze) return { ...state, model, samples, pending, epochs };

  const frozen: PendingModel = { frozenAt: samples, model: freezePolicy(model, -1), scored: [] };
  const next: PolicyEpochs = { model, samples, nextFreeze: state.nextFreeze * 2, pending: frozen, epochs, made: state.made };
  if (pending === null) return next;
  const epoch = state.made + 1;
  const choice = chooseThreshold(pending.scored, contract.qualityBar, {
    ...contract,
    confidence: epochConfidence(contract.confidence, epoch, settings.policyAlphaShare),
    heldOutSamples: samples,
  });
  if (choice.threshold < 0) return next;
  const made: PolicyEpoch = {
    epoch,
    madeAt: samples,
    policy: { ...pending.model, threshold: choice.threshold },
    evidence: { routed: emptyPairedEvidence(), kept: emptyPairedEvidence() },
    saving: { routed: 0, all: 0 },
  };
  return { ...next, made: epoch, epochs: [...epochs, made].slice(-settings.activeEpochs) };
}

/** Every active policy's certificate at its epoch's confidence, and the one that may save the most (null when none sends any call). */
export function certifiedPolicies(
  state: PolicyEpochs,
  contract: QualityBarContract,
  options: PolicyEpochOptions = {},
): { all: CertifiedPolicy[]; best: CertifiedPolicy | null } {
  const share = options.policyAlphaShare ?? DEFAULTS.policyAlphaShare;
  const all = state.epochs.map((active): CertifiedPolicy => {
    const verdict = certifiedPolicyShare(active.evidence, {
      ...contract,
      confidence: epochConfidence(contract.confidence, active.epoch, share),
    });
    const routed = pairedSampleCount(active.evidence.routed);
    const total = routed + pairedSampleCount(active.evidence.kept);
    const routedShare = total === 0 ? 0 : routed / total;
    const savingShare = active.saving.all > 0 ? (verdict.share * active.saving.routed) / active.saving.all : 0;
    return { epoch: active.epoch, verdict, routedShare, callShare: verdict.share * routedShare, savingShare };
  });
  const best = all.reduce<CertifiedPolicy | null>((winner, item) => (item.savingShare > (winner?.savingShare ?? 0) ? item : winner), null);
  return { all, best };
}

/** Counts the sample at its score's bin (the logarithm rounded up to a tenth). */
function addScored(scored: readonly ScoredSample[], score: number, sample: PairedSample, saving: number): ScoredSample[] {
  const binned = Math.exp(Math.ceil(Math.max(-30, Math.min(30, Math.log(score))) * LOG_BIN) / LOG_BIN);
  const clean: PairedSample =
    sample.requestedRight === undefined ? { outcome: sample.outcome } : { outcome: sample.outcome, requestedRight: sample.requestedRight };
  const index = scored.findIndex(
    (item) => item.score === binned && item.sample.outcome === clean.outcome && item.sample.requestedRight === clean.requestedRight,
  );
  if (index === -1) return [...scored, { score: binned, sample: clean, count: 1, saving }];
  return scored.map((item, position) =>
    position === index ? { ...item, count: (item.count ?? 1) + 1, saving: (item.saving ?? item.count ?? 1) + saving } : item,
  );
}
