import { describe, expect, it } from 'vitest';
import type { GenerationParameters } from '../api/chat-types.js';
import { callFeatures, requestSize } from './call-features.js';
import { routesToCandidate } from './call-policy.js';
import type { PairedSample, QualityBarContract } from './paired-quality.js';
import { learnPolicy, offeredPolicies, policyPotentials, type CandidatePolicies } from './route-policies.js';

const contract: QualityBarContract = {
  qualityBar: 0.95,
  confidence: 0.95,
  minSamples: 50,
  judgeError: 0.02,
  gradeError: 0.02,
  agreementGradesSampled: true,
};
const call = (content: string): GenerationParameters => ({ messages: [{ role: 'user', content }] });

/** tiny right on the easy questions, wrong on the hard ones: samples as the worker records them. */
function learn(policies: Map<string, CandidatePolicies>, samples: number, evidenceVersion = 1, easyLossEvery = 0): void {
  for (let index = 0; index < samples; index++) {
    const easy = index % 2 === 0;
    const lost = easyLossEvery > 0 && index % (2 * easyLossEvery) === 0;
    const sample: PairedSample =
      easy && !lost ? (index % 10 === 0 ? { outcome: 'same', requestedRight: true } : { outcome: 'same' }) : { outcome: 'loss' };
    learnPolicy(policies, 'tiny', evidenceVersion, call(`${easy ? 'easy' : 'hard'} question ${index}`), sample, contract);
  }
}

describe('route policies', () => {
  it('make a policy that picks the calls the candidate gets right, certified on the samples after it', () => {
    const policies = new Map<string, CandidatePolicies>();
    learn(policies, 199);
    // No policy before 200 samples: every call may still go to the candidate as far as exploring knows.
    expect(offeredPolicies(policies, 1, contract)).toEqual([]);
    expect(policyPotentials(policies, 1, contract).get('tiny')).toBe(1);
    learn(policies, 1_200);
    const [offered] = offeredPolicies(policies, 1, contract);
    expect(offered?.model).toBe('tiny');
    expect(offered?.stored.routedShare).toBeGreaterThan(0.4);
    expect(offered?.stored.routedShare).toBeLessThan(0.6);
    expect(offered?.certified.verdict.share).toBeGreaterThan(0.5);
    const stored = offered!.stored;
    const picks = (content: string) => routesToCandidate(stored, callFeatures(call(content)), requestSize(call(content)));
    expect(picks('easy question 99999')).toBe(true);
    expect(picks('hard question 99999')).toBe(false);
    // What it may still send: about the half of the calls it picks.
    const potential = policyPotentials(policies, 1, contract).get('tiny') ?? 0;
    expect(potential).toBeGreaterThan(0.4);
    expect(potential).toBeLessThan(0.6);
  });

  it('certify on the evidence without its grades when the route dropped them (a grader found unreliable)', () => {
    const policies = new Map<string, CandidatePolicies>();
    // The easy calls lose one time in 25: the share of them certified depends on the requested model's quality, which grades bound.
    learn(policies, 1_400, 1, 25);
    const graded = offeredPolicies(policies, 1, contract)[0]?.certified.verdict.share ?? 0;
    const dropped =
      offeredPolicies(policies, 1, { ...contract, gradeError: 0, agreementGradesSampled: false }, true)[0]?.certified.verdict.share ?? 0;
    expect(graded).toBeGreaterThan(0);
    // Without grades an agreement says nothing of the requested model's quality: the slack, and so the share, is smaller.
    expect(dropped).toBeLessThan(graded);
  });

  it('start again under a new evidence version, and offer nothing for an old one', () => {
    const policies = new Map<string, CandidatePolicies>();
    learn(policies, 1_000);
    expect(offeredPolicies(policies, 2, contract)).toEqual([]);
    learn(policies, 10, 2);
    expect(policies.get('tiny')?.epochs.samples).toBe(10);
    expect(offeredPolicies(policies, 2, contract)).toEqual([]);
  });
});
