/**
 * The relative default's sections of the real-data report: how it is
 * simulated, the issue's targets beside its figures, what limits it (its
 * variants, each with one thing changed), and what evidence pooled over
 * workloads would do at its limit (why the prior is shrunk and capped).
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import { MEASURED_AFTER } from '../../../src/routing/judge-error.js';
import { MAX_ERROR_RATE } from '../../../src/routing/paired-quality.js';
import { MAX_PRIOR_SHARE, MIN_MEMBER_SAMPLES, MIN_POOL_WORKLOADS } from '../../../src/routing/pooled-prior.js';
import { DEFAULT_ROUTER_SETTINGS } from '../../../src/routing/router-context.js';
import { ROUTER_DEFAULT } from './relative-variants.js';
import type { RelativeGroupFigures, RelativeRun, PooledShare } from './paired-shares-run.js';
import type { RealRunPlan } from './real-data-run.js';
import { JUDGE_ANSWER_TOKENS, JUDGE_INSTRUCTION_TOKENS } from './sample-judging.js';
import { count, percent, table } from './markdown.js';

/** Issue 37's targets on this data: MMLU's net saving per run (by its sample rate), and quality for every run. */
export const TARGETS = { mmluNet: { fixed: 0.25, auto: 0.3 }, qualityRatio: 0.95, worstAfterFirstFifth: 0.9 };

export function describeRelativeRouter(): string[] {
  const settings = DEFAULT_ROUTER_SETTINGS;
  return [
    '## The router (relative default)',
    '',
    `\`bench/router/real-data/paired-shares.ts\` runs the worker's loop with the router's own functions: \`drawRoute\` (a call goes to Mixtral with its certified share), \`explorationRate\` and \`planExploration\` (with \`possibleShares\`, the route's traffic from the router's traffic meter, horizon ${settings.horizonDays} days, at most ${count(settings.maxSamplesPerDay)} samples a day, the default $${DEFAULT_CONTRACT.daily_budget_usd} daily budget less the ${percent(settings.monitorBudgetShare, 0)} kept for monitoring, the judge spend per judged reply smoothed as the worker does), \`decideSplit\` with \`relativePolicyOf(DEFAULT_CONTRACT, ${ROUTER_DEFAULT.judgeError}, gradeErrorOf(${ROUTER_DEFAULT.judgeError}, graderChecks))\` (the grades dropped by \`withoutGrades\` when the grader's error is above the limit; after every sample up to 200, then every 1% more) applied as \`applyDecision\` does (\`splitChanged\`; a new serving model, or Mixtral taking or losing its share, starts the rollback detector and the plan again), and the rollback detector on the ${percent(settings.shadowRate, 0)} shadow checks of calls Mixtral served. ` +
      "A sampled call GPT-4 served is replayed on Mixtral; a call drawn into the share explores nothing; a call Mixtral served pays a GPT-4 replay as its reference (a call Mixtral served outright, sampled only to remake a stale plan, pays it only when the new plan has something to test). Equal answers are \"same\" (no judge); a disagreement gets one pairwise verdict, the data's truth (a tie when both are wrong) wrong with probability ε; GPT-4's reply is graded on every tie and on every agreement until Mixtral's evidence holds " +
      `${count(settings.gradeAllAgreementsUntil)} graded ones, then on a random ${percent(settings.gradeShare, 0)} of them, right or wrong from the data, wrong with probability ε. On a random ${percent(settings.graderCheckShare, 0)} of the wins and losses the grader grades GPT-4's reply instead (paid as a grade, not recorded), and differs when its grade contradicts the verdict: the grader keeps the assumed error ε unless its checks refute it (\`gradeErrorOf\`: at least ${MEASURED_AFTER / 2} checks, and the Wilson lower bound of that rate, less ε, above ε); only then is it charged ε plus the Wilson upper bound, its grades dropped above ${MAX_ERROR_RATE}. The judges are those \`chooseJudge\` picks: GPT-4 judges Mixtral's replies, Mixtral grades GPT-4's. A judge call costs the prompt, the reply or replies it reads, its prompt's instructions (${JUDGE_INSTRUCTION_TOKENS.pairwise} tokens pairwise, ${JUDGE_INSTRUCTION_TOKENS.grade} for a grade, measured from \`judge-prompts.ts\`) and its answer (assumed ${JUDGE_ANSWER_TOKENS.pairwise} and ${JUDGE_ANSWER_TOKENS.grade} tokens) at the judge's price. ` +
      `Every ${settings.judgeSelfCheckEvery} judged samples, a second GPT-4 reply checks the judge (the same answer here, so no judge is called). Latency is taken as within the contract's limit. ` +
      `The project's pooled prior (\`pooled-prior.ts\`, \`bench/router/real-data/paired-pool.ts\`): the MMLU subjects are one project and step call by call together, GSM8K a project of its own (a pool needs ${MIN_POOL_WORKLOADS} workloads with ${MIN_MEMBER_SAMPLES} paired samples each, so it runs alone); each decision passes \`decideSplit\` the prior's share for the workload (\`priorShare\` on \`fitPool\` of every subject's evidence, at most ${percent(MAX_PRIOR_SHARE, 0)}), served when it saves more than the workload's own certified share, and watched at the pool's not-loss rate until the workload has ${DEFAULT_CONTRACT.min_samples} samples of its own; the fit is made again when the pool has grown by 1% (at least 20 samples).`,
  ];
}

/** The issue's targets beside the relative default's figures, each said met or missed. */
export function renderTargets(plan: RealRunPlan, router: RelativeRun): string[] {
  const mmlu = router.groups.find((group) => group.name.startsWith('MMLU'));
  const all = router.groups.find((group) => group.name.startsWith('all '));
  const netTarget = typeof plan.sampleRate === 'number' ? TARGETS.mmluNet.fixed : TARGETS.mmluNet.auto;
  const line = (what: string, value: number | undefined, target: number): string =>
    `- ${what}: ${value === undefined ? 'n/a' : percent(value)}, target ≥ ${percent(target, 0)}: **${value !== undefined && value >= target ? 'met' : 'missed'}**`;
  return [
    `Issue 37's targets, ${router.variant.label}:`,
    '',
    line('MMLU net saving', mmlu?.netSavings, netTarget),
    line("served accuracy / GPT-4's over all calls (all workloads)", all?.qualityRatio, TARGETS.qualityRatio),
    line('worst workload after its first fifth', all?.minQualityRatioAfterFirstFifth, TARGETS.worstAfterFirstFifth),
    '',
  ];
}

/** The variants side by side, per group: the certified share against the oracle's, savings, and where the eval spend goes. */
export function renderRelativeLimits(runs: RelativeRun[]): string[] {
  const rows = runs.flatMap((run, index) =>
    run.groups
      .filter((group) => !group.name.startsWith('all '))
      .map((group) => [
        index === 0 ? `**${run.variant.label}**` : run.variant.label,
        group.name,
        `${percent(group.meanShare)} (${percent(group.meanOracleShare)})`,
        `${group.onPrior} of ${group.workloads} (${percent(group.meanRunShare)})`,
        percent(group.savings, 1),
        percent(group.netSavings, 1),
        spendCells(group),
        Number.isFinite(group.evaluationShareOfSaving) ? percent(group.evaluationShareOfSaving, 0) : 'n/a',
        `${count(group.medianSamples)} (${count(group.medianLastExploration)})`,
        percent(group.qualityRatio),
        percent(group.minQualityRatioAfterFirstFifth),
        group.medianFirstSaving === null ? 'never' : count(group.medianFirstSaving),
        `${group.demotions} / ${group.fallbacks}`,
      ]),
  );
  const [router] = runs;
  const days = router?.groups[0]?.medianDailyExploration ?? [];
  const shown = [1, 2, 3, 7, 14, 30].filter((day) => day <= days.length);
  const ramp =
    router === undefined || days.length < 2
      ? []
      : [
          `Exploration replays a workload-day, median over the workloads, ${router.variant.label}: ${router.groups
            .filter((group) => !group.name.startsWith('all '))
            .map(
              (group) =>
                `${group.name} ${shown.map((day) => `day ${day} ${count(group.medianDailyExploration[day - 1] ?? 0)}`).join(', ')}`,
            )
            .join('; ')}.`,
          '',
        ];
  const graders =
    router === undefined
      ? []
      : [
          `The grader measured against the verdicts, ${router.variant.label}: ${router.groups
            .filter((group) => !group.name.startsWith('all '))
            .map(
              (group) =>
                `${group.name} ${count(group.graderChecks.differed)} of ${count(group.graderChecks.compared)} checks contradicted (${percent(group.graderChecks.compared === 0 ? 0 : group.graderChecks.differed / group.graderChecks.compared)}), the assumption refuted on ${group.gradeError.refuted} of ${group.workloads} workloads, grades dropped on ${group.gradeError.dropped}${group.gradeError.dropped < group.workloads ? `, grade error at the end of the others a median ${group.gradeError.median.toFixed(3)}, at most ${group.gradeError.max.toFixed(3)}` : ''}`,
            )
            .join('; ')}.`,
          '',
        ];
  return [
    ...ramp,
    ...graders,
    'What limits it: the router as it ships, then from it one thing changed each (the same calls).',
    '',
    table(
      [
        'Relative default',
        'group',
        "mean share at the end, certified or on the prior (the oracle's)",
        'workloads ever served on the pooled prior (mean share over the run)',
        'gross',
        'net',
        'eval spend, of GPT-4 alone: Mixtral replays / GPT-4 references / verdicts / grades / self-checks',
        'eval / gross',
        'median exploration replays (call of the last)',
        "served / GPT-4's",
        'worst after 1st fifth',
        'median calls to the first saving',
        'demotions / fallbacks',
      ],
      rows,
    ),
    '',
  ];
}

function spendCells(group: RelativeGroupFigures): string {
  const shares = group.spendShares;
  return [shares.candidateReplays, shares.referenceReplays, shares.verdicts, shares.grades, shares.selfChecks]
    .map((value) => percent(value, 2))
    .join(' / ');
}

export function renderPooling(pooled: PooledShare): string[] {
  return [
    '## Evidence pooled over workloads (issue 37 item 4), at its limit',
    '',
    `All ${pooled.workloads} workloads ask the same pair, so their paired evidence could be pooled into one share. At its limit (the prompts' own correctness, no uncertainty) the pooled share is ${percent(pooled.share)}: it keeps all calls together at ${percent(pooled.qualityBar, 0)} of GPT-4, but sent to every workload it serves ${pooled.belowBar} of ${pooled.workloads} below the bar and ${pooled.belowNinety} below 90% (worst ${pooled.worst.name}, ${percent(pooled.worst.qualityRatio)} of GPT-4). The bar is per workload, and a bound on the mixture says nothing about one workload, so pooled evidence cannot certify a workload's share. The router's prior (\`pooled-prior.ts\`) is therefore an estimate, not a certificate: each workload's estimate is shrunk from the pool's toward its own evidence by how much the workloads differ (empirical Bayes), held where its pessimistic estimate keeps ${percent(1 - 2 * (1 - pooled.qualityBar), 0)} of GPT-4, capped at ${percent(MAX_PRIOR_SHARE, 0)}, and scaled so the pool's calls together keep the bar (the file comment has the whole rule); its effect is the variant "without the pooled prior" in each run above.`,
  ];
}
