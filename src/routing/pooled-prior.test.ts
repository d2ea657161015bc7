import { describe, expect, it } from 'vitest';
import { drawEvidence, qualityAtShare, type Joint } from '../../test/helpers/paired-samples.js';
import { emptyPairedEvidence, type PairedEvidence } from './paired-quality.js';
import { fitPool, MAX_PRIOR_SHARE, normalQuantile, priorShare } from './pooled-prior.js';
import type { RelativePolicy } from './split-decision.js';

const policy: RelativePolicy = {
  qualityBar: 0.95,
  confidence: 0.95,
  minSamples: 50,
  passRate: 0.95,
  judgeError: 0.02,
  gradeError: 0.02,
  agreementGradesSampled: true,
};

/** GPT-4 and Mixtral on a typical MMLU subject: R right 82%, C 69%. */
const typical: Joint = { bothRight: 0.62, requestedOnly: 0.2, candidateOnly: 0.07, neither: 0.11, neitherAgree: 0.33 };
/** C as good as R (Mixtral on world religions). */
const asGood: Joint = { bothRight: 0.75, requestedOnly: 0.07, candidateOnly: 0.07, neither: 0.11, neitherAgree: 0.33 };
/** C keeps about half of R's accuracy (Mixtral on moral scenarios). */
const outlier: Joint = { bothRight: 0.38, requestedOnly: 0.43, candidateOnly: 0.05, neither: 0.14, neitherAgree: 0.33 };

/** A project: seven typical workloads, one as good, one outlier, each with `samples` of its own. */
function project(samples: number, seed: number): { joints: Joint[]; evidence: PairedEvidence[] } {
  const joints = [...Array.from({ length: 7 }, () => typical), asGood, outlier];
  return { joints, evidence: joints.map((joint, index) => drawEvidence(joint, samples, seed * 100 + index + 1)) };
}

describe('fitPool', () => {
  it('says nothing until three workloads have ten samples each and the pool has min_samples', () => {
    const two = [drawEvidence(typical, 200, 1), drawEvidence(typical, 200, 2)];
    expect(fitPool(two, policy)).toBeNull();
    expect(fitPool([...two, drawEvidence(typical, 9, 3)], policy)).toBeNull();
    expect(fitPool([drawEvidence(typical, 12, 4), drawEvidence(typical, 12, 5), drawEvidence(typical, 12, 6)], policy)).toBeNull();
    const fit = fitPool([...two, drawEvidence(typical, 10, 3), emptyPairedEvidence()], policy);
    expect(fit).toMatchObject({ workloads: 3, samples: 410 });
  });

  it('gives a new workload a share from its neighbours, which its own evidence then corrects', () => {
    const { joints, evidence } = project(60, 1);
    const fit = fitPool(evidence, policy);
    if (fit === null) throw new Error('the pool should fit');
    const fresh = priorShare(fit, emptyPairedEvidence(), policy);
    expect(fresh).toBeGreaterThan(0.05);
    expect(fresh).toBeLessThanOrEqual(MAX_PRIOR_SHARE);
    const shares = evidence.map((own) => priorShare(fit, own, policy));
    const [good, bad] = [shares[7] ?? 0, shares[8] ?? 0];
    expect(good).toBeGreaterThan(fresh);
    expect(bad).toBeLessThan(fresh);
    // The outlier's own 60 samples keep it within twice the bar's gap; every workload within it.
    for (const [index, share] of shares.entries()) expect(qualityAtShare(joints[index] ?? typical, share)).toBeGreaterThanOrEqual(0.9);
  });

  it('keeps the project at the bar and every workload within twice its gap (repeated projects)', () => {
    let projectsBelowBar = 0;
    let workloadsBelowFloor = 0;
    const runs = 30;
    for (let run = 0; run < runs; run += 1) {
      const { joints, evidence } = project(40, run + 2);
      const fit = fitPool(evidence, policy);
      if (fit === null) throw new Error('the pool should fit');
      const qualities = evidence.map((own, index) => qualityAtShare(joints[index] ?? typical, priorShare(fit, own, policy)));
      // Equal traffic, so the project's quality is the mean of its workloads' (R's accuracy weighs each).
      const weights = joints.map((joint) => joint.bothRight + joint.requestedOnly);
      const projectQuality =
        qualities.reduce((sum, quality, index) => sum + quality * (weights[index] ?? 0), 0) /
        weights.reduce((sum, weight) => sum + weight, 0);
      projectsBelowBar += Number(projectQuality < 0.95);
      workloadsBelowFloor += qualities.filter((quality) => quality < 0.9).length;
    }
    expect(projectsBelowBar).toBeLessThanOrEqual(runs * 0.05);
    expect(workloadsBelowFloor).toBeLessThanOrEqual(runs * 9 * 0.02);
  });

  it("fades as the workload's own evidence comes, and is gone at ten times min_samples", () => {
    const { evidence } = project(60, 3);
    const fit = fitPool(evidence, policy);
    if (fit === null) throw new Error('the pool should fit');
    const shares = [0, 100, 250, 499, 500, 2_000].map((samples) => priorShare(fit, drawEvidence(typical, samples, 9), policy));
    expect(shares[1]).toBeLessThan(shares[0] ?? 0);
    expect(shares[2]).toBeLessThan(shares[1] ?? 0);
    expect(shares[3]).toBeGreaterThan(0);
    expect(shares.slice(4)).toEqual([0, 0]);
  });

  it('grants nothing when the candidate is no good anywhere', () => {
    const useless: Joint = { bothRight: 0.05, requestedOnly: 0.8, candidateOnly: 0, neither: 0.15, neitherAgree: 0.33 };
    const fit = fitPool(
      [1, 2, 3, 4].map((seed) => drawEvidence(useless, 100, seed)),
      policy,
    );
    if (fit === null) throw new Error('the pool should fit');
    expect(priorShare(fit, emptyPairedEvidence(), policy)).toBeLessThan(0.06);
  });
});

describe('normalQuantile', () => {
  it('is the standard normal quantile', () => {
    expect(normalQuantile(0.5)).toBeCloseTo(0, 9);
    expect(normalQuantile(0.95)).toBeCloseTo(1.644854, 5);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 5);
    expect(() => normalQuantile(1)).toThrow(RangeError);
  });
});
