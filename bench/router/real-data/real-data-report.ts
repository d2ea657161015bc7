/**
 * The real-data mode's report: what the data is, the oracles on it, and for
 * each run the totals per group of the router under its relative default
 * and under the absolute semantics side by side, the issue's targets, and
 * the figures per workload (Markdown). The relative default's own sections
 * are in paired-shares-report.ts.
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import type { RouterSettings } from '../settings.js';
import type { OracleSavings } from './oracles.js';
import type { PooledShare } from './paired-shares-run.js';
import type { PerCallPolicyResults } from './per-call-policy.js';
import type { MixedWorkloadFigures } from './mixed-workload.js';
import { renderPerCallPolicy, renderPerCallWorker } from './per-call-policy-report.js';
import { describeRelativeRouter, renderPooling, renderRelativeLimits, renderTargets } from './paired-shares-report.js';
import type { RealDataRun } from './real-data-mode.js';
import { dataOracles, realDataSettings, type GroupFigures, type RealRunPlan } from './real-data-run.js';
import type { RecordedData } from './routellm-data.js';
import { count, percent, table, usd } from './markdown.js';

export interface RealDataResults {
  directory: string;
  seed: number;
  quick: boolean;
  data: {
    workloads: number;
    prompts: number;
    leftOut: RecordedData['leftOut'];
    cheap: RecordedData['cheap'];
    requested: RecordedData['requested'];
  };
  oracles: { calls: ReturnType<typeof dataOracles>; tokens: ReturnType<typeof dataOracles> };
  runs: RealDataRun[];
  /** Evidence pooled over all workloads, at its limit (paired-shares-run.ts). */
  pooled: PooledShare;
  /** Calls picked one by one (per-call-policy.ts). */
  perCall: PerCallPolicyResults;
  /** Per-call policies in the worker simulation, MMLU as one workload, run (b): per_call off and on (mixed-workload.ts). */
  perCallWorker: { plan: RealRunPlan; figures: MixedWorkloadFigures[] };
  seconds: number;
}

const oracleCells = (savings: OracleSavings): string[] => [
  percent(savings.whole),
  percent(savings.shares),
  percent(savings.randomShare),
  percent(savings.perQuery),
];

export function renderRealDataReport(results: RealDataResults): string {
  const { data } = results;
  const sections = [
    '# Router on real data (RouteLLM: Mixtral-8x7B against GPT-4)',
    '',
    `Data: \`${results.directory}\`, read at run time. ${data.workloads} workloads (${count(data.prompts)} prompts): each MMLU subject and GSM8K, requested model ${data.requested.name} ($${data.requested.pricePerMillionTokens}/M tokens), one candidate ${data.cheap.name} ($${data.cheap.pricePerMillionTokens}/M). Left out: ${data.leftOut.contaminatedPrompts} contaminated prompts; ${data.leftOut.subjects.map((subject) => `${subject.name} (${subject.prompts} prompts: ${subject.reason})`).join('; ')}.`,
    `Seed ${results.seed}${results.quick ? ' (quick)' : ''}; ${results.seconds.toFixed(0)} s.`,
    '',
    "Calls ask the workload's prompts in a seeded random order, cycled. A reply is an answer, right when the data says so; a wrong MMLU answer is one of the three wrong letters (seeded hash of prompt and model), a wrong GSM8K answer the last number of the model's recorded reply. Tokens: prompt characters / 4, plus 5 for an MMLU letter or the recorded reply's characters / 4 for GSM8K; a call costs its tokens at the model's price.",
    '',
    `Two routers on the same calls. **The router (relative default)**: the untouched default contract (quality_bar ${DEFAULT_CONTRACT.quality_bar}, confidence ${DEFAULT_CONTRACT.confidence}, min_samples ${DEFAULT_CONTRACT.min_samples}, $${DEFAULT_CONTRACT.daily_budget_usd} a day), described below. **The router (absolute, pass_rate ${DEFAULT_CONTRACT.pass_rate})**: a contract that sets \`pass_rate\` keeps the absolute semantics, every serving model agreeing with GPT-4's answer at that rate; it runs in the worker simulation with the real decision code, 5% shadow checks and a day's cooldown, answers compared by rule (as \`method: normalized\`; the pairwise judge of \`auto\` is not modelled there, so its eval spend is the replays alone, and the daily budget is not modelled either).`,
    '',
    "## Oracles on the data (each prompt once, quality ≥ 95% of GPT-4's)",
    '',
    table(
      [
        'Group',
        'cost basis',
        'prompts',
        'Mixtral accuracy',
        'GPT-4 accuracy',
        'whole workloads',
        'shares per workload',
        'random share (share of calls)',
        'per query',
      ],
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
  sections.push('', ...describeRelativeRouter());
  for (const run of results.runs) sections.push('', ...renderRun(run));
  sections.push('', ...renderPooling(results.pooled));
  sections.push('', ...renderPerCallPolicy(results.perCall));
  sections.push('', ...renderPerCallWorker(results.perCallWorker.plan, results.perCallWorker.figures));
  return `${sections.join('\n')}\n`;
}

export function describeSettings(settings: RouterSettings): string {
  return `sample_rate ${settings.sampleRate}, ${count(settings.callsPerDay)} calls a day, minSamples ${settings.minSamples}, maxSamples ${settings.maxSamples}, shadow ${settings.shadowRate}, cooldown ${count(settings.cooldownCalls)} calls`;
}

function renderRun({ plan, relative: [router, ...variants], absolute }: RealDataRun): string[] {
  if (router === undefined) return [];
  const ruleRow = (groupName: string, rule: string, group: GroupFigures): Array<string | number> => {
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
  const absoluteByName = new Map(absolute.workloads.map((workload) => [workload.name, workload]));
  const busiestDay = Math.max(...router.workloads.map((workload) => workload.maxDailyEvaluation));
  return [
    `## ${plan.label}`,
    '',
    `${count(plan.callsPerWorkload)} calls a workload. Largest eval spend of a workload in a day: ${usd(busiestDay)} (relative default), ${usd(Math.max(...absolute.workloads.map((workload) => workload.maxDailyEvaluation)))} (absolute); the default daily budget is $${DEFAULT_CONTRACT.daily_budget_usd}. The absolute router: ${describeSettings(realDataSettings(plan))}.`,
    '',
    'Savings against GPT-4 serving every call. The oracles here are on the same calls, costed by tokens: every workload has as many calls whatever its number of prompts, so they differ from the oracles on the data above. "Saving" counts the workloads that served any call from Mixtral.',
    '',
    table(
      [
        'Group',
        'router',
        "served accuracy / GPT-4's",
        'worst workload after its first fifth',
        'GPT-4 only',
        'production',
        'eval spend',
        'saved, gross',
        'net',
        'eval spend / gross saving',
        'oracle: whole workloads',
        'shares per workload',
        'random share',
        'per query',
        'saving',
        'median calls to the first saving',
      ],
      router.groups.flatMap((group, index) => {
        const absoluteGroup = absolute.groups[index];
        return [
          ruleRow(group.name, router.variant.label, group),
          ...(absoluteGroup === undefined
            ? []
            : [ruleRow('', `the router (absolute, pass_rate ${DEFAULT_CONTRACT.pass_rate})`, absoluteGroup)]),
        ];
      }),
    ),
    '',
    ...renderTargets(plan, router),
    ...renderRelativeLimits([router, ...variants]),
    `<details><summary>Per workload (${router.workloads.length})</summary>`,
    '',
    table(
      [
        'Workload',
        'prompts',
        'Mixtral accuracy',
        'GPT-4 accuracy',
        'agreement',
        'oracle: whole',
        'shares (its share)',
        'per query',
        'relative: share at the end',
        'mean share over the run (calls on the prior)',
        'exploration replays (call of the last)',
        'served / GPT-4',
        'after 1st fifth',
        'gross',
        'net',
        'first saving (call)',
        'demotions',
        'absolute: served / GPT-4',
        'net',
        'first saving (call)',
      ],
      router.workloads.map((workload) => {
        const other = absoluteByName.get(workload.name);
        return [
          workload.name,
          count(workload.prompts),
          percent(workload.cheapAccuracy),
          percent(workload.requestedAccuracy),
          percent(workload.agreement),
          percent(workload.oracles.whole),
          `${percent(workload.oracles.shares)} (${percent(workload.oracleShare)})`,
          percent(workload.oracles.perQuery),
          workload.wholeFromCall === null ? percent(workload.share) : `whole from call ${count(workload.wholeFromCall)}`,
          `${percent(workload.meanRunShare)} (${count(workload.priorCalls)})`,
          `${count(workload.samples.exploration)} (${workload.lastExplorationCall === null ? 'none' : count(workload.lastExplorationCall)})`,
          percent(workload.qualityRatio),
          percent(workload.qualityRatioAfterFirstFifth),
          percent(workload.savings, 2),
          percent(workload.netSavings, 2),
          workload.firstSavingCall === null ? 'never' : count(workload.firstSavingCall),
          workload.demotions,
          other === undefined ? 'n/a' : percent(other.qualityRatio),
          other === undefined ? 'n/a' : percent(other.netSavings, 2),
          other?.firstSavingCall == null ? 'never' : count(other.firstSavingCall),
        ];
      }),
    ),
    '',
    '</details>',
  ];
}
