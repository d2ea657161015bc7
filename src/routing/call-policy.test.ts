import { describe, expect, it } from 'vitest';
import { callFeatures } from './call-features.js';
import {
  chooseThreshold,
  emptyCallModel,
  freezePolicy,
  lossProbability,
  routesToCandidate,
  trainCallModel,
  trainInPlace,
  type CallModel,
  type ScoredSample,
} from './call-policy.js';
import { emptyPairedEvidence, recordPairedSample, type PairedSample } from './paired-quality.js';
import { certifiedShare } from './workload-shares.js';
import { drawSample, type Joint } from '../../test/helpers/paired-samples.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';
import { drawCall, drawOutcome, NO_SIGNAL, SIGNAL, type WordedWorkload } from '../../test/helpers/worded-calls.js';

const DIMENSION = 1_024;
const features = (request: Parameters<typeof callFeatures>[0]) => callFeatures(request, { dimension: DIMENSION });

function trained(workload: WordedWorkload, seed: number, count: number): CallModel {
  const random = seededRandom(seed);
  const model = emptyCallModel(DIMENSION);
  for (let index = 0; index < count; index += 1) {
    const call = drawCall(workload, random);
    trainInPlace(model, features(call.request), drawOutcome(workload, call, random).outcome === 'loss');
  }
  return model;
}

/** How often a fresh hard call is predicted likelier to be lost than a fresh easy one (the area under the ROC curve). */
function ranking(model: CallModel, workload: WordedWorkload, seed: number): number {
  const random = seededRandom(seed);
  const easy: number[] = [];
  const hard: number[] = [];
  for (let index = 0; index < 1_000; index += 1) {
    const call = drawCall(workload, random);
    (call.hard ? hard : easy).push(lossProbability(model, features(call.request)));
  }
  let ordered = 0;
  for (const high of hard) for (const low of easy) ordered += high > low ? 1 : high === low ? 0.5 : 0;
  return ordered / (hard.length * easy.length);
}

const EASY: Joint = SIGNAL.easy;
const HARD: Joint = SIGNAL.hard;
const contract = { qualityBar: 0.95, confidence: 0.9875 };

/** Scored samples: easy calls score low, hard ones high (a model that learned the signal), or scores unrelated to the outcome. */
function scoredSamples(seed: number, count: number, signal: boolean): ScoredSample[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const hard = random() < SIGNAL.hardShare;
    const sample: PairedSample = drawSample(hard ? HARD : EASY, random);
    const score = signal ? (hard ? 0.3 : 0.05) + random() * 0.1 : random();
    return { score, sample };
  });
}

describe('the call model', () => {
  it('learns that the candidate loses on calls with some words', () => {
    // A hard call carries one of five words among a dozen of 300 others; the candidate loses 45% of them, 1% of the rest.
    const areas = [100, 1_000, 3_000].map((count) => ranking(trained(SIGNAL, 1, count), SIGNAL, 2));
    // Measured: 0.63, 0.85, 0.92.
    expect(areas[1]).toBeGreaterThan(0.8);
    expect(areas[2]).toBeGreaterThan(areas[1] ?? 1);
  });

  it('learns no difference when the words say nothing', () => {
    const area = ranking(trained(NO_SIGNAL, 1, 3_000), NO_SIGNAL, 2);
    // Measured: 0.54 (the noise of 3,000 samples in 300 words).
    expect(Math.abs(area - 0.5)).toBeLessThan(0.08);
  });

  it('is deterministic, trains purely when asked to, and survives JSON', () => {
    expect(trained(SIGNAL, 5, 300)).toEqual(trained(SIGNAL, 5, 300));
    const model = trained(SIGNAL, 5, 300);
    const before = JSON.stringify(model);
    const call = features(drawCall(SIGNAL, seededRandom(9)).request);
    const next = trainCallModel(model, call, true);
    expect(JSON.stringify(model)).toBe(before);
    expect(lossProbability(next, call)).toBeGreaterThan(lossProbability(model, call));
    const policy = freezePolicy(next, 0.1);
    const revived = JSON.parse(JSON.stringify(policy)) as typeof policy;
    expect(lossProbability(revived, call)).toBeCloseTo(lossProbability(next, call), 12);
  });

  it('keeps its weights finite through many steps (the L2 decay is folded back before it underflows)', () => {
    const model = trained(SIGNAL, 3, 20_000);
    expect(model.weights.every(Number.isFinite)).toBe(true);
    expect(model.scale).toBeGreaterThan(1e-7);
  });
});

describe('chooseThreshold', () => {
  it('sends the calls the scores say are safe, and expects to save more than a random share', () => {
    const samples = scoredSamples(1, 2_000, true);
    const choice = chooseThreshold(samples, 0.95, contract);
    // The easy calls (scores below 0.15) all, and not many hard ones.
    expect(choice.routedShare).toBeGreaterThan(0.7);
    expect(choice.routedShare).toBeLessThan(0.85);
    let evidence = emptyPairedEvidence();
    for (const scored of samples) evidence = recordPairedSample(evidence, scored.sample);
    expect(choice.expectedSaving).toBeGreaterThan(certifiedShare(evidence, contract).share + 0.2);
  });

  it('does no better than a random share when the scores say nothing', () => {
    const samples = scoredSamples(2, 2_000, false);
    const choice = chooseThreshold(samples, 0.95, contract);
    let evidence = emptyPairedEvidence();
    for (const scored of samples) evidence = recordPairedSample(evidence, scored.sample);
    expect(choice.expectedSaving).toBeLessThan(certifiedShare(evidence, contract).share + 0.05);
  });

  it('takes the calls that save most first when the outcome does not depend on them', () => {
    // The same outcomes on every call (a random share of 0.24 keeps the bar); a third of the calls save ten times as much.
    const random = seededRandom(3);
    const everyCall: Joint = { bothRight: 0.6, requestedOnly: 0.2, candidateOnly: 0.03, neither: 0.17, neitherAgree: 1 / 3 };
    const samples = Array.from({ length: 3_000 }, (_, index): ScoredSample => {
      const saving = index % 3 === 0 ? 10 : 1;
      return { score: 0.15 / saving, saving, sample: drawSample(everyCall, random) };
    });
    const choice = chooseThreshold(samples, 0.95, contract);
    expect(choice.threshold).toBeGreaterThanOrEqual(0.015);
    expect(choice.threshold).toBeLessThan(0.15);
    expect(choice.routedShare).toBeCloseTo(1 / 3, 2);
  });

  it('routes nothing without evidence, and a negative threshold routes nothing', () => {
    expect(chooseThreshold([], 0.95, contract).threshold).toBeLessThan(0);
    const policy = freezePolicy(emptyCallModel(DIMENSION), -1);
    expect(routesToCandidate(policy, features({ messages: [{ role: 'user', content: 'hi' }] }))).toBe(false);
  });
});
