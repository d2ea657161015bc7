/**
 * Shares of a workload: the largest share of its calls that may go to
 * cheaper models while the workload's quality stays within the bar
 * (DESIGN §5 "Routes split workloads"; issue 37 item 2). Pure functions of
 * the paired evidence of paired-quality.ts.
 *
 * ## One candidate
 * Send a share s of the calls, chosen at random, to C and the rest to R.
 * The workload's quality is s·E[c] + (1 − s)·E[r], and it stays ≥ bar·E[r]
 *   ⇔ s·(E[c] − E[r]) + (1 − bar)·E[r] ≥ 0 ⇔ s·E[d] + (1 − bar)·E[r] ≥ 0.
 * Take anytime-valid lower bounds L_d ≤ E[d] and L_r ≤ E[r], each at α/2,
 * so both hold at every n at once with probability ≥ 1 − α (union bound).
 * Since s ≥ 0 and E[r] ≥ 0,
 *   s·E[d] + (1 − bar)·E[r] ≥ s·L_d + (1 − bar)·max(0, L_r),
 * so every s where the right side is ≥ 0 is certified, and the largest is
 *   s* = 1                                         when L_d ≥ 0,
 *   s* = min(1, (1 − bar)·max(0, L_r) / (−L_d))    otherwise.
 * The bounds cover every s at once, so s* may be recomputed after every
 * sample: it grows with evidence (L_d and L_r rise towards E[d] and E[r])
 * and the route takes it as it comes; drift is the rollback detector's job.
 *
 * s ≤ 1 − bar would be safe even with no evidence (c ≥ 0 keeps the quality
 * ≥ (1 − s)·E[r]); it is not granted: a share goes to a model only on
 * evidence, and with none the share is 0.
 *
 * `passesQualityBar` (paired-quality.ts) tests s = 1 differently: one bound
 * on d̲ + (1 − bar)·r̲ at the full α, tighter than s* = 1 here. A route
 * decides with one of the two on a stream of evidence, never the better of
 * both (that is two tests, with an error up to 2α).
 *
 * ## A share of a policy's picks
 * Sending a random fraction f of the calls a policy π picks: the quality is
 * E[r] + f·E[π·d], the same formula with d replaced by π·d (held-out
 * evidence, `PolicyEvidence`). f = 1 is the policy itself.
 *
 * ## Several candidates
 * Shares s_j to candidates C_j (each call sent to at most one, at random):
 *   Σ_j s_j·E[d_j] + (1 − bar)·E[r] ≥ 0,   Σ_j s_j ≤ 1.
 * With every L_{d_j} and L_r at α/(k + 1) (k candidates), the certified
 * shares that save the most maximise Σ s_j·saving_j subject to
 *   Σ s_j ≤ 1,   Σ s_j·(−L_{d_j}) ≤ (1 − bar)·max(0, L_r),   s ≥ 0:
 * a linear programme with two constraints, whose optimum sits on a vertex
 * with at most two non-zero shares. Enumerating single candidates and pairs
 * solves it exactly. A candidate certified better than R (L_d > 0) adds
 * slack, which a cheaper one may then spend. Pass every candidate that may
 * get a share every time, with or without evidence: α is split over the
 * list, which therefore must not depend on the outcomes.
 */
import { meanLowerBound } from './bounded-mean-sequence.js';
import {
  checkContract,
  DIFF_RANGE,
  emptyPairedEvidence,
  mergeEvidence,
  pairedSampleCount,
  requestedQualityLower,
  sampleValues,
  type PairedEvidence,
  type PolicyEvidence,
  type QualityBarContract,
} from './paired-quality.js';

export interface ShareVerdict {
  /** The largest certified share in [0, 1]. */
  share: number;
  /** Anytime-valid lower bound on E[c − r] (E[π·(c − r)] for a policy), at α/2. */
  diffLower: number;
  /** Anytime-valid lower bound on E[r], at α/2. */
  requestedLower: number;
  samples: number;
}

export interface ShareCandidate {
  model: string;
  /** Expected USD saved per call sent to it instead of R (R's cost minus its own); ≤ 0: never gets a share. */
  savingPerCall: number;
  /** Its paired evidence against R on the workload. */
  evidence: PairedEvidence;
}

export interface ShareAllocation {
  /** One per candidate, in the order given; they sum to at most 1, the rest stays on R. */
  shares: { model: string; share: number; diffLower: number }[];
  requestedLower: number;
  /** Σ share × savingPerCall: the expected saving per call of the workload. */
  savingPerCall: number;
}

/** The largest share s with s·L_d + (1 − bar)·max(0, L_r) ≥ 0, in [0, 1]. */
export function shareFromBounds(diffLower: number, requestedLower: number, qualityBar: number): number {
  if (diffLower >= 0) return 1;
  return Math.min(1, ((1 - qualityBar) * Math.max(0, requestedLower)) / -diffLower);
}

/** The largest certified share of the workload's calls, chosen at random, that may go to the candidate. */
export function certifiedShare(evidence: PairedEvidence, contract: QualityBarContract): ShareVerdict {
  return certifiedPolicyShare({ routed: evidence, kept: emptyPairedEvidence() }, contract);
}

/** The largest certified fraction of the calls a policy picks that may go to the candidate (1: the whole policy). */
export function certifiedPolicyShare(evidence: PolicyEvidence, contract: QualityBarContract): ShareVerdict {
  checkContract(contract);
  const samples = pairedSampleCount(evidence.routed) + pairedSampleCount(evidence.kept);
  const sided = 1 - (1 - contract.confidence) / 2;
  const { diffLower, requestedLower } = lowerBounds(evidence, contract, sided);
  const share = samples >= (contract.minSamples ?? 0) ? shareFromBounds(diffLower, requestedLower, contract.qualityBar) : 0;
  return { share, diffLower, requestedLower, samples };
}

/**
 * Certified shares for several candidates at once that save the most;
 * `requested` is the evidence that bounds E[r] (one stream: the same calls
 * replayed on two candidates must not count twice; e.g. the candidate with
 * the most samples). Two candidates share the calls only when that saves
 * `minPairGain` (a fraction, default 0) more than the best one alone.
 */
export function certifiedShares(
  requested: PairedEvidence,
  candidates: readonly ShareCandidate[],
  contract: QualityBarContract,
  options: { minPairGain?: number } = {},
): ShareAllocation {
  checkContract(contract);
  const level = 1 - (1 - contract.confidence) / (candidates.length + 1);
  const requestedLower = lowerBounds({ routed: requested, kept: emptyPairedEvidence() }, contract, level).requestedLower;
  const budget = (1 - contract.qualityBar) * Math.max(0, requestedLower);
  const diffLowers = candidates.map(
    (candidate) => lowerBounds({ routed: candidate.evidence, kept: emptyPairedEvidence() }, contract, level).diffLower,
  );
  const eligible = candidates.flatMap((candidate, index) =>
    candidate.savingPerCall > 0 && pairedSampleCount(candidate.evidence) >= (contract.minSamples ?? 0)
      ? [{ index, saving: candidate.savingPerCall, cost: -(diffLowers[index] ?? DIFF_RANGE.min) }]
      : [],
  );
  type Allocation = { saving: number; shares: Map<number, number> };
  const consider = (best: Allocation, shares: Map<number, number>): Allocation => {
    let saving = 0;
    for (const [index, share] of shares) saving += share * (candidates[index]?.savingPerCall ?? 0);
    return saving > best.saving ? { saving, shares } : best;
  };
  let single: Allocation = { saving: 0, shares: new Map() };
  let pair: Allocation = single;
  for (const [position, one] of eligible.entries()) {
    single = consider(single, new Map([[one.index, one.cost <= 0 ? 1 : Math.min(1, budget / one.cost)]]));
    for (const other of eligible.slice(position + 1)) {
      if (one.cost === other.cost) continue;
      // Both constraints tight: s_one + s_other = 1 and s_one·cost_one + s_other·cost_other = budget.
      const shareOne = (budget - other.cost) / (one.cost - other.cost);
      if (shareOne >= 0 && shareOne <= 1)
        pair = consider(
          pair,
          new Map([
            [one.index, shareOne],
            [other.index, 1 - shareOne],
          ]),
        );
    }
  }
  const best = pair.saving > single.saving * (1 + (options.minPairGain ?? 0)) ? pair : single;
  return {
    shares: candidates.map((candidate, index) => ({
      model: candidate.model,
      share: best.shares.get(index) ?? 0,
      diffLower: diffLowers[index] ?? DIFF_RANGE.min,
    })),
    requestedLower,
    savingPerCall: best.saving,
  };
}

function lowerBounds(evidence: PolicyEvidence, contract: QualityBarContract, level: number): { diffLower: number; requestedLower: number } {
  const values = sampleValues(evidence, contract);
  return {
    diffLower: meanLowerBound(
      values.map((value) => ({ value: value.diff, count: value.count })),
      DIFF_RANGE,
      level,
    ),
    requestedLower: requestedQualityLower(mergeEvidence(evidence.routed, evidence.kept), level, contract),
  };
}
