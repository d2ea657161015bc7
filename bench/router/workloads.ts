/**
 * The simulated workloads: each has an eval contract (pass rate 0.90, 0.95 or
 * 0.98), a reference model (the requested one) and a ladder of 3 to 6
 * cheaper candidates priced from 2% of the reference up to the reference.
 *
 * True pass rates: a workload has a difficulty (the failure rate of a model
 * as good as the reference, 0.2% to 10%) and a steepness (how much worse
 * the cheapest models are, up to e^3.5 times more failures); each candidate's
 * failure rate follows its price on that log scale with its own noise
 * (σ = 0.5 in log units), capped at 60%. So some workloads have a passing
 * model at a few percent of the price, some have none, and many have a
 * candidate within a point or two of the threshold, which is where the
 * statistics are hardest.
 *
 * Drift: on a fifth of the workloads that have a passing candidate, the
 * cheapest one (the oracle's choice) loses 0.10 of pass rate at a random
 * call between 30% and 80% of the horizon, as when a provider silently
 * changes a model.
 */
import { createRandom, integerBetween, logUniform, normal, pick, seedFor, uniform } from './random.js';

export interface SimulatedModel {
  name: string;
  /** USD per call on this workload. */
  costPerCall: number;
  /** Share of calls it answers right before any drift. */
  trueRate: number;
}

export interface Drift {
  model: string;
  atCall: number;
  drop: number;
}

export interface Workload {
  id: number;
  passRate: number;
  reference: SimulatedModel;
  /** Cheapest first. */
  candidates: SimulatedModel[];
  drift: Drift | null;
  calls: number;
}

export const PASS_RATE_MIX = [
  [0.9, 0.3],
  [0.95, 0.5],
  [0.98, 0.2],
] as const;

export function generateWorkloads(count: number, calls: number, seed: number): Workload[] {
  return Array.from({ length: count }, (_, id) => generateWorkload(id, calls, seed));
}

function generateWorkload(id: number, calls: number, seed: number): Workload {
  const random = createRandom(seedFor(seed, 'workload', id));
  const passRate = pick(random, PASS_RATE_MIX);
  const referenceCost = logUniform(random, 0.002, 0.03);
  const reference: SimulatedModel = { name: `w${id}-reference`, costPerCall: referenceCost, trueRate: 1 };
  const difficulty = Math.log(logUniform(random, 0.002, 0.1));
  const steepness = uniform(random, 0.5, 3.5);
  const ladder = integerBetween(random, 3, 6);
  const fractions = Array.from({ length: ladder }, () => logUniform(random, 0.02, 0.98)).sort((left, right) => left - right);
  const candidates = fractions.map((fraction, rank): SimulatedModel => {
    const cheapness = Math.log(fraction) / Math.log(0.02); // 1 at 2% of the price, 0 at the reference's
    const failure = Math.min(0.6, Math.exp(difficulty + steepness * cheapness + 0.5 * normal(random)));
    return { name: `w${id}-c${rank}`, costPerCall: referenceCost * fraction, trueRate: roundRate(1 - failure) };
  });
  const cheapestPassing = candidates.find((candidate) => candidate.trueRate >= passRate);
  const drifts = cheapestPassing !== undefined && random() < 0.2;
  const drift = drifts ? { model: cheapestPassing.name, atCall: Math.floor(calls * uniform(random, 0.3, 0.8)), drop: 0.1 } : null;
  return { id, passRate, reference, candidates, drift, calls };
}

/** Rates to 4 decimals, so reports show what was simulated. */
function roundRate(rate: number): number {
  return Math.round(rate * 10_000) / 10_000;
}

/** The true pass rate of a model at a call, drift included. */
export function trueRateAt(workload: Workload, model: SimulatedModel, call: number): number {
  const drift = workload.drift;
  return drift !== null && drift.model === model.name && call >= drift.atCall ? Math.max(0, model.trueRate - drift.drop) : model.trueRate;
}
