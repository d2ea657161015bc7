import { describe, expect, it } from 'vitest';
import { emptyPairedEvidence, recordPairedSample, type PairedEvidence, type QualityBarContract } from './paired-quality.js';
import { certifiedPolicyShare, certifiedShare, certifiedShares, shareFromBounds } from './workload-shares.js';
import { drawSample, type Joint } from '../../test/helpers/paired-samples.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';

function evidenceFor(joint: Joint, seed: number, count: number): PairedEvidence {
  const random = seededRandom(seed);
  let evidence = emptyPairedEvidence();
  for (let index = 0; index < count; index += 1) evidence = recordPairedSample(evidence, drawSample(joint, random));
  return evidence;
}

const contract: QualityBarContract = { qualityBar: 0.95, confidence: 0.95 };
/** RouteLLM's MMLU in the large: GPT-4 right 82%, Mixtral 69%. */
const routeLlm: Joint = { bothRight: 0.65, requestedOnly: 0.17, candidateOnly: 0.04, neither: 0.14, neitherAgree: 1 / 3 };
const ORACLE_SHARE = ((1 - 0.95) * 0.82) / (0.82 - 0.69);
const median = (values: number[]): number => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)] ?? Number.NaN;

describe('shareFromBounds', () => {
  it('is the largest s with s·L_d + (1 − bar)·max(0, L_r) ≥ 0', () => {
    expect(shareFromBounds(0, 0.8, 0.95)).toBe(1);
    expect(shareFromBounds(-0.2, 0.8, 0.95)).toBeCloseTo(0.2, 12);
    expect(shareFromBounds(-0.02, 0.8, 0.95)).toBe(1);
    expect(shareFromBounds(-0.2, -0.1, 0.95)).toBe(0);
    expect(shareFromBounds(-0.2, 0.8, 1)).toBe(0);
  });
});

describe('certifiedShare', () => {
  it('gives nothing without evidence, or before min_samples', () => {
    expect(certifiedShare(emptyPairedEvidence(), contract).share).toBe(0);
    const evidence = evidenceFor(routeLlm, 1, 1_000);
    expect(certifiedShare(evidence, { ...contract, minSamples: 1_001 }).share).toBe(0);
    expect(certifiedShare(evidence, { ...contract, minSamples: 1_000 }).share).toBeGreaterThan(0);
  });

  it('grows to the whole workload when the candidate always agrees', () => {
    const equal: Joint = { bothRight: 0.8, requestedOnly: 0, candidateOnly: 0, neither: 0.2, neitherAgree: 1 };
    const shares = [20, 50, 100, 200, 300].map((count) => certifiedShare(evidenceFor(equal, 2, count), contract).share);
    // Measured: 0.06, 0.15, 0.36, 0.79, 1.
    for (let index = 1; index < shares.length; index += 1) expect(shares[index]).toBeGreaterThan(shares[index - 1] ?? 1);
    expect(shares[0]).toBeLessThan(0.1);
    expect(shares[4]).toBe(1);
  });

  it('gives the whole workload to a candidate better than the requested model', () => {
    const better: Joint = { bothRight: 0.7, requestedOnly: 0.03, candidateOnly: 0.1, neither: 0.17, neitherAgree: 1 / 3 };
    expect(certifiedShare(evidenceFor(better, 3, 1_000), contract).share).toBe(1);
  });

  it('gives a much worse candidate a small share', () => {
    const worse: Joint = { bothRight: 0.45, requestedOnly: 0.37, candidateOnly: 0.02, neither: 0.16, neitherAgree: 1 / 3 };
    const verdict = certifiedShare(evidenceFor(worse, 4, 5_000), contract);
    expect(verdict.share).toBeGreaterThan(0);
    expect(verdict.share).toBeLessThan(((1 - 0.95) * 0.82) / 0.35);
  });

  it('gives less for a less reliable judge', () => {
    const evidence = evidenceFor(routeLlm, 5, 2_000);
    const shares = [0, 0.02, 0.05].map((judgeError) => certifiedShare(evidence, { ...contract, judgeError }).share);
    expect(shares[1]).toBeLessThan(shares[0] ?? 0);
    expect(shares[2]).toBeLessThan(shares[1] ?? 0);
  });

  it('approaches the oracle share from below on RouteLLM-like numbers, and never passes it', () => {
    // Every sample graded (MMLU has reference answers). Medians of 20 seeded runs; each run is checked every
    // 100 samples for a share above the oracle's (the union of the two bounds allows it in ≤ 5% of runs).
    const checkpoints = [200, 1_000, 5_000];
    const figures = checkpoints.map(() => [] as number[]);
    let aboveOracle = 0;
    for (let run = 0; run < 20; run += 1) {
      const random = seededRandom(500 + run);
      let evidence = emptyPairedEvidence();
      let above = false;
      for (let step = 1; step <= 5_000; step += 1) {
        evidence = recordPairedSample(evidence, drawSample(routeLlm, random));
        if (step % 100 === 0 && certifiedShare(evidence, contract).share > ORACLE_SHARE) above = true;
        const checkpoint = checkpoints.indexOf(step);
        if (checkpoint !== -1) figures[checkpoint]?.push(certifiedShare(evidence, contract).share);
      }
      if (above) aboveOracle += 1;
    }
    const medians = figures.map(median);
    process.stdout.write(
      `certifiedShare on RouteLLM-like numbers (oracle ${ORACLE_SHARE.toFixed(3)}): ${checkpoints.map((count, index) => `N=${count}: ${medians[index]?.toFixed(3)}`).join(', ')}\n`,
    );
    expect(medians[0]).toBeGreaterThan(0.1);
    expect(medians[1]).toBeGreaterThan(medians[0] ?? 1);
    expect(medians[2]).toBeGreaterThan(medians[1] ?? 1);
    expect(medians[2]).toBeGreaterThan(0.75 * ORACLE_SHARE);
    expect(aboveOracle).toBe(0);
  });
});

describe('certifiedPolicyShare', () => {
  it('sends more calls through a policy that picks those the candidate gets right than at random', () => {
    // Easy calls (half): the candidate is nearly always right. The policy sends them; a random share does not choose.
    const easy: Joint = { bothRight: 0.95, requestedOnly: 0.02, candidateOnly: 0, neither: 0.03, neitherAgree: 1 / 3 };
    const hard: Joint = { bothRight: 0.35, requestedOnly: 0.32, candidateOnly: 0.08, neither: 0.25, neitherAgree: 1 / 3 };
    const random = seededRandom(12);
    let routed = emptyPairedEvidence();
    let kept = emptyPairedEvidence();
    let all = emptyPairedEvidence();
    for (let index = 0; index < 3_000; index += 1) {
      const isEasy = random() < 0.5;
      const sample = drawSample(isEasy ? easy : hard, random);
      if (isEasy) routed = recordPairedSample(routed, sample);
      else kept = recordPairedSample(kept, sample);
      all = recordPairedSample(all, sample);
    }
    const policy = certifiedPolicyShare({ routed, kept }, contract);
    const randomShare = certifiedShare(all, contract).share;
    // The policy's share is of the calls it picks (half the workload): all of them, against about a quarter at random.
    expect(policy.share).toBe(1);
    expect(policy.share * 0.5).toBeGreaterThan(1.5 * randomShare);
    expect(policy.diffLower).toBeLessThan(0);
  });
});

describe('certifiedShares', () => {
  const requested = evidenceFor(routeLlm, 20, 3_000);
  const cheapWorse = { model: 'cheap', savingPerCall: 0.9, evidence: requested };
  const better: Joint = { bothRight: 0.72, requestedOnly: 0.02, candidateOnly: 0.12, neither: 0.14, neitherAgree: 1 / 3 };
  const pricierBetter = { model: 'pricier', savingPerCall: 0.2, evidence: evidenceFor(better, 21, 3_000) };

  it('maximises the saving over all certified shares (checked against a grid search)', () => {
    const allocation = certifiedShares(requested, [cheapWorse, pricierBetter], contract);
    const [cheap, pricier] = allocation.shares;
    const budget = (1 - 0.95) * Math.max(0, allocation.requestedLower);
    const cost = (first: number, second: number): number => -first * (cheap?.diffLower ?? 0) - second * (pricier?.diffLower ?? 0);
    expect((cheap?.share ?? 0) + (pricier?.share ?? 0)).toBeLessThanOrEqual(1 + 1e-12);
    expect(cost(cheap?.share ?? 0, pricier?.share ?? 0)).toBeLessThanOrEqual(budget + 1e-12);
    let bestSaving = 0;
    for (let first = 0; first <= 1; first += 0.001) {
      for (let second = 0; first + second <= 1 + 1e-9; second += 0.001) {
        if (cost(first, second) <= budget) bestSaving = Math.max(bestSaving, 0.9 * first + 0.2 * second);
      }
    }
    expect(allocation.savingPerCall).toBeGreaterThanOrEqual(bestSaving - 1e-9);
    // The better model's slack pays for a larger share of the cheap one than it gets alone.
    expect(pricier?.share).toBeGreaterThan(0);
    expect(cheap?.share).toBeGreaterThan(certifiedShares(requested, [cheapWorse], contract).shares[0]?.share ?? 1);
  });

  it('gives nothing to a candidate that saves nothing, and is certifiedShare for one candidate at α/2', () => {
    const none = certifiedShares(requested, [{ ...pricierBetter, savingPerCall: 0 }], contract);
    expect(none.shares[0]?.share).toBe(0);
    expect(none.savingPerCall).toBe(0);
    const one = certifiedShares(requested, [cheapWorse], contract);
    expect(one.shares[0]?.share).toBeCloseTo(certifiedShare(requested, contract).share, 9);
  });
});
