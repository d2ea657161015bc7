/**
 * (iii) of per-call-policy.ts: the policy epochs with the router's defaults
 * (src/routing/policy-epochs.ts: first freeze at 100 samples, then at every
 * doubling; two active policies; a fifth of α for the policies, the rest for
 * the random share) on a workload's stream of samples, every prompt once in a random
 * order, looked at after n samples: how much evidence the policy needs
 * before it saves more than a random share. At each look the router serves
 * the certified policy that it expects to save most, if that beats the random
 * share certified beside it at 0.8α, else that random share. Savings are
 * measured on the prompts the chosen policy never learned from (those after
 * it was made), the random shares on the same prompts.
 */
import type { QualityBarContract } from '../../../src/routing/paired-quality.js';
import { emptyPairedEvidence, recordPairedSample } from '../../../src/routing/paired-quality.js';
import { routesToCandidate } from '../../../src/routing/call-policy.js';
import {
  certifiedPolicies,
  emptyPolicyEpochs,
  randomShareConfidence,
  recordEpochSample,
  type PolicyEpochs,
} from '../../../src/routing/policy-epochs.js';
import { certifiedShare } from '../../../src/routing/workload-shares.js';
import { createRandom, seedFor } from '../random.js';
import { pairedSample, shuffle, type Evidence, type Item } from './per-call-samples.js';

export interface CurvePoint {
  group: string;
  evidence: Evidence;
  samples: number;
  /** Mean over splits of the gross saving (share of GPT-4's cost) on the prompts the chosen policy never learned from. */
  savings: { policy: number; randomAlone: number; router: number };
  /** Splits where the router served the policy, and all. */
  policyChosen: number;
  splits: number;
  /** Served accuracy / GPT-4's of the router's choice on the same prompts, the lowest over splits. */
  worstQuality: number;
}

export interface CurveGroup {
  name: string;
  items: Item[];
  /** Numbers of samples to look at (a size beyond the prompts looks at all of them). */
  sizes: number[];
}

export function evidenceCurve(
  groups: CurveGroup[],
  contracts: Record<Evidence, QualityBarContract>,
  seed: number,
  splits: number,
): CurvePoint[] {
  const points: CurvePoint[] = [];
  for (const group of groups) {
    const sizes = [...new Set(group.sizes.map((size) => Math.min(size, group.items.length)))];
    for (const evidence of ['design', 'gold'] as const) {
      const looks = sizes.map((samples) => ({
        samples,
        savings: { policy: 0, randomAlone: 0, router: 0 },
        policyChosen: 0,
        worstQuality: Number.POSITIVE_INFINITY,
      }));
      for (let split = 1; split <= splits; split += 1) {
        const stream = shuffle(group.items, createRandom(seedFor(seed, 'per-call curve', group.name, split)));
        const random = createRandom(seedFor(seed, 'per-call curve evidence', group.name, evidence, split));
        const contract = contracts[evidence];
        let state = emptyPolicyEpochs(stream[0]?.features.dimension ?? 1);
        let pairs = emptyPairedEvidence();
        for (const [index, item] of stream.entries()) {
          const { sample } = pairedSample(item.real, evidence, random);
          pairs = recordPairedSample(pairs, sample);
          state = recordEpochSample(state, { features: item.features, sample, saving: item.saving }, contract);
          const look = looks.find((entry) => entry.samples === index + 1);
          if (look === undefined) continue;
          const result = lookAt(state, pairs, contract, stream);
          look.savings.policy += result.policy / splits;
          look.savings.randomAlone += result.randomAlone / splits;
          look.savings.router += result.router / splits;
          look.policyChosen += Number(result.policyChosen);
          look.worstQuality = Math.min(look.worstQuality, result.quality);
        }
      }
      points.push(...looks.map((look) => ({ group: group.name, evidence, splits, ...look })));
    }
  }
  return points;
}

function lookAt(
  state: PolicyEpochs,
  pairs: ReturnType<typeof emptyPairedEvidence>,
  contract: QualityBarContract,
  stream: Item[],
): { policy: number; randomAlone: number; router: number; policyChosen: boolean; quality: number } {
  const { best } = certifiedPolicies(state, contract);
  const epoch = best === null ? undefined : state.epochs.find((item) => item.epoch === best.epoch);
  const randomBeside = certifiedShare(pairs, { ...contract, confidence: randomShareConfidence(contract.confidence) }).share;
  const randomAlone = certifiedShare(pairs, contract).share;
  const policyChosen = best !== null && best.savingShare > randomBeside;
  const unseen = stream.slice(epoch?.madeAt ?? 0);
  const totals = { requested: 0, policy: 0, randomAlone: 0, router: 0, right: 0, requestedRight: 0 };
  for (const item of unseen) {
    const saved = item.real.requestedCost - item.real.cheapCost;
    const toPolicy =
      epoch !== undefined && best !== null && routesToCandidate(epoch.policy, item.features, item.saving) ? best.verdict.share : 0;
    const share = policyChosen ? toPolicy : randomBeside;
    totals.requested += item.real.requestedCost;
    totals.policy += toPolicy * saved;
    totals.randomAlone += randomAlone * saved;
    totals.router += share * saved;
    totals.requestedRight += Number(item.real.requestedCorrect);
    totals.right += share * Number(item.real.cheapCorrect) + (1 - share) * Number(item.real.requestedCorrect);
  }
  return {
    policy: totals.policy / totals.requested,
    randomAlone: totals.randomAlone / totals.requested,
    router: totals.router / totals.requested,
    policyChosen,
    quality: totals.requestedRight === 0 ? 1 : totals.right / totals.requestedRight,
  };
}
