/**
 * Calls picked one by one (issue 37 item 3), measured on the recorded data:
 * a per-call policy (src/routing/call-features.ts, call-policy.ts,
 * policy-epochs.ts) against a random choice of calls, at equal quality.
 * Each workload's prompts are split in half at random (`splits` times, each
 * split its own seed); every prompt is asked once. A call's saving, for the
 * policy, is its estimated tokens (the prompt's, and the workload's mean
 * completion): what the router would know before the call.
 *
 * (i) Offline, what the ranking is worth: the model is trained, one online
 *     pass, on the training half; on the other half calls go to Mixtral in
 *     the model's order, as many as keep the half at ≥ 95% of GPT-4's
 *     accuracy: by P(loss) for the share of calls, by P(loss) / saving for
 *     the saving. Random selection at equal quality: the largest random
 *     share with the same property (oracles.ts); and, since the policy's cut
 *     is chosen on the test half's answers, the same search over a random
 *     order (the optimism of choosing one number on the answers, with no
 *     signal); and the longest prompts first (the saving with no model).
 * (ii) Certified, as the router would run it: the training half then the
 *     test half stream through the policy epochs as paired samples, with
 *     freeze points at a quarter and at half of the prompts, so the policy's
 *     model learns from the first quarter, its threshold from the second,
 *     and it is certified on the test half at α·p/2 (the first epoch's α,
 *     p = DEFAULT_POLICY_ALPHA_SHARE). Random: `certifiedShare` on all the
 *     samples at α·(1 − p) (beside the policy) and at α (alone). The router with
 *     both serves, per workload, whichever it expects to save more.
 *     Samples are judged as the router does by default (per-call-samples.ts)
 *     or with gold grades and a judge never wrong.
 * (iii) How much evidence, with the router's defaults: per-call-curve.ts.
 */
import { callFeatures } from '../../../src/routing/call-features.js';
import { emptyCallModel, lossProbability, routesToCandidate, trainInPlace } from '../../../src/routing/call-policy.js';
import { emptyPairedEvidence, recordPairedSample } from '../../../src/routing/paired-quality.js';
import { certifiedPolicies, emptyPolicyEpochs, randomShareConfidence, recordEpochSample } from '../../../src/routing/policy-epochs.js';
import { certifiedShare } from '../../../src/routing/workload-shares.js';
import { createRandom, seedFor, type Random } from '../random.js';
import { largestShare } from './oracles.js';
import { evidenceCurve, type CurvePoint } from './per-call-curve.js';
import { EVIDENCE_LABELS, pairedSample, perCallContract, perCallItems, shuffle, type Evidence, type Item } from './per-call-samples.js';
import type { RecordedData } from './routellm-data.js';

const BAR = 0.95;

export interface PerCallPlan {
  splits: number;
  /** Calls a workload serves at its certified share, over which the evidence is paid for (the 30-day run's). */
  horizonCalls: number;
}

/** A prompt as this measurement uses it. */
export interface OfflineFigures {
  group: string;
  testPrompts: number;
  /** Shares of the test halves' calls sent to Mixtral at ≥ 95% of GPT-4's accuracy (the policy ranking by P(loss)), mean over splits. */
  calls: { policy: number; randomOrder: number; randomShare: number };
  /** Savings on the test halves at the paper's prices at the same bar: the policy ranking by P(loss) / saving, the longest prompts first, a random share. */
  savings: { policy: number; longestFirst: number; randomShare: number };
  /** Per split, policy − random share, of calls: the smallest and the largest. */
  callGainRange: { min: number; max: number };
}

export interface CertifiedFigures {
  group: string;
  evidence: string;
  workloads: number;
  /** Shares of the test halves' calls sent to Mixtral, mean over splits: by the certified policy, by random shares (beside the policy at α·(1 − p), alone at α), by the router with both. */
  calls: { policy: number; randomBeside: number; randomAlone: number; router: number };
  /** Gross savings on the test halves at the paper's prices (tokens), against GPT-4 on every call. */
  savings: { policy: number; randomAlone: number; router: number };
  /** Eval spend of the samples (every prompt once) over `horizonCalls` calls a workload, as a share of GPT-4's cost of those calls. */
  evaluationShare: number;
  /** Workload-splits where the policy saves more than random alone (on the test half), and all. */
  policyWins: number;
  cases: number;
  /** Served accuracy / GPT-4's on the test halves with the router's choice: overall, and the lowest of a workload in any split. */
  quality: number;
  worstQuality: number;
}

export interface PerCallPolicyResults {
  plan: PerCallPlan;
  offline: OfflineFigures[];
  certified: CertifiedFigures[];
  /** (iii) the router's defaults on one stream of samples, by samples seen. */
  curve: CurvePoint[];
  /** Feature extraction on the data's prompts: µs per prompt, and mean KB per prompt. */
  featureCost: { microsecondsPerCall: number; kilobytesPerCall: number };
}

type Split = { training: Item[]; test: Item[] };

export function measurePerCallPolicy(data: RecordedData, seed: number, plan: PerCallPlan): PerCallPolicyResults {
  const groups = perCallItems(data, seed);
  const prompts = data.workloads.flatMap((workload) => workload.prompts);
  const extraction = performance.now();
  for (const prompt of prompts) callFeatures({ messages: [{ role: 'user', content: prompt.text }] });
  const microseconds = (performance.now() - extraction) * 1e3;

  const mmlu = groups.filter((items) => items[0]?.workload.startsWith('mmlu/'));
  const gsm8k = groups.filter((items) => items[0]?.workload === 'gsm8k');
  const splitOf = (items: Item[], split: number): Split => {
    const shuffled = shuffle(items, createRandom(seedFor(seed, 'per-call split', items[0]?.workload ?? '', split)));
    const half = Math.floor(shuffled.length / 2);
    return { training: shuffled.slice(0, half), test: shuffled.slice(half) };
  };

  const offline = new Map<string, OfflineShares[]>();
  const certified = new Map<string, CertifiedAccumulator>();
  for (let split = 1; split <= plan.splits; split += 1) {
    const random = createRandom(seedFor(seed, 'per-call policy', split));
    const mmluSplits = mmlu.map((items) => splitOf(items, split));
    const gsm8kSplits = gsm8k.map((items) => splitOf(items, split));
    const pooled: Split = {
      training: shuffle(
        mmluSplits.flatMap((part) => part.training),
        random,
      ),
      test: shuffle(
        mmluSplits.flatMap((part) => part.test),
        random,
      ),
    };

    // (i) offline
    const offlineGroup = (group: string, parts: OfflineShares[]): void =>
      void offline.set(group, [...(offline.get(group) ?? []), sumShares(parts)]);
    offlineGroup(
      'MMLU, a model per subject',
      mmluSplits.map((part) => offlineShares(part.test, trainedScorer(part.training), random)),
    );
    const pooledScorer = trainedScorer(pooled.training);
    offlineGroup(
      'MMLU, one model for all subjects, each subject at the bar',
      mmluSplits.map((part) => offlineShares(part.test, pooledScorer, random)),
    );
    offlineGroup('MMLU as one workload (subjects mixed, the bar over all)', [offlineShares(pooled.test, pooledScorer, random)]);
    offlineGroup(
      'GSM8K',
      gsm8kSplits.map((part) => offlineShares(part.test, trainedScorer(part.training), random)),
    );

    // (ii) certified
    for (const evidence of ['design', 'gold'] as const) {
      const run = (group: string, parts: Split[], horizonWorkloads: number): void => {
        const key = `${group}|${evidence}`;
        const accumulator = certified.get(key) ?? emptyAccumulator(group, evidence, parts.length);
        for (const part of parts)
          accumulator.cases.push(
            certifyOnHalves(
              part,
              evidence,
              plan.horizonCalls * horizonWorkloads,
              createRandom(seedFor(seed, 'per-call evidence', evidence, part.test[0]?.workload ?? '', split)),
            ),
          );
        certified.set(key, accumulator);
      };
      run('MMLU, each subject a workload', mmluSplits, 1);
      run('MMLU as one workload (the traffic of all 56)', [pooled], mmluSplits.length);
      run('GSM8K', gsm8kSplits, 1);
    }
  }
  const curve = evidenceCurve(
    [
      { name: 'MMLU as one workload', items: mmlu.flat(), sizes: [500, 1_000, 2_000, 4_000, 8_000, Number.POSITIVE_INFINITY] },
      {
        name: 'MMLU as one workload, a policy on length alone',
        items: mmlu.flat().map(withoutWords),
        sizes: [500, 1_000, 2_000, 4_000, 8_000, Number.POSITIVE_INFINITY],
      },
      { name: 'GSM8K', items: gsm8k.flat(), sizes: [500, 1_000, Number.POSITIVE_INFINITY] },
    ],
    { design: perCallContract('design'), gold: perCallContract('gold') },
    seed,
    plan.splits,
  );
  return {
    plan,
    offline: [...offline.entries()].map(([group, values]) => finishOffline(group, values)),
    certified: [...certified.values()].map(finishAccumulator),
    curve,
    featureCost: {
      microsecondsPerCall: microseconds / prompts.length,
      kilobytesPerCall: prompts.reduce((sum, prompt) => sum + prompt.text.length, 0) / prompts.length / 1024,
    },
  };
}

/** The item with no features: its model learns P(loss) as one number, so the policy ranks calls by their saving alone (the longest first). */
function withoutWords(item: Item): Item {
  return { ...item, features: { dimension: item.features.dimension, indices: [], values: [] } };
}

type Scorer = (item: Item) => number;

/** One online pass over the training items in their (random) order; scores P(loss | x). */
function trainedScorer(training: Item[]): Scorer {
  const model = emptyCallModel(training[0]?.features.dimension ?? 1);
  for (const item of training) trainInPlace(model, item.features, !item.real.cheapCorrect && item.real.requestedCorrect);
  return (item) => lossProbability(model, item.features);
}

/** Sums over test halves: prompts and calls sent at the bar, GPT-4's cost and the savings at the bar. */
interface OfflineShares {
  prompts: number;
  calls: { policy: number; randomOrder: number; randomShare: number };
  requestedCost: number;
  savings: { policy: number; longestFirst: number; randomShare: number };
}

/** What each order sends to Mixtral of one test half at the bar: calls by P(loss), by a random order, as a random share; savings by P(loss) / saving, longest first, as a random share. */
function offlineShares(test: Item[], scorer: Scorer, random: Random): OfflineShares {
  const cheapRight = test.filter((item) => item.real.cheapCorrect).length;
  const requestedRight = test.filter((item) => item.real.requestedCorrect).length;
  const share = Math.min(1, largestShare(cheapRight, requestedRight, BAR));
  const scored = test.map((item) => ({ item, loss: scorer(item), tie: random() }));
  const order = (key: (entry: (typeof scored)[number]) => number): Item[] =>
    [...scored].sort((left, right) => key(left) - key(right) || left.tie - right.tie).map((entry) => entry.item);
  const saved = (item: Item): number => item.real.requestedCost - item.real.cheapCost;
  return {
    prompts: test.length,
    calls: {
      policy: atBar(
        order((entry) => entry.loss),
        requestedRight,
        () => 1,
      ),
      randomOrder: atBar(shuffle(test, random), requestedRight, () => 1),
      randomShare: share * test.length,
    },
    requestedCost: test.reduce((sum, item) => sum + item.real.requestedCost, 0),
    savings: {
      policy: atBar(
        order((entry) => entry.loss / entry.item.saving),
        requestedRight,
        saved,
      ),
      longestFirst: atBar(
        order((entry) => -entry.item.saving),
        requestedRight,
        saved,
      ),
      randomShare: share * test.reduce((sum, item) => sum + saved(item), 0),
    },
  };
}

/** Sending the longest prefix of `ordered` to Mixtral (the rest to GPT-4) that keeps accuracy ≥ BAR × GPT-4's: the sum of `value` over it. */
function atBar(ordered: Item[], requestedRight: number, value: (item: Item) => number): number {
  let right = requestedRight;
  let sum = 0;
  let best = 0;
  for (const item of ordered) {
    right += Number(item.real.cheapCorrect) - Number(item.real.requestedCorrect);
    sum += value(item);
    if (right >= BAR * requestedRight - 1e-9) best = sum;
  }
  return best;
}

function sumShares(parts: OfflineShares[]): OfflineShares {
  const total = (pick: (item: OfflineShares) => number): number => parts.reduce((sum, item) => sum + pick(item), 0);
  return {
    prompts: total((item) => item.prompts),
    calls: {
      policy: total((item) => item.calls.policy),
      randomOrder: total((item) => item.calls.randomOrder),
      randomShare: total((item) => item.calls.randomShare),
    },
    requestedCost: total((item) => item.requestedCost),
    savings: {
      policy: total((item) => item.savings.policy),
      longestFirst: total((item) => item.savings.longestFirst),
      randomShare: total((item) => item.savings.randomShare),
    },
  };
}

function finishOffline(group: string, splits: OfflineShares[]): OfflineFigures {
  const average = (pick: (item: OfflineShares) => number): number => mean(splits.map(pick));
  const gains = splits.map((item) => (item.calls.policy - item.calls.randomShare) / item.prompts);
  return {
    group,
    testPrompts: average((item) => item.prompts),
    calls: {
      policy: average((item) => item.calls.policy / item.prompts),
      randomOrder: average((item) => item.calls.randomOrder / item.prompts),
      randomShare: average((item) => item.calls.randomShare / item.prompts),
    },
    savings: {
      policy: average((item) => item.savings.policy / item.requestedCost),
      longestFirst: average((item) => item.savings.longestFirst / item.requestedCost),
      randomShare: average((item) => item.savings.randomShare / item.requestedCost),
    },
    callGainRange: { min: Math.min(...gains), max: Math.max(...gains) },
  };
}

interface CaseResult {
  prompts: number;
  calls: { policy: number; randomBeside: number; randomAlone: number; router: number };
  /** On the test half: GPT-4's cost, and what each rule saves. */
  requestedCost: number;
  saving: { policy: number; randomAlone: number; router: number };
  evaluation: number;
  horizonCost: number;
  right: { served: number; requested: number };
}

/** One workload-split: the halves streamed through the policy epochs as paired samples; shares and savings on the test half. */
function certifyOnHalves(part: Split, evidence: Evidence, horizonCalls: number, random: Random): CaseResult {
  const contract = perCallContract(evidence);
  const all = [...part.training, ...part.test];
  // Freeze points at half and at all of the training half: the policy (epoch 1) is made at its end and certified on the test half.
  const epochOptions = { firstFreeze: Math.max(1, Math.floor(part.training.length / 2)), activeEpochs: 2 };
  let state = emptyPolicyEpochs(all[0]?.features.dimension ?? 1, epochOptions);
  let pairs = emptyPairedEvidence();
  let evaluation = 0;
  for (const item of all) {
    const { sample, spend } = pairedSample(item.real, evidence, random);
    evaluation += spend;
    pairs = recordPairedSample(pairs, sample);
    state = recordEpochSample(state, { features: item.features, sample, saving: item.saving }, contract, epochOptions);
  }
  const policy = state.epochs.find((epoch) => epoch.epoch === 1);
  const verdict = certifiedPolicies(state, contract, epochOptions).all.find((item) => item.epoch === 1);
  const fraction = verdict?.verdict.share ?? 0;
  const randomBeside = certifiedShare(pairs, { ...contract, confidence: randomShareConfidence(contract.confidence) }).share;
  const randomAlone = certifiedShare(pairs, contract).share;
  // The router serves whichever certificate it expects to save more (its estimate: the held-out samples' savings).
  const usePolicy = (verdict?.savingShare ?? 0) > randomBeside;
  const result: CaseResult = {
    prompts: part.test.length,
    calls: { policy: verdict?.callShare ?? 0, randomBeside, randomAlone, router: usePolicy ? (verdict?.callShare ?? 0) : randomBeside },
    requestedCost: 0,
    saving: { policy: 0, randomAlone: 0, router: 0 },
    evaluation,
    horizonCost: (all.reduce((sum, item) => sum + item.real.requestedCost, 0) / all.length) * horizonCalls,
    right: { served: 0, requested: 0 },
  };
  for (const item of part.test) {
    const saved = item.real.requestedCost - item.real.cheapCost;
    const toPolicy = policy !== undefined && routesToCandidate(policy.policy, item.features, item.saving) ? fraction : 0;
    const share = usePolicy ? toPolicy : randomBeside;
    result.requestedCost += item.real.requestedCost;
    result.saving.policy += toPolicy * saved;
    result.saving.randomAlone += randomAlone * saved;
    result.saving.router += share * saved;
    result.right.requested += Number(item.real.requestedCorrect);
    result.right.served += share * Number(item.real.cheapCorrect) + (1 - share) * Number(item.real.requestedCorrect);
  }
  return result;
}

interface CertifiedAccumulator {
  group: string;
  evidence: string;
  workloads: number;
  cases: CaseResult[];
}

function emptyAccumulator(group: string, evidence: Evidence, workloads: number): CertifiedAccumulator {
  return { group, evidence: EVIDENCE_LABELS[evidence], workloads, cases: [] };
}

function finishAccumulator(accumulator: CertifiedAccumulator): CertifiedFigures {
  const { cases } = accumulator;
  const total = (pick: (item: CaseResult) => number): number => cases.reduce((sum, item) => sum + pick(item), 0);
  const prompts = total((item) => item.prompts);
  const weighted = (pick: (item: CaseResult) => number): number => total((item) => pick(item) * item.prompts) / prompts;
  const requested = total((item) => item.requestedCost);
  return {
    group: accumulator.group,
    evidence: accumulator.evidence,
    workloads: accumulator.workloads,
    calls: {
      policy: weighted((item) => item.calls.policy),
      randomBeside: weighted((item) => item.calls.randomBeside),
      randomAlone: weighted((item) => item.calls.randomAlone),
      router: weighted((item) => item.calls.router),
    },
    savings: {
      policy: total((item) => item.saving.policy) / requested,
      randomAlone: total((item) => item.saving.randomAlone) / requested,
      router: total((item) => item.saving.router) / requested,
    },
    evaluationShare: total((item) => item.evaluation) / total((item) => item.horizonCost),
    policyWins: cases.filter((item) => item.saving.policy > item.saving.randomAlone).length,
    cases: cases.length,
    quality: total((item) => item.right.served) / total((item) => item.right.requested),
    worstQuality: Math.min(...cases.map((item) => (item.right.requested === 0 ? 1 : item.right.served / item.right.requested))),
  };
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
