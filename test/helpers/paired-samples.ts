/**
 * Paired samples of a requested model R and a candidate C drawn from a known
 * joint distribution of who is right, for the tests of the paired-quality
 * statistics (`src/routing/paired-quality.ts`, `workload-shares.ts`).
 */
import type { PairedSample } from '../../src/routing/paired-quality.js';

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
  else if (draw < joint.bothRight + joint.requestedOnly) sample = { outcome: random() < lossMisjudged ? 'win' : 'loss', requestedRight: true };
  else if (draw < joint.bothRight + joint.requestedOnly + joint.candidateOnly) sample = { outcome: 'win', requestedRight: false };
  else sample = { outcome: random() < joint.neitherAgree ? 'same' : 'tie', requestedRight: false };
  if (random() >= gradeRate) delete sample.requestedRight;
  return sample;
}
