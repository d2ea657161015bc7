/**
 * How a sampled reply is scored against the reference (the requested
 * model's reply on the same call), under the contract's semantics:
 *
 * - absolute (`score`): every check of the contract, the agreement check
 *   with its pairwise judge on differing free text included; the reply
 *   passes or fails.
 * - relative (`scorePaired`): the absolute checks on their own, then the
 *   paired outcome against the reference (evals/paired-comparison.ts) and,
 *   now and then, a grade of the reference's reply.
 *
 * `scoreReply` picks the one the contract asks for.
 *
 * Judge calls are replays (replays.ts) and count as eval spend; the judge of
 * a reply is of another family than the model that wrote it when one has an
 * engine. Now and then the judge is checked against itself
 * (`selfCheckJudge`): what its measured error rests on.
 */
import type { AssistantMessage } from '../api/chat-types.js';
import type { CatalogModel } from '../catalog/catalog.js';
import { chooseJudge, evaluateContract, JUDGE_MAX_TOKENS } from '../evals/index.js';
import { isAbsoluteCheck, qualitySemantics, type EvalCheck, type EvalContract } from '../evals/eval-contract.js';
import type { GenerationParameters } from '../api/chat-types.js';
import type { JudgeRunner } from '../evals/evaluator.js';
import { sameReply } from '../evals/judge-check.js';
import { comparePair, gradeReply, repliesAgree, type PairedVerdict } from '../evals/paired-comparison.js';
import type { JudgeOption } from '../evals/pick-judge-model.js';
import type { EvidenceDelta, PairedOutcomeName, RequestedGrade } from '../store/routing-store.js';
import { costPerCall, NO_CALL_SHAPE } from './candidates.js';
import { judgeLadder } from './judge-ladder.js';
import { boundedReplay, replay } from './replays.js';
import type { RouteState, RouterContext } from './router-context.js';
import type { ReplaySample } from './replay-sample.js';

export interface Scoring {
  context: RouterContext;
  state: RouteState;
  contract: EvalContract;
  parameters: GenerationParameters;
  requested: CatalogModel;
  spend: (costUsd: number) => Promise<void>;
}

/**
 * true/false; null when no check of the contract applies; 'judge_down' when a
 * judge was needed and its engine failed (no verdict either way: the sample
 * is not counted, as an engine error of a candidate is not). A judge that
 * answered without a verdict, or no judge at all, fails the reply: counting
 * only the replies that pass by rule would certify anything.
 */
export async function score(
  scoring: Scoring,
  reference: AssistantMessage,
  candidate: AssistantMessage,
  candidateModel: CatalogModel,
): Promise<boolean | null | 'judge_down'> {
  const { context, contract } = scoring;
  const judging = judgeRunner(scoring);
  const result = await evaluateContract(
    contract,
    { request: scoring.parameters, reference, candidate },
    {
      signal: context.signal,
      judgeModel: (checkIndex) => {
        const check = contract.checks[checkIndex];
        return pickJudge(
          scoring,
          candidateModel,
          check?.type === 'judge' ? check.model : check?.type === 'agreement' ? check.judge_model : undefined,
        );
      },
      judge: judging.run,
    },
  );
  judging.settle();
  if (result.passed !== null) return result.passed;
  if (judging.down) return 'judge_down';
  return judging.used ? false : null;
}

/** What one scored reply adds to a candidate's counts, and whether it passed (the rollback detector's input). */
export interface Scored {
  delta: Pick<EvidenceDelta, 'evaluated' | 'passed' | 'paired' | 'constraintsEvaluated' | 'constraintsPassed'>;
  passed: boolean;
}

/** A reply scored under the contract's semantics: paired against the reference when relative (`scorePaired`), else by every check (`score`). */
export async function scoreReply(
  scoring: Scoring,
  reference: AssistantMessage,
  candidate: AssistantMessage,
  candidateModel: CatalogModel,
): Promise<Scored | null | 'judge_down'> {
  if (qualitySemantics(scoring.contract) === 'relative') return scorePaired(scoring, reference, candidate, candidateModel);
  return toScored(await score(scoring, reference, candidate, candidateModel));
}

function toScored(passed: boolean | null | 'judge_down'): Scored | null | 'judge_down' {
  if (passed === null || passed === 'judge_down') return passed;
  return { delta: { evaluated: 1, passed: passed ? 1 : 0 }, passed };
}

/**
 * A relative contract's score of one reply (evals/paired-comparison.ts):
 * the absolute checks, then the paired outcome against the reference (a
 * judge, in one order drawn at random, only when the replies disagree), and
 * a grade of the reference's reply on every tie and on a random share of
 * the agreements (`gradeShare`: the bound on E[r] takes them as a random
 * sample; every agreement is graded until `gradeAllAgreementsUntil` are, so
 * the bound has its first grades early; which agreements get a grade never
 * depends on their content). On a share of the wins and losses
 * (`graderCheckShare`) the grader is measured against the verdict instead
 * (judge-error.ts `gradeErrorOf`). `evaluated`/`passed` count the sample as
 * the agreement check would (passed unless a loss or a failed absolute
 * check), so a contract set back to the absolute semantics never reads
 * these samples as better than they were.
 */
export async function scorePaired(
  scoring: Scoring,
  reference: AssistantMessage,
  candidate: AssistantMessage,
  candidateModel: CatalogModel,
): Promise<Scored | null | 'judge_down'> {
  const { context, contract } = scoring;
  const request = scoring.parameters;
  const absolute: EvalContract = { ...contract, checks: contract.checks.filter(isAbsoluteCheck) };
  const judging = judgeRunner(scoring);
  const constraints =
    absolute.checks.length === 0
      ? null
      : (
          await evaluateContract(
            absolute,
            { request, reference, candidate },
            {
              signal: context.signal,
              judge: judging.run,
              judgeModel: (index) => pickJudge(scoring, candidateModel, judgeCheckModel(absolute.checks[index])),
            },
          )
        ).passed;
  const agreement = contract.checks.find((check) => check.type === 'agreement') ?? { type: 'agreement' as const, method: 'auto' as const };
  let outcome: PairedOutcomeName = 'same';
  if (!repliesAgree(agreement, { request, reference, candidate })) {
    const verdict = await comparePaired(scoring, judging.run, agreement.judge_model, candidateModel, reference, candidate);
    if (verdict === null) {
      judging.settle();
      return judging.down ? 'judge_down' : null;
    }
    outcome = verdict;
  }
  let grade: RequestedGrade = 'ungraded';
  const grader = pickJudge(scoring, scoring.requested, agreement.judge_model, false);
  const gradeReference = async (model: string) => {
    const graded = await gradeReply({ run: judging.run, model, signal: context.signal }, request, reference);
    return graded === 'right' || graded === 'wrong' ? graded : null;
  };
  if (
    grader !== null &&
    (outcome === 'tie' ||
      (outcome === 'same' && ((await gradesAllAgreements(scoring, candidateModel)) || context.random() < context.settings.gradeShare)))
  ) {
    grade = (await gradeReference(grader)) ?? 'ungraded';
  } else if (grader !== null && (outcome === 'win' || outcome === 'loss') && context.random() < context.settings.graderCheckShare) {
    // The verdict says who was right: the grader is measured against it (a grade without a verdict counts as a wrong one).
    const graded = await gradeReference(grader);
    const counts = scoring.state.graderChecks[grader] ?? { compared: 0, differed: 0 };
    scoring.state.graderChecks[grader] = {
      compared: counts.compared + 1,
      differed: counts.differed + Number(graded !== (outcome === 'loss' ? 'right' : 'wrong')),
    };
  }
  judging.settle();
  const passed = outcome !== 'loss' && constraints !== false;
  return {
    delta: {
      evaluated: 1,
      passed: passed ? 1 : 0,
      paired: { outcome, grade },
      constraintsEvaluated: constraints === null ? 0 : 1,
      constraintsPassed: constraints === true ? 1 : 0,
    },
    passed,
  };
}

/**
 * The pairwise verdict on a disagreement, one order drawn at random, by the
 * cheapest judge measured good enough (judge-ladder.ts); a contract that
 * names its judge gets that one. While a cheaper judge is being measured, a
 * share of the reference judge's verdicts (`judgeCalibrationShare`) are
 * asked of it too, and whether the two differ is counted. Null: no verdict.
 */
async function comparePaired(
  scoring: Scoring,
  run: JudgeRunner,
  preferred: string | undefined,
  candidateModel: CatalogModel,
  reference: AssistantMessage,
  candidate: AssistantMessage,
): Promise<PairedVerdict | null> {
  const { context, state } = scoring;
  const judge = pickJudge(scoring, candidateModel, preferred);
  if (judge === null) return null;
  const ladder =
    preferred === undefined
      ? judgeLadder(judge, candidateModel.family, judgeOptions(scoring), state.judgeCalibration)
      : { reference: judge, active: judge, measuring: null };
  if (ladder.active !== judge) {
    state.lastJudge = ladder.active;
    state.judges.set(ladder.active, { sameFamily: false });
  }
  const referenceFirst = context.random() < 0.5;
  const ask = (model: string) =>
    comparePair({ run, model, signal: context.signal }, scoring.parameters, reference, candidate, referenceFirst);
  const verdict = await ask(ladder.active);
  if (typeof verdict !== 'string') return null;
  if (ladder.active === ladder.reference && ladder.measuring !== null && context.random() < context.settings.judgeCalibrationShare) {
    // No verdict (an answer without one, or its engine failing) counts as a different one: such a judge is no use.
    const measured = await ask(ladder.measuring);
    const counts = state.judgeCalibration[ladder.measuring] ?? { compared: 0, differed: 0 };
    state.judgeCalibration[ladder.measuring] = { compared: counts.compared + 1, differed: counts.differed + Number(measured !== verdict) };
  }
  return verdict;
}

/** Whether the candidate's stream has fewer graded agreements than `gradeAllAgreementsUntil`. */
async function gradesAllAgreements(scoring: Scoring, candidateModel: CatalogModel): Promise<boolean> {
  const { context, state, requested } = scoring;
  const { evidenceVersion } = context.routes.contract(state.scope);
  const counts = (await context.routing.listEvidence(state.scope, requested.id, evidenceVersion)).find(
    (row) => row.candidateModel === candidateModel.id,
  );
  return (counts?.paired.same.right ?? 0) + (counts?.paired.same.wrong ?? 0) < context.settings.gradeAllAgreementsUntil;
}

function judgeCheckModel(check: EvalCheck | undefined): string | undefined {
  return check?.type === 'judge' ? check.model : check?.type === 'agreement' ? check.judge_model : undefined;
}

/**
 * The judge for a reply of `judged` (of another family when one has an
 * engine), noted on the route for the routes view; a comparing judge (not a
 * grader: `comparing` false) is the one the self-checks measure.
 */
function pickJudge(scoring: Scoring, judged: CatalogModel, preferred: string | undefined, comparing = true): string | null {
  const { state } = scoring;
  const choice = chooseJudge(judged.family, judgeOptions(scoring), preferred);
  if (choice !== null) {
    state.judges.set(choice.model, { sameFamily: choice.sameFamily || state.judges.get(choice.model)?.sameFamily === true });
    if (comparing) state.lastJudge = choice.model;
  }
  return choice?.model ?? null;
}

/** The models a judge may be picked from: those with an engine, at their cost for a call of the route's shape. */
function judgeOptions({ context, state }: Scoring): JudgeOption[] {
  const shape = state.shape ?? NO_CALL_SHAPE;
  return context.catalog
    .list()
    .filter((model) => context.pools.has(model.id))
    .map((model) => ({ id: model.id, family: model.family, costPerCall: costPerCall(model, shape) }));
}

/**
 * Runs judge prompts as replays and pays for them; `settle` counts the
 * reply's judge spend into the route's running judge cost per scored reply.
 * `down`: a judge's engine failed (no verdict either way).
 */
function judgeRunner(scoring: Scoring): { run: JudgeRunner; settle: () => void; readonly used: boolean; readonly down: boolean } {
  const { context, state } = scoring;
  let spent = 0;
  let used = false;
  let down = false;
  return {
    run: async (modelId, messages) => {
      used = true;
      const judge = context.catalog.resolve(modelId);
      if (judge === undefined) throw new Error(`no judge model '${modelId}'`);
      const replayed = await replay(context, judge, { messages, temperature: 0, max_tokens: JUDGE_MAX_TOKENS }, false, {
        scope: state.scope,
      });
      if (replayed.kind !== 'reply') {
        down = true;
        throw new Error(replayed.reason);
      }
      spent += replayed.costUsd;
      await scoring.spend(replayed.costUsd);
      return typeof replayed.message.content === 'string' ? replayed.message.content : '';
    },
    settle: () => {
      if (!used || down) return;
      state.judgedSamples += 1;
      state.judgeCostPerEval = state.judgeCostPerEval === 0 ? spent : 0.9 * state.judgeCostPerEval + 0.1 * spent;
    },
    get used() {
      return used;
    },
    get down() {
      return down;
    },
  };
}

/**
 * A judge's own error on this workload: now and then, the reference is
 * replayed and judged against its own production reply. Both are the
 * reference, so a judge that fails one of them is wrong; the rate shows in
 * the routes view, next to the pass rates it vouches for.
 */
export async function selfCheckJudge(scoring: Scoring, sample: ReplaySample, reference: AssistantMessage): Promise<void> {
  const { context, state, requested } = scoring;
  const judge = state.lastJudge;
  if (judge === null || state.judgedSamples < state.nextSelfCheckAt) return;
  state.nextSelfCheckAt = state.judgedSamples + context.settings.judgeSelfCheckEvery;
  const second = await replay(context, requested, boundedReplay(sample.parameters, sample.usage.completion_tokens), false, sample);
  if (second.kind !== 'reply') return;
  await scoring.spend(second.costUsd);
  const judged = { ...scoring, state: { ...state, judges: new Map(state.judges) } };
  let wrong: boolean | null;
  if (qualitySemantics(scoring.contract) === 'relative') {
    // As the paired comparison judges: one order, at random; a preference either way between two replies of one model is an error.
    const judging = judgeRunner(judged);
    const verdict = sameReply(reference, second.message)
      ? 'tie'
      : await comparePair(
          { run: judging.run, model: judge, signal: context.signal },
          sample.parameters,
          reference,
          second.message,
          context.random() < 0.5,
        );
    wrong = typeof verdict === 'string' ? verdict !== 'tie' : null;
  } else {
    const selfCheck: EvalContract = { ...scoring.contract, checks: [{ type: 'agreement', method: 'judge', judge_model: judge }] };
    const passed = await score({ ...judged, contract: selfCheck }, reference, second.message, requested);
    wrong = typeof passed === 'boolean' ? !passed : null;
  }
  if (wrong !== null) await context.routing.addJudgeCheck(sample.scope, judge, wrong);
}
