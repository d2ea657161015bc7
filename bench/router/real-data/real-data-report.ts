/**
 * The real-data mode's report: what the data is, the oracles on it, and for
 * each run the totals per group of today's router and of the paired-shares
 * rule side by side, and the figures per workload (Markdown). The rule's own
 * sections are in paired-shares-report.ts.
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import type { RouterSettings } from '../settings.js';
import type { OracleSavings } from './oracles.js';
import type { PairedGroupFigures, PooledShare } from './paired-shares-run.js';
import { describePairedShares, renderPairedLimits, renderPooling } from './paired-shares-report.js';
import type { RealDataRun } from './real-data-mode.js';
import { dataOracles, realDataSettings, type GroupFigures } from './real-data-run.js';
import type { RecordedData } from './routellm-data.js';
import { count, percent, table, usd } from './markdown.js';

export interface RealDataResults {
  directory: string;
  seed: number;
  quick: boolean;
  data: { workloads: number; prompts: number; leftOut: RecordedData['leftOut']; cheap: RecordedData['cheap']; requested: RecordedData['requested'] };
  oracles: { calls: ReturnType<typeof dataOracles>; tokens: ReturnType<typeof dataOracles> };
  runs: RealDataRun[];
  /** Evidence pooled over all workloads, at its limit (paired-shares-run.ts). */
  pooled: PooledShare;
  seconds: number;
}

const oracleCells = (savings: OracleSavings): string[] => [percent(savings.whole), percent(savings.shares), percent(savings.randomShare), percent(savings.perQuery)];

export function renderRealDataReport(results: RealDataResults): string {
  const { data } = results;
  const sections = [
    '# Router on real data (RouteLLM: Mixtral-8x7B against GPT-4)',
    '',
    `Data: \`${results.directory}\`, read at run time. ${data.workloads} workloads (${count(data.prompts)} prompts): each MMLU subject and GSM8K, requested model ${data.requested.name} ($${data.requested.pricePerMillionTokens}/M tokens), one candidate ${data.cheap.name} ($${data.cheap.pricePerMillionTokens}/M). Left out: ${data.leftOut.contaminatedPrompts} contaminated prompts; ${data.leftOut.subjects.map((subject) => `${subject.name} (${subject.prompts} prompts: ${subject.reason})`).join('; ')}.`,
    `Seed ${results.seed}${results.quick ? ' (quick)' : ''}; ${results.seconds.toFixed(0)} s.`,
    '',
    'Calls ask the workload\'s prompts in a seeded random order, cycled. A reply is an answer, right when the data says so; a wrong MMLU answer is one of the three wrong letters (seeded hash of prompt and model), a wrong GSM8K answer the last number of the model\'s recorded reply. Tokens: prompt characters / 4, plus 5 for an MMLU letter or the recorded reply\'s characters / 4 for GSM8K; a call costs its tokens at the model\'s price. The router is the worker simulation with the real decision code (`src/routing`), the default eval contract (agreement with the requested model\'s answer, pass_rate ' +
      `${DEFAULT_CONTRACT.pass_rate}, confidence ${DEFAULT_CONTRACT.confidence}, min_samples ${DEFAULT_CONTRACT.min_samples}), 5% shadow checks of a cheaper serving model, a day's cooldown. Answers are compared by rule (as \`method: normalized\`): the default \`auto\` method would hand each differing short answer to the pairwise judge, whose verdicts and spend are not modelled here, so eval spend is only the replays on Mixtral and the shadow replies of GPT-4. The daily budget is not modelled either (see the largest day's eval spend below).`,
    '',
    '## Oracles on the data (each prompt once, quality ≥ 95% of GPT-4\'s)',
    '',
    table(
      ['Group', 'cost basis', 'prompts', 'Mixtral accuracy', 'GPT-4 accuracy', 'whole workloads', 'shares per workload', 'random share (share of calls)', 'per query'],
      (['calls', 'tokens'] as const).flatMap((basis) =>
        results.oracles[basis].map((group) => [
          group.name,
          basis === 'calls' ? 'every call the same size (the data README)' : 'tokens',
          count(group.prompts),
          percent(group.cheapAccuracy),
          percent(group.requestedAccuracy),
          percent(group.savings.whole, 2),
          percent(group.savings.shares, 2),
          `${percent(group.savings.randomShare, 2)} (${percent(group.randomShare)})`,
          percent(group.savings.perQuery, 2),
        ]),
      ),
    ),
  ];
  sections.push('', ...describePairedShares());
  for (const run of results.runs) sections.push('', ...renderRun(run));
  sections.push('', ...renderPooling(results.pooled));
  return `${sections.join('\n')}\n`;
}

export function describeSettings(settings: RouterSettings): string {
  return `sample_rate ${settings.sampleRate}, ${count(settings.callsPerDay)} calls a day, minSamples ${settings.minSamples}, maxSamples ${settings.maxSamples}, shadow ${settings.shadowRate}, cooldown ${count(settings.cooldownCalls)} calls`;
}

function renderRun({ today: run, paired: [paired, ...variants] }: RealDataRun): string[] {
  const mmlu = run.workloads.filter((workload) => workload.name.startsWith('mmlu/'));
  const mostAgreeing = [...mmlu].sort((left, right) => right.agreement - left.agreement)[0];
  const switched = run.workloads.filter((workload) => workload.firstSavingCall !== null).length;
  const busiestDay = Math.max(...run.workloads.map((workload) => workload.maxDailyEvaluation));
  const ruleRow = (groupName: string, rule: string, group: GroupFigures | PairedGroupFigures): Array<string | number> => {
    const saved = group.requestedCost - group.production;
    return [
      groupName,
      rule,
      percent(group.qualityRatio),
      percent(group.minQualityRatioAfterFirstFifth),
      usd(group.requestedCost),
      usd(group.production),
      usd(group.evaluation),
      percent(group.savings, 2),
      percent(group.netSavings, 2),
      saved > 0 ? percent(group.evaluation / saved) : 'n/a',
      ...oracleCells(group.oracles),
      `${group.switched} of ${group.workloads}`,
      group.medianFirstSaving === null ? 'never' : count(group.medianFirstSaving),
    ];
  };
  const pairedByName = new Map((paired?.workloads ?? []).map((workload) => [workload.name, workload]));
  return [
    `## ${run.plan.label}`,
    '',
    `${count(run.plan.callsPerWorkload)} calls a workload. Today's router: ${describeSettings(realDataSettings(run.plan))}; ${switched} of ${run.workloads.length} workloads switched to Mixtral.` +
      (mostAgreeing === undefined ? '' : ` The highest agreement of Mixtral with GPT-4 on an MMLU subject is ${percent(mostAgreeing.agreement)} (${mostAgreeing.name}), against the contract's ${DEFAULT_CONTRACT.pass_rate}.`) +
      ` Its largest eval spend of a workload in a day: ${usd(busiestDay)} (the default daily budget: $${DEFAULT_CONTRACT.daily_budget_usd}).` +
      (paired === undefined
        ? ''
        : ` Paired shares: sample rate ${paired.plan.sampleRate === 'budget' ? `the budget's, ${paired.groups.map((group) => `${group.name} ${describeRates(group.sampleRates)}`).slice(0, -1).join(', ')}` : paired.plan.sampleRate}; median samples a workload ${paired.groups.map((group) => `${group.name} ${count(group.medianSamples)}`).slice(0, -1).join(', ')}; largest eval spend of a workload in a day ${usd(Math.max(...paired.workloads.map((workload) => workload.maxDailyEvaluation)))}.`),
    '',
    'Savings against GPT-4 serving every call. The oracles here are on the same calls, costed by tokens: every workload has as many calls whatever its number of prompts, so they differ from the oracles on the data above. "Saving" counts the workloads that served any call from Mixtral.',
    '',
    table(
      ['Group', 'rule', "served accuracy / GPT-4's", 'worst workload after its first fifth', 'GPT-4 only', 'production', 'eval spend', 'saved, gross', 'net', 'eval spend / gross saving', 'oracle: whole workloads', 'shares per workload', 'random share', 'per query', 'saving', 'median calls to the first saving'],
      run.groups.flatMap((group, index) => {
        const pairedGroup = paired?.groups[index];
        return [ruleRow(group.name, "today's router", group), ...(pairedGroup === undefined ? [] : [ruleRow('', 'paired shares', pairedGroup)])];
      }),
    ),
    '',
    ...(paired === undefined ? [] : renderPairedLimits(paired, variants)),
    `<details><summary>Per workload (${run.workloads.length})</summary>`,
    '',
    table(
      ['Workload', 'prompts', 'Mixtral accuracy', 'GPT-4 accuracy', 'agreement', 'oracle: whole', 'shares (its share)', 'per query', 'today: served / GPT-4', 'net', 'first saving (call)', 'paired: share certified', 'samples', 'served / GPT-4', 'after 1st fifth', 'gross', 'net', 'first saving (call)'],
      run.workloads.map((workload) => {
        const pairedWorkload = pairedByName.get(workload.name);
        return [
          workload.name,
          count(workload.prompts),
          percent(workload.cheapAccuracy),
          percent(workload.requestedAccuracy),
          percent(workload.agreement),
          percent(workload.oracles.whole),
          `${percent(workload.oracles.shares)} (${percent(workload.oracleShare)})`,
          percent(workload.oracles.perQuery),
          percent(workload.qualityRatio),
          percent(workload.netSavings, 2),
          workload.firstSavingCall === null ? 'never' : count(workload.firstSavingCall),
          ...(pairedWorkload === undefined
            ? []
            : [
                percent(pairedWorkload.share),
                `${count(pairedWorkload.samples)}${pairedWorkload.stopped === null ? '' : ` (stopped at call ${count(pairedWorkload.stopped.atCall)}: ${pairedWorkload.stopped.reason})`}`,
                percent(pairedWorkload.qualityRatio),
                percent(pairedWorkload.qualityRatioAfterFirstFifth),
                percent(pairedWorkload.savings, 2),
                percent(pairedWorkload.netSavings, 2),
                pairedWorkload.firstSavingCall === null ? 'never' : count(pairedWorkload.firstSavingCall),
              ]),
        ];
      }),
    ),
    '',
    '</details>',
  ];
}

function describeRates(rates: { min: number; max: number }): string {
  return rates.min === rates.max ? rates.min.toFixed(2) : `${rates.min.toFixed(2)}-${rates.max.toFixed(2)}`;
}
