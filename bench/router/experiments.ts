/**
 * Focused experiments beside the workload simulation, each with the real
 * decision code:
 *
 * - evals to a verdict: one candidate with a known true rate, judged after
 *   every eval until it is certified or eliminated;
 * - drop detection: a served model at 0.95 whose rate falls to 0.85, shadow-
 *   scored on `shadowRate` of its calls; how many served calls until the
 *   CUSUM demotes it;
 * - false alarms: how many served calls a healthy model serves, on average,
 *   between two alarms.
 */
import { initialCusum, updateCusum } from '../../src/routing/cusum.js';
import type { CandidateEvidence, DecisionPolicy } from '../../src/routing/route-decision.js';
import type { Judge } from './comparison-rules.js';
import { createRandom, seedFor } from './random.js';
import { cusumFor, type RouterSettings } from './settings.js';

export interface VerdictTimes {
  trueRate: number;
  passRate: number;
  runs: number;
  certified: number;
  eliminated: number;
  /** Evals at certification, for the runs that were certified. */
  evalsToCertify: number[];
  /** Evals at elimination, for the runs that were eliminated. */
  evalsToEliminate: number[];
}

/** Stops at a verdict or after `horizon` evals (set the policy's maxSamples to Infinity to see the bound alone over a long horizon). */
export function verdictTimes(
  judge: Judge,
  policy: DecisionPolicy,
  trueRate: number,
  runs: number,
  seed: number,
  horizon: number,
): VerdictTimes {
  const result: VerdictTimes = {
    trueRate,
    passRate: policy.passRate,
    runs,
    certified: 0,
    eliminated: 0,
    evalsToCertify: [],
    evalsToEliminate: [],
  };
  for (let run = 0; run < runs; run += 1) {
    const random = createRandom(seedFor(seed, 'verdict', trueRate, run));
    const evidence: CandidateEvidence = { model: 'candidate', costPerCall: 1, evaluated: 0, passed: 0, errors: 0 };
    while (evidence.evaluated < horizon) {
      evidence.evaluated += 1;
      if (random() < trueRate) evidence.passed += 1;
      const state = judge(evidence, policy).state;
      if (state === 'certified') {
        result.certified += 1;
        result.evalsToCertify.push(evidence.evaluated);
        break;
      }
      if (state === 'eliminated') {
        result.eliminated += 1;
        result.evalsToEliminate.push(evidence.evaluated);
        break;
      }
    }
  }
  return result;
}

export interface DropDetection {
  from: number;
  to: number;
  runs: number;
  /** Served calls from the drop to the alarm. */
  servedCalls: number[];
  /** Alarms during the healthy warm-up (restarted). */
  warmUpAlarms: number;
}

export function dropDetection(
  settings: RouterSettings,
  from: number,
  to: number,
  passRate: number,
  runs: number,
  seed: number,
): DropDetection {
  const options = cusumFor(settings, passRate);
  const result: DropDetection = { from, to, runs, servedCalls: [], warmUpAlarms: 0 };
  const warmUpCalls = 20_000;
  for (let run = 0; run < runs; run += 1) {
    const random = createRandom(seedFor(seed, 'drop', from, to, run));
    let state = initialCusum();
    for (let call = 0; call < warmUpCalls; call += 1) {
      if (random() >= settings.shadowRate) continue;
      const step = updateCusum(state, random() < from, options);
      state = step.alarm ? initialCusum() : step.state;
      if (step.alarm) result.warmUpAlarms += 1;
    }
    for (let call = 1; ; call += 1) {
      if (random() >= settings.shadowRate) continue;
      const step = updateCusum(state, random() < to, options);
      state = step.state;
      if (step.alarm) {
        result.servedCalls.push(call);
        break;
      }
    }
  }
  return result;
}

export interface FalseAlarms {
  trueRate: number;
  passRate: number;
  servedCalls: number;
  alarms: number;
}

export function falseAlarms(settings: RouterSettings, trueRate: number, passRate: number, servedCalls: number, seed: number): FalseAlarms {
  const options = cusumFor(settings, passRate);
  const random = createRandom(seedFor(seed, 'false alarms', trueRate, passRate));
  let state = initialCusum();
  let alarms = 0;
  for (let call = 0; call < servedCalls; call += 1) {
    if (random() >= settings.shadowRate) continue;
    const step = updateCusum(state, random() < trueRate, options);
    state = step.alarm ? initialCusum() : step.state;
    if (step.alarm) alarms += 1;
  }
  return { trueRate, passRate, servedCalls, alarms };
}
