/**
 * The simulated task: adding two integers, whose right answer is computable.
 * The reference model always answers right; a candidate answers right with
 * its true pass rate and otherwise a near miss. The eval contract is
 * taskgate's default, agreement with the reference's answer, so a replay is
 * scored exactly as the worker scores one.
 */
import type { Random } from './random.js';

export interface Problem {
  left: number;
  right: number;
}

export function drawProblem(random: Random): Problem {
  return { left: Math.floor(random() * 10_000), right: Math.floor(random() * 10_000) };
}

export function referenceAnswer(problem: Problem): number {
  return problem.left + problem.right;
}

/** A model's answer: right with probability `trueRate`, else off by 1 to 10. */
export function modelAnswer(problem: Problem, trueRate: number, random: Random): number {
  const right = problem.left + problem.right;
  if (random() < trueRate) return right;
  const miss = 1 + Math.floor(random() * 10);
  return random() < 0.5 ? right - miss : right + miss;
}

/** The default contract's check: the candidate agrees with the reference. */
export function agrees(candidate: number, reference: number): boolean {
  return candidate === reference;
}
