import { describe, expect, it } from 'vitest';
import { drawEvidence, type Joint } from '../../test/helpers/paired-samples.js';
import type { PairedEvidence } from './paired-quality.js';
import { decideSplit, possibleShare, type RelativeEvidence, type RelativePolicy } from './split-decision.js';

const policy: RelativePolicy = {
  qualityBar: 0.95,
  confidence: 0.95,
  minSamples: 50,
  passRate: 0.95,
  judgeError: 0.02,
  gradeError: 0.02,
  agreementGradesSampled: true,
};

/** R right 82%, C 69%, as GPT-4 and Mixtral on MMLU: C alone is far below the bar, a share of it is not. */
const mmluLike: Joint = { bothRight: 0.62, requestedOnly: 0.2, candidateOnly: 0.07, neither: 0.11, neitherAgree: 0.33 };
/** C as good as R, wrong on other calls. */
const asGood: Joint = { bothRight: 0.75, requestedOnly: 0.07, candidateOnly: 0.07, neither: 0.11, neitherAgree: 0.33 };

function evidence(joint: Joint, samples: number, seed: number): PairedEvidence {
  return drawEvidence(joint, samples, seed);
}

function candidate(model: string, costPerCall: number, paired: PairedEvidence, extra: Partial<RelativeEvidence> = {}): RelativeEvidence {
  return { model, costPerCall, paired, constraintsEvaluated: 0, constraintsPassed: 0, errors: 0, ...extra };
}

describe('decideSplit', () => {
  it('gives a much worse but cheap model a share that keeps the workload within the bar, never the whole workload', () => {
    const decision = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('cheap', 0.01, evidence(mmluLike, 4_000, 7))],
      policy,
    });
    expect(decision.servedModel).toBe('big');
    const share = decision.shares[0]?.share ?? 0;
    // The largest share that keeps 0.82 × 0.95: (0.05 × 0.82) / 0.13 ≈ 0.32; the bounds take some of it.
    expect(share).toBeGreaterThan(0.1);
    expect(share).toBeLessThan(0.32);
    expect(decision.verdicts[0]?.state).toBe('certified');
    expect(decision.savingPerCall).toBeCloseTo(share * 0.99, 6);
  });

  it('hands the whole workload to a model as good as the requested one, with a relative certificate', () => {
    const decision = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('cheap', 0.1, evidence(asGood, 6_000, 3))],
      policy,
    });
    expect(decision.servedModel).toBe('cheap');
    expect(decision.shares).toEqual([]);
    expect(decision.certificate).toMatchObject({ model: 'cheap', qualityBar: 0.95 });
  });

  it('does not spend the slack on a coin-flip model beside one as good as the requested model', () => {
    const coin: Joint = { bothRight: 0.41, requestedOnly: 0.41, candidateOnly: 0.09, neither: 0.09, neitherAgree: 0.33 };
    const decision = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('good', 0.1, evidence(asGood, 6_000, 3)), candidate('coin', 0.05, evidence(coin, 6_000, 5))],
      policy,
    });
    expect(decision.servedModel).toBe('good');
    expect(decision.shares).toEqual([]);
  });

  it('gives nothing before min_samples, and keeps testing while a larger share may be won', () => {
    const young = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('cheap', 0.1, evidence(asGood, 40, 3))],
      policy,
    });
    expect(young.shares).toEqual([]);
    expect(young.toTest).toEqual(['cheap']);
    expect(young.verdicts[0]?.reason).toMatch(/fewer than 50 paired samples/);
  });

  it('keeps a candidate that fails the absolute checks, or is cooling down, out of any share', () => {
    const paired = evidence(asGood, 6_000, 3);
    const failing = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('cheap', 0.1, paired, { constraintsEvaluated: 200, constraintsPassed: 150 })],
      policy,
    });
    expect(failing.servedModel).toBe('big');
    expect(failing.verdicts[0]?.state).toBe('eliminated');
    expect(failing.toTest).toEqual([]);
    const cooling = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('cheap', 0.1, paired, { coolingDown: true })],
      policy,
    });
    expect(cooling.servedModel).toBe('big');
    expect(cooling.toTest).toEqual([]);
  });

  it('never gives a share to a model that is not cheaper', () => {
    const decision = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('dear', 2, evidence(asGood, 6_000, 3))],
      policy,
    });
    expect(decision.servedModel).toBe('big');
    expect(decision.verdicts[0]?.state).toBe('eliminated');
  });

  it('rarely certifies a share that breaks the bar (repeated runs)', () => {
    // C just below what a share of 0.3 allows: every share above ~0.25 breaks the bar.
    const bad: Joint = { bothRight: 0.6, requestedOnly: 0.22, candidateOnly: 0.05, neither: 0.13, neitherAgree: 0.33 };
    const requestedQuality = bad.bothRight + bad.requestedOnly;
    const drop = bad.requestedOnly - bad.candidateOnly;
    const safest = ((1 - policy.qualityBar) * requestedQuality) / drop;
    let broken = 0;
    const runs = 60;
    for (let run = 0; run < runs; run += 1) {
      const share =
        decideSplit({
          requestedModel: 'big',
          requestedCostPerCall: 1,
          candidates: [candidate('cheap', 0.01, evidence(bad, 3_000, 11 + run))],
          policy,
        }).shares[0]?.share ?? 0;
      if (share > safest) broken += 1;
    }
    expect(broken / runs).toBeLessThanOrEqual(1 - policy.confidence);
  });
});

describe('decideSplit with a pooled prior', () => {
  const prior = { model: 'cheap', share: 0.2, workloads: 12, samples: 900, notLossRate: 0.85 };

  it("serves the prior's share before the workload's own evidence certifies one, and marks it pooled", () => {
    const decision = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('cheap', 0.01, evidence(mmluLike, 30, 5))],
      policy,
      prior,
    });
    expect(decision.shares).toEqual([
      {
        model: 'cheap',
        share: 0.2,
        diffLower: expect.any(Number),
        samples: 30,
        pooled: { workloads: 12, samples: 900, notLossRate: 0.85 },
      },
    ]);
    expect(decision.savingPerCall).toBeCloseTo(0.2 * 0.99, 9);
    // Its verdict is what its own evidence certifies (nothing yet): exploring measures what is still to win from there.
    expect(decision.verdicts[0]).toMatchObject({ state: 'testing', share: 0 });
    expect(decision.verdicts[0]?.reason).toContain('serves 20.0% of calls on the prior of 12 workloads');
    // Still worth testing: its own evidence is to take over.
    expect(decision.toTest).toEqual(['cheap']);
  });

  it("keeps the workload's own certificate when it saves more, and gives no prior share to a candidate cooling down", () => {
    const own = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('cheap', 0.1, evidence(asGood, 6_000, 3))],
      policy,
      prior,
    });
    expect(own.servedModel).toBe('cheap');
    expect(own.shares).toEqual([]);
    const cooling = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('cheap', 0.01, evidence(mmluLike, 30, 5), { coolingDown: true })],
      policy,
      prior,
    });
    expect(cooling.shares).toEqual([]);
    const other = decideSplit({
      requestedModel: 'big',
      requestedCostPerCall: 1,
      candidates: [candidate('cheap', 0.01, evidence(mmluLike, 30, 5))],
      policy,
      prior: { ...prior, model: 'gone' },
    });
    expect(other.shares).toEqual([]);
  });
});

describe('possibleShare', () => {
  it('is what the sample means allow: everything before min_samples, then near the largest safe share', () => {
    expect(possibleShare(evidence(mmluLike, 10, 1), policy)).toBe(1);
    expect(possibleShare(evidence(mmluLike, 20_000, 1), policy)).toBeGreaterThan(0.2);
    expect(possibleShare(evidence(mmluLike, 20_000, 1), policy)).toBeLessThan(0.4);
  });
});
