/**
 * What a simulated router runs with: the real policy and detector defaults
 * from src/routing, which the command line may override to explore others.
 */
import { thresholdPrior, type BetaPrior } from '../../src/routing/confidence-sequence.js';
import { CUSUM_THRESHOLD, cusumOptionsFor, type CusumOptions } from '../../src/routing/cusum.js';
import { DEFAULT_ROUTING, judgeCandidate, type DecisionPolicy } from '../../src/routing/route-decision.js';
import { DEFAULT_ROUTER_SETTINGS } from '../../src/routing/router-context.js';
import { judgeNaively, type Judge } from './comparison-rules.js';

export type Rule = 'taskgate' | 'naive';

/**
 * The cooldown in calls: the worker counts it in time (DEFAULT_ROUTING.
 * cooldownMs, a day); 20,000 calls is a day of a workload at about 14 calls
 * a minute.
 */
export const COOLDOWN_CALLS = 20_000;
/** A day of a simulated workload (the cooldown's day too). */
export const CALLS_PER_DAY = 20_000;

export interface RouterSettings {
  rule: Rule;
  confidence: number;
  minSamples: number;
  maxSamples: number;
  /** 'auto': the worker's exploration plan (exploration.ts) sets the rate and the candidates; a number: that share of calls, on every candidate still testing. */
  sampleRate: number | 'auto';
  /** The workload's traffic, for the plan: how many calls a saving lasts. */
  callsPerDay: number;
  shadowRate: number;
  cooldownCalls: number;
  cusumThreshold: number;
  /** null: the router's `thresholdPrior`. */
  prior: ((passRate: number) => BetaPrior) | null;
}

export function defaultSettings(rule: Rule): RouterSettings {
  return {
    rule,
    confidence: DEFAULT_ROUTING.confidence,
    minSamples: DEFAULT_ROUTING.minSamples,
    maxSamples: DEFAULT_ROUTING.maxSamples,
    // The naive rule is the old fixed 5%, as a baseline; taskgate plans.
    sampleRate: rule === 'taskgate' ? 'auto' : 0.05,
    callsPerDay: CALLS_PER_DAY,
    shadowRate: DEFAULT_ROUTER_SETTINGS.shadowRate,
    cooldownCalls: COOLDOWN_CALLS,
    cusumThreshold: CUSUM_THRESHOLD,
    prior: null,
  };
}

export function policyFor(settings: RouterSettings, passRate: number): DecisionPolicy {
  const policy: DecisionPolicy = {
    passRate,
    confidence: settings.confidence,
    minSamples: settings.minSamples,
    maxSamples: settings.maxSamples,
  };
  policy.prior = settings.prior === null ? thresholdPrior(passRate) : settings.prior(passRate);
  return policy;
}

export function cusumFor(settings: RouterSettings, passRate: number): CusumOptions {
  return { ...cusumOptionsFor(passRate), threshold: settings.cusumThreshold };
}

export function judgeFor(rule: Rule): Judge {
  return rule === 'taskgate' ? judgeCandidate : judgeNaively;
}
