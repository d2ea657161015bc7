/**
 * The paired-shares rule's sections of the real-data report: how it is
 * simulated, what limits it (its variants, each with one thing changed), and
 * why evidence pooled over workloads is not used.
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import { JUDGE_OVERHEAD_TOKENS, PAIRED_SHARES } from './paired-shares.js';
import type { PairedSharesRun, PooledShare } from './paired-shares-run.js';
import { count, percent, table } from './markdown.js';

export function describePairedShares(): string[] {
  const grading = PAIRED_SHARES.grading.by === 'judge' ? PAIRED_SHARES.grading.agreementShare : 1;
  return [
    '## The paired-shares rule (issue 37\'s design, simulated before it is wired in)',
    '',
    `Per workload, with the statistics of \`src/routing/paired-quality.ts\` and \`workload-shares.ts\`: each call goes to Mixtral with probability the share certified so far (\`certifiedShare\`, quality_bar 0.95, confidence ${DEFAULT_CONTRACT.confidence}, min_samples ${DEFAULT_CONTRACT.min_samples}), else to GPT-4; shares start at 0. ` +
      'A sampled call (drawn at the rate, whatever its content or route) is replayed on the other model: on Mixtral when GPT-4 served it (eval spend: Mixtral\'s cost of the call), on GPT-4 when Mixtral did (GPT-4\'s cost). Equal answers are "same"; different ones go to a judge priced as GPT-4 on the prompt, both replies and ' +
      `${JUDGE_OVERHEAD_TOKENS} tokens of instructions and verdict, whose verdict is the data's truth (win, loss, or tie when both are wrong) reversed with probability ε = ${PAIRED_SHARES.judgeError}. ` +
      `A gateway has no gold answers, so GPT-4's reply is graded by the same judge (error ε, priced on the prompt and one reply) on a random ${percent(grading, 0)} of the agreements, with \`agreementGradesSampled\`. ` +
      'Sampling stops for good once the share is certified at 1, or once (ŝ − s) × saving per call × calls left < eval spend per sample so far × samples so far: ŝ is the share the sample means would give, s the certified one, and "as many samples again" stands for the samples still needed (the bounds narrow by about √2 when the evidence doubles). Calls left are those of the run, which the simulation knows; production would use a payback window of traffic. ' +
      `Run (a) samples at its fixed rate; run (b) at the largest rate at which even the dearest sample (a Mixtral-served call replayed on GPT-4, then judged) keeps a workload's day within the default $${DEFAULT_CONTRACT.daily_budget_usd} eval budget: ${DEFAULT_CONTRACT.daily_budget_usd} / (calls a day × mean cost of such a sample). Nothing watches for drift once sampling stops (the data does not drift).`,
  ];
}

/** The variants side by side, per group: the certified share against the oracle's, savings, and where the eval spend goes. */
export function renderPairedLimits(design: PairedSharesRun, variants: PairedSharesRun[]): string[] {
  const rows = [design, ...variants].flatMap((run, index) =>
    run.groups
      .filter((group) => !group.name.startsWith('all '))
      .map((group) => [
        index === 0 ? `**${run.variant.label}** (the design)` : run.variant.label,
        group.name,
        `${percent(group.meanShare)} (${percent(group.meanOracleShare)})`,
        percent(group.savings, 1),
        percent(group.netSavings, 1),
        `${percent(group.spendShares.replays, 2)} / ${percent(group.spendShares.verdicts, 2)} / ${percent(group.spendShares.grades, 2)}`,
        Number.isFinite(group.evaluationShareOfSaving) ? percent(group.evaluationShareOfSaving, 0) : 'n/a',
        count(group.medianSamples),
        percent(group.qualityRatio),
        percent(group.minQualityRatioAfterFirstFifth),
        group.medianFirstSaving === null ? 'never' : count(group.medianFirstSaving),
      ]),
  );
  return [
    'What limits the paired shares: the design, then each variant with one thing changed (the same sample rate and calls).',
    '',
    table(
      ['Paired shares', 'group', 'mean share certified at the end (the oracle\'s)', 'gross', 'net', 'eval spend: replays / verdicts / grades (of GPT-4 alone)', 'eval / gross', 'median samples', "served / GPT-4's", 'worst after 1st fifth', 'median calls to the first saving'],
      rows,
    ),
    '',
  ];
}

export function renderPooling(pooled: PooledShare): string[] {
  return [
    '## Evidence pooled over workloads (issue 37 item 4): not used',
    '',
    `All ${pooled.workloads} workloads ask the same pair, so their paired evidence could be pooled into one share. At its limit (the prompts' own correctness, no uncertainty) the pooled share is ${percent(pooled.share)}: it keeps all calls together at ${percent(pooled.qualityBar, 0)} of GPT-4, but sent to every workload it serves ${pooled.belowBar} of ${pooled.workloads} below the bar and ${pooled.belowNinety} below 90% (worst ${pooled.worst.name}, ${percent(pooled.worst.qualityRatio)} of GPT-4). The bar is per workload, and a bound on the mixture says nothing about one workload, so pooled evidence cannot raise a workload's share above its own certificate; min(pooled, own) never exceeds its own and gains nothing. A sound prior needs an assumption on how workloads differ (a hierarchical model) that the certificate would have to record; pooled evidence may still steer where to sample, which does not touch validity.`,
  ];
}
