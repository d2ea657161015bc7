/**
 * Paired samples of a requested model R and a candidate C drawn from a known
 * joint distribution of who is right, for the tests of the paired-quality
 * statistics (`src/routing/paired-quality.ts`, `workload-shares.ts`).
 */
import { emptyPairedEvidence, recordPairedSample, type PairedEvidence, type PairedSample } from '../../src/routing/paired-quality.js';

/** Who is right on a call; two wrong replies agree `neitherAgree` of the time (multiple choice: a third). */
export interface Joint {
  bothRight: number;
  requestedOnly: number;
  candidateOnly: number;
  neither: number;
  neitherAgree: number;
}

/**
 * One paired sample. `gradeRate`: chance R's reply is graded. `lossMisjudged`: chance the judge calls a
 * loss a win (an adversarial judge whose errors all favour the candidate).
 */
export function drawSample(joint: Joint, random: () => number, gradeRate = 1, lossMisjudged = 0): PairedSample {
  const draw = random();
  let sample: PairedSample;
  if (draw < joint.bothRight) sample = { outcome: 'same', requestedRight: true };
  else if (draw < joint.bothRight + joint.requestedOnly)
    sample = { outcome: random() < lossMisjudged ? 'win' : 'loss', requestedRight: true };
  else if (draw < joint.bothRight + joint.requestedOnly + joint.candidateOnly) sample = { outcome: 'win', requestedRight: false };
  else sample = { outcome: random() < joint.neitherAgree ? 'same' : 'tie', requestedRight: false };
  if (random() >= gradeRate) delete sample.requestedRight;
  return sample;
}

/**
 * The evidence of `samples` paired samples as the router records them, from a seeded stream: R graded on a
 * random `gradeRate` of the agreements and ties; a win or a loss carries no grade of its own (the verdict says
 * who was right).
 */
export function drawEvidence(joint: Joint, samples: number, seed: number, gradeRate = 0.2): PairedEvidence {
  let state = seed;
  const random = () => ((state = (state * 16_807) % 2_147_483_647) - 1) / 2_147_483_646;
  let counts = emptyPairedEvidence();
  for (let index = 0; index < samples; index += 1) {
    const sample = drawSample(joint, random, gradeRate);
    if (sample.outcome === 'win' || sample.outcome === 'loss') delete sample.requestedRight;
    counts = recordPairedSample(counts, sample);
  }
  return counts;
}

/** The quality of a workload that sends `share` of its calls to C, as a fraction of R's. */
export function qualityAtShare(joint: Joint, share: number): number {
  const requested = joint.bothRight + joint.requestedOnly;
  return (requested + share * (joint.candidateOnly - joint.requestedOnly)) / requested;
}
