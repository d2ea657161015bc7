import { describe, expect, it } from 'vitest';
import type { GenerationParameters } from '../api/chat-types.js';
import { routesToCandidate } from './call-policy.js';
import type { PairedSample, QualityBarContract } from './paired-quality.js';
import { learnPolicy, offeredPolicies, policyFeatures, policyPotentials, type CandidatePolicies } from './route-policies.js';

const contract: QualityBarContract = { qualityBar: 0.95, confidence: 0.95, minSamples: 50, judgeError: 0.02, gradeError: 0.02, agreementGradesSampled: true };
const call = (content: string): GenerationParameters => ({ messages: [{ role: 'user', content }] });

/** tiny right on the easy questions, wrong on the hard ones: samples as the worker records them. */
function learn(policies: Map<string, CandidatePolicies>, samples: number, evidenceVersion = 1): void {
  for (let index = 0; index < samples; index++) {
    const easy = index % 2 === 0;
    const sample: PairedSample = easy ? (index % 10 === 0 ? { outcome: 'same', requestedRight: true } : { outcome: 'same' }) : { outcome: 'loss' };
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
    expect(routesToCandidate(stored, policyFeatures(call('easy question 99999')))).toBe(true);
    expect(routesToCandidate(stored, policyFeatures(call('hard question 99999')))).toBe(false);
    // What it may still send: about the half of the calls it picks.
    const potential = policyPotentials(policies, 1, contract).get('tiny') ?? 0;
    expect(potential).toBeGreaterThan(0.4);
    expect(potential).toBeLessThan(0.6);
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
