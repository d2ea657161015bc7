/**
 * The real-data report's section on calls picked one by one
 * (per-call-policy.ts): what the ranking is worth offline, what a
 * certificate keeps of it, how much evidence it takes, and what the worker
 * does with it on MMLU as one workload (mixed-workload.ts).
 */
import { DEFAULT_POLICY_ALPHA_SHARE } from '../../../src/routing/policy-epochs.js';
import type { MixedWorkloadFigures } from './mixed-workload.js';
import type { PerCallPolicyResults } from './per-call-policy.js';
import type { RealRunPlan } from './real-data-run.js';
import { count, percent, table } from './markdown.js';

const share = DEFAULT_POLICY_ALPHA_SHARE;
const ofAlpha = (fraction: number): string => `${Number(fraction.toFixed(3))}α`;

export function renderPerCallPolicy(results: PerCallPolicyResults): string[] {
  const { plan, featureCost } = results;
  return [
    '## Calls picked one by one (issue 37 item 3)',
    '',
    `A logistic model of P(loss | request) on hashed words (\`src/routing/call-features.ts\`, \`call-policy.ts\`), one online pass; the policy sends a call to Mixtral iff P(loss) ≤ τ × the call's saving (its estimated tokens), or, offline, takes calls in the order of P(loss). Each workload's prompts are split in half at random, ${plan.splits} times; every prompt is asked once. Feature extraction: ${featureCost.microsecondsPerCall.toFixed(1)} µs a prompt (mean ${featureCost.kilobytesPerCall.toFixed(2)} KB).`,
    '',
    "**(i) Offline**: trained on one half; on the other, what goes to Mixtral at ≥ 95% of GPT-4's accuracy on that half. The policy's cut and the random share are both chosen on the test half's answers; \"random order\" makes the same search over a random order, the optimism of that choice with no signal.",
    '',
    table(
      [
        'Group',
        'test prompts',
        'calls: policy (by P(loss))',
        'random order',
        'random share',
        'policy − random share, per split',
        'saving: policy (by P(loss) / saving)',
        'longest prompts first',
        'random share',
      ],
      results.offline.map((item) => [
        item.group,
        count(item.testPrompts),
        percent(item.calls.policy),
        percent(item.calls.randomOrder),
        percent(item.calls.randomShare),
        `${percent(item.callGainRange.min)} to ${percent(item.callGainRange.max)}`,
        percent(item.savings.policy),
        percent(item.savings.longestFirst),
        percent(item.savings.randomShare),
      ]),
    ),
    '',
    `**(ii) Certified on the held-out half**: the halves stream through the policy epochs (\`src/routing/policy-epochs.ts\`) as paired samples: the model learns from the first quarter, the threshold from the second, and the policy is certified on the test half at ${ofAlpha(share / 2)} (the first epoch's share of α). Random: \`certifiedShare\` on all samples, at ${ofAlpha(1 - share)} beside the policy and at α alone; the router with both serves whichever it expects to save more. Savings on the test halves at the paper's prices; eval spend: sampling every prompt once (the same for every rule), over ${count(plan.horizonCalls)} calls a workload; net = gross − eval spend.`,
    '',
    table(
      [
        'Group',
        'evidence',
        'calls to Mixtral: policy',
        `random beside (${ofAlpha(1 - share)})`,
        'random alone (α)',
        'router',
        'saving, gross: policy',
        'random alone',
        'router',
        'eval spend',
        'net: random alone',
        'router',
        'policy saves more',
        "served / GPT-4's (worst)",
      ],
      results.certified.map((item) => [
        item.group,
        item.evidence,
        percent(item.calls.policy),
        percent(item.calls.randomBeside),
        percent(item.calls.randomAlone),
        percent(item.calls.router),
        percent(item.savings.policy),
        percent(item.savings.randomAlone),
        percent(item.savings.router),
        percent(item.evaluationShare, 2),
        percent(item.savings.randomAlone - item.evaluationShare),
        percent(item.savings.router - item.evaluationShare),
        `${item.policyWins} of ${item.cases}`,
        `${percent(item.quality)} (${percent(item.worstQuality)})`,
      ]),
    ),
    '',
    `**(iii) How much evidence**: the policy epochs with the router's defaults (a policy model frozen at 100 samples and at every doubling, its threshold chosen on the samples until the next, policies certified at ${ofAlpha(share)}·2^−k, the random share beside them at ${ofAlpha(1 - share)}) on one stream, every prompt once in a random order, looked at after n samples. Savings on the prompts the chosen policy never learned from; the router serves the policy when it expects it to save more than the random share beside it. "Length alone": the same with no words (the model learns one number, so the policy sends the longest calls).`,
    '',
    table(
      ['Workload', 'evidence', 'samples', 'saving: policy', 'random alone', 'router', 'router chose the policy', "worst served / GPT-4's"],
      results.curve.map((point) => [
        point.group,
        point.evidence,
        count(point.samples),
        percent(point.savings.policy),
        percent(point.savings.randomAlone),
        percent(point.savings.router),
        `${point.policyChosen} of ${point.splits}`,
        percent(point.worstQuality),
      ]),
    ),
  ];
}

/** (iv) The policies as the worker runs them (paired-shares.ts with `perCall`), on MMLU as one workload (mixed-workload.ts). */
export function renderPerCallWorker(plan: RealRunPlan, figures: readonly MixedWorkloadFigures[]): string[] {
  const spend = (item: MixedWorkloadFigures): string => {
    const shares = item.spendShares;
    return `${percent(shares.candidateReplays, 2)} / ${percent(shares.referenceReplays, 2)} / ${percent(shares.verdicts, 2)} / ${percent(shares.grades, 2)} / ${percent(shares.selfChecks, 2)}`;
  };
  const atEnd = (item: MixedWorkloadFigures): string => {
    const policy = item.perCallOutcome?.policy;
    if (policy === undefined || policy === null) return `${percent(item.share)} (random)`;
    return `${percent(item.share)} (policy #${policy.epoch}: ${percent(policy.share)} of the ${percent(policy.routedShare)} it picks)`;
  };
  const picked = (item: MixedWorkloadFigures): string => {
    const outcome = item.perCallOutcome;
    if (outcome === null) return 'n/a';
    const best = outcome.best === null ? 'none' : `#${outcome.best.epoch}: ${percent(outcome.best.callShare)} of calls`;
    return `${outcome.firstPolicyCall === null ? 'never' : `call ${count(outcome.firstPolicyCall)}, ${count(outcome.policyCalls)} calls`}; ${outcome.policiesMade} made from ${count(outcome.learned)} samples; best certified at the end ${best}`;
  };
  return [
    `**(iv) In the worker**, per_call at worker level, MMLU as one workload (every subject's ${count(figures[0]?.prompts ?? 0)} prompts mixed into one workload, alone, so no pooled prior), ${plan.label}: \`bench/router/real-data/paired-shares.ts\` with the contract's \`per_call\` on, as the worker runs it (route-policies.ts, sample-processor.ts): the policies learn from every sample that enters Mixtral's evidence (the router's own samples, no split in halves), the random share is certified at ${ofAlpha(1 - share)}, a policy that saves more serves (its share of the calls it picks, P(loss) ≤ τ × the call's size, \`requestSize\`), and a call it picked enters the evidence only when sampled for exploration while the plan tests Mixtral, with a GPT-4 replay as its reference. Eval spend as a share of GPT-4 on every call: Mixtral replays / GPT-4 reference replays / verdicts / grades / self-checks.`,
    '',
    table(
      [
        'per_call',
        "served / GPT-4's",
        'saved, gross',
        'net',
        'eval spend',
        'Mixtral at the end (of all calls)',
        'mean over the run',
        'exploration replays',
        'grader checks differed (grades at the end)',
        'policy: first served; made; best',
      ],
      figures.map((item) => [
        item.label,
        percent(item.qualityRatio),
        percent(item.savings, 2),
        percent(item.netSavings, 2),
        spend(item),
        atEnd(item),
        percent(item.meanShare),
        count(item.samples.exploration),
        `${item.graderChecks.differed} of ${item.graderChecks.compared} (${item.gradeError === null ? 'dropped' : 'kept'})`,
        picked(item),
      ]),
    ),
  ];
}
