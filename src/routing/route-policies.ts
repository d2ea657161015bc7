/**
 * A route's per-call policies (issue 37 item 3), for contracts with
 * `per_call`: per candidate, a `PolicyEpochs` state (policy-epochs.ts)
 * learned from the route's paired samples of that candidate, the request's
 * features read in the worker (call-features.ts), never on the hot path.
 *
 * Which samples: every sample that enters the candidate's paired evidence,
 * for the same reason that evidence may be trusted: each is a random draw of
 * the workload's calls (calls the requested model served and calls a random
 * share sent to the candidate, at rates that do not depend on the call, and
 * the calls a policy picked only when sampled at the exploration rate:
 * check-served-reply.ts keeps a policy's monitoring checks out of the
 * evidence). The training hook is policy-learner.ts.
 *
 * The state lives in the router's memory: after a restart, or a demotion
 * that forgets the candidate's evidence, or a contract edit that starts a
 * new evidence version, it starts again (a policy certified before is
 * dropped: its held-out stream ended). A state is a few hundred kilobytes
 * (the model's weights and those of its active and pending policies), only
 * for routes whose contract asks for policies.
 */
import type { GenerationParameters } from '../api/chat-types.js';
import type { StoredCallPolicy } from '../store/routing-store.js';
import { callFeatures, DEFAULT_FEATURE_DIMENSION, requestSize } from './call-features.js';
import {
  pairedSampleCount,
  sampleValues,
  withoutGrades,
  type PairedSample,
  type PolicyEvidence,
  type QualityBarContract,
} from './paired-quality.js';
import { shareFromBounds } from './workload-shares.js';
import { certifiedPolicies, emptyPolicyEpochs, recordEpochSample, type CertifiedPolicy, type PolicyEpochs } from './policy-epochs.js';

/** One candidate's policies on a route, for one evidence version. */
export interface CandidatePolicies {
  evidenceVersion: number;
  epochs: PolicyEpochs;
}

/** The best certified policy of a candidate, as a route would store it. */
export interface OfferedPolicy {
  model: string;
  certified: CertifiedPolicy;
  stored: StoredCallPolicy;
}

/** Learns from one sample of `model` that entered its paired evidence (mutates `policies`). */
export function learnPolicy(
  policies: Map<string, CandidatePolicies>,
  model: string,
  evidenceVersion: number,
  parameters: GenerationParameters,
  sample: PairedSample,
  contract: QualityBarContract,
): void {
  const held = policies.get(model);
  const epochs =
    held === undefined || held.evidenceVersion !== evidenceVersion ? emptyPolicyEpochs(DEFAULT_FEATURE_DIMENSION) : held.epochs;
  policies.set(model, {
    evidenceVersion,
    epochs: recordEpochSample(epochs, { features: callFeatures(parameters), sample, saving: requestSize(parameters) }, contract),
  });
}

/**
 * The certified policy of each candidate that has one sending calls, under
 * the current evidence version. `gradesDropped`: the route reads its
 * evidence without grades (its grader was found unreliable), and so do the
 * policies' certificates.
 */
export function offeredPolicies(
  policies: ReadonlyMap<string, CandidatePolicies>,
  evidenceVersion: number,
  contract: QualityBarContract,
  gradesDropped = false,
): OfferedPolicy[] {
  const offered: OfferedPolicy[] = [];
  for (const [model, held] of policies) {
    if (held.evidenceVersion !== evidenceVersion) continue;
    const { best } = certifiedPolicies(gradesDropped ? withoutPolicyGrades(held.epochs) : held.epochs, contract);
    const epoch = held.epochs.epochs.find((active) => active.epoch === best?.epoch);
    if (best === null || epoch === undefined || best.verdict.share <= 0) continue;
    const { dimension, weights, bias, threshold } = epoch.policy;
    offered.push({
      model,
      certified: best,
      stored: { epoch: best.epoch, dimension, weights, bias, threshold, routedShare: best.routedShare },
    });
  }
  return offered;
}

/**
 * Per candidate, the share of the calls a policy may yet send it, for the
 * exploration plan (what testing may still win): every call until a policy
 * is made (nothing is known); then, for the newest policy, the share of its
 * held-out samples it picks × the fraction of those its sample means would
 * certify (no margin; all of them before `min_samples` held-out samples).
 */
export function policyPotentials(
  policies: ReadonlyMap<string, CandidatePolicies>,
  evidenceVersion: number,
  contract: QualityBarContract,
  gradesDropped = false,
): Map<string, number> {
  const potentials = new Map<string, number>();
  for (const [model, held] of policies) {
    if (held.evidenceVersion !== evidenceVersion) continue;
    const newest = held.epochs.epochs.at(-1);
    const evidence =
      newest === undefined
        ? null
        : gradesDropped
          ? { routed: withoutGrades(newest.evidence.routed), kept: withoutGrades(newest.evidence.kept) }
          : newest.evidence;
    potentials.set(model, evidence === null ? 1 : policyPotential(evidence, contract));
  }
  return potentials;
}

function withoutPolicyGrades(epochs: PolicyEpochs): PolicyEpochs {
  return {
    ...epochs,
    epochs: epochs.epochs.map((epoch) => ({
      ...epoch,
      evidence: { routed: withoutGrades(epoch.evidence.routed), kept: withoutGrades(epoch.evidence.kept) },
    })),
  };
}

function policyPotential(evidence: PolicyEvidence, contract: QualityBarContract): number {
  const routed = pairedSampleCount(evidence.routed);
  const samples = routed + pairedSampleCount(evidence.kept);
  if (samples === 0) return 1;
  if (samples < (contract.minSamples ?? 0)) return routed / samples;
  const values = sampleValues(evidence, contract);
  const mean = (pick: (value: (typeof values)[number]) => number): number =>
    values.reduce((sum, value) => sum + value.count * pick(value), 0) / samples;
  return (
    shareFromBounds(
      mean((value) => value.diff),
      mean((value) => value.requested),
      contract.qualityBar,
    ) *
    (routed / samples)
  );
}
