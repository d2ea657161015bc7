/**
 * Calls with words, and paired samples whose outcome depends on them, for
 * the tests of per-call policies (`src/routing/call-policy.ts`,
 * `policy-epochs.ts`): a call is a dozen common words, and a "hard" one also
 * carries a trigger word; the candidate loses mostly on hard calls (or, with
 * no signal, equally on all).
 */
import type { CallRequest } from '../../src/routing/call-features.js';
import type { PairedSample } from '../../src/routing/paired-quality.js';
import { drawSample, type Joint } from './paired-samples.js';

export interface WordedCall {
  request: CallRequest;
  hard: boolean;
}

export interface WordedWorkload {
  hardShare: number;
  easy: Joint;
  hard: Joint;
}

const COMMON = Array.from({ length: 300 }, (_, index) => `word${index}`);
const TRIGGERS = ['integral', 'theorem', 'proof', 'derivative', 'matrix'];

/** The candidate is about as good as R on easy calls and much worse on hard ones (RouteLLM-like overall: R right 84%, random share ≈ 0.37). */
export const SIGNAL: WordedWorkload = {
  hardShare: 0.3,
  easy: { bothRight: 0.85, requestedOnly: 0.01, candidateOnly: 0.03, neither: 0.11, neitherAgree: 1 / 3 },
  hard: { bothRight: 0.35, requestedOnly: 0.45, candidateOnly: 0.02, neither: 0.18, neitherAgree: 1 / 3 },
};

/** The same mixture of outcomes on every call, whatever its words. */
export const NO_SIGNAL: WordedWorkload = { hardShare: SIGNAL.hardShare, easy: mixture(SIGNAL), hard: mixture(SIGNAL) };

export function drawCall(workload: WordedWorkload, random: () => number): WordedCall {
  const hard = random() < workload.hardShare;
  const words = Array.from({ length: 8 + Math.floor(random() * 12) }, () => COMMON[Math.floor(random() * COMMON.length)] ?? 'word');
  if (hard) words.splice(Math.floor(random() * words.length), 0, TRIGGERS[Math.floor(random() * TRIGGERS.length)] ?? 'proof');
  return { request: { messages: [{ role: 'user', content: words.join(' ') }] }, hard };
}

export function drawOutcome(workload: WordedWorkload, call: WordedCall, random: () => number, gradeRate = 1): PairedSample {
  return drawSample(call.hard ? workload.hard : workload.easy, random, gradeRate);
}

/** E[c − r] and E[r] on one kind of call. */
export function expectations(joint: Joint): { diff: number; requested: number } {
  return { diff: joint.candidateOnly - joint.requestedOnly, requested: joint.bothRight + joint.requestedOnly };
}

function mixture(workload: WordedWorkload): Joint {
  const mix = (key: keyof Joint): number => (1 - workload.hardShare) * workload.easy[key] + workload.hardShare * workload.hard[key];
  return {
    bothRight: mix('bothRight'),
    requestedOnly: mix('requestedOnly'),
    candidateOnly: mix('candidateOnly'),
    neither: mix('neither'),
    neitherAgree: 1 / 3,
  };
}
