/**
 * One paired sample on recorded data, scored as the router scores it
 * (sample-processor.ts `scorePaired`): the requested model's reply (R) and
 * a candidate's (C) agree, or ONE pairwise judge verdict says which is right
 * (a tie when both are wrong); R's reply is graded by a judge on every tie
 * and on every agreement while the candidate's evidence holds fewer than
 * `gradeAllAgreementsUntil` graded agreements (sample-scoring.ts
 * `gradesAllAgreements`: `same.right + same.wrong`), then on a random
 * `gradeShare` of them (no draw while every one is graded, as the worker).
 *
 * - On a random `graderCheckShare` of the wins and losses (not graded),
 *   the grader is measured instead (sample-scoring.ts `scorePaired`): it
 *   grades R's reply, paid as a grade but not recorded into the evidence,
 *   and the grade differs when it contradicts the (simulated, possibly
 *   wrong) verdict: a loss says R was right, a win that it was wrong.
 * - Verdicts and grades are the data's truth, wrong with probability ε (a
 *   win read as a loss and back, a tie as a win or a loss at random, a grade
 *   reversed). `gold` grading reads R's correctness on every sample for
 *   free: what no gateway has, the ceiling of better grades. `own answer`
 *   grading is a grader no better than its own answer: it calls R right
 *   exactly when it agrees with it (Mixtral grades GPT-4 here).
 * - Judges are the ones the router picks (`chooseJudge`): of another family
 *   than the reply judged, the most expensive. The pairwise verdict judges
 *   C's reply, so GPT-4 judges it; a grade judges R's, so Mixtral grades
 *   GPT-4. A variant prices every judge call as Mixtral.
 * - A judge call costs its tokens at the judge's price: the prompt and the
 *   reply or replies it reads, the instructions of the router's own judge
 *   prompts (measured from judge-prompts.ts), and its answer (an assumed
 *   `JUDGE_ANSWER_TOKENS`: the pairwise prompt asks for a short explanation
 *   before the verdict, the grade for one sentence after PASS/FAIL).
 */
import type { AssistantMessage, GenerationParameters } from '../../../src/api/chat-types.js';
import { chooseJudge } from '../../../src/evals/pick-judge-model.js';
import { pairwiseJudgeMessages, rubricJudgeMessages } from '../../../src/evals/judge-prompts.js';
import { GRADE_RUBRIC } from '../../../src/evals/paired-comparison.js';
import type { PairedOutcome, PairedSample } from '../../../src/routing/paired-quality.js';
import type { Random } from '../random.js';
import { estimateTokens, type RealPrompt } from './real-workloads.js';
import type { RecordedModel } from './routellm-data.js';

/** What a judge writes back, assumed: a brief comparison then [[A]]/[[B]]/[[C]]; PASS/FAIL and one sentence. */
export const JUDGE_ANSWER_TOKENS = { pairwise: 100, grade: 25 };

/** The judge prompts' own tokens (system prompt, markers, tags), measured on empty material. */
export const JUDGE_INSTRUCTION_TOKENS = (() => {
  const request: GenerationParameters = { messages: [{ role: 'user', content: '' }] };
  const empty: AssistantMessage = { role: 'assistant', content: '' };
  const tokens = (messages: Array<{ content: unknown }>): number =>
    estimateTokens(messages.map((message) => (typeof message.content === 'string' ? message.content : '')).join(''));
  return {
    pairwise: tokens(pairwiseJudgeMessages(request, empty, empty)),
    grade: tokens(rubricJudgeMessages(GRADE_RUBRIC, request, empty)),
  };
})();

export interface Judging {
  /** ε: how often a verdict or a grade is wrong. */
  error: number;
  /** `judge`: right or wrong from the data, wrong with probability ε; `own answer`: the grader (Mixtral) calls GPT-4's reply right when it gave the same answer; `gold`: the data, free, on every sample. */
  grading: 'judge' | 'own answer' | 'gold';
  /** The models judging C's replies (pairwise) and grading R's. */
  pairwiseJudge: RecordedModel;
  gradeJudge: RecordedModel;
  /** Share of agreements whose R reply is graded (ties always are). */
  gradeShare: number;
  /** Share of wins and losses on which the grader is measured against the verdict (`graderCheckShare`). */
  graderCheckShare: number;
}

export interface ScoredSample {
  sample: PairedSample;
  /** USD of the pairwise verdict and of the grade (0 when none was asked). */
  verdictUsd: number;
  gradeUsd: number;
  /** The judge models called, last one last (the router self-checks its last judge). */
  judges: string[];
  /** When the grader was measured on this sample (a win or a loss): whether its grade contradicted the verdict. */
  graderCheck?: { grader: string; differed: boolean };
}

/** The judge the router picks for a reply of `judged`: another family, the most expensive (`chooseJudge`). */
export function judgeFor(judged: RecordedModel, models: readonly RecordedModel[]): RecordedModel {
  const choice = chooseJudge(
    judged.family,
    models.map((model) => ({ id: model.name, family: model.family, costPerCall: model.pricePerMillionTokens })),
  );
  const model = models.find((option) => option.name === choice?.model);
  if (model === undefined) throw new Error(`no judge for ${judged.name}`);
  return model;
}

/** `gradeAllAgreements`: the candidate's evidence holds fewer graded agreements than `gradeAllAgreementsUntil`, so this agreement is graded without a draw. */
export function scoreSample(prompt: RealPrompt, judging: Judging, random: Random, gradeAllAgreements = false): ScoredSample {
  const judges: string[] = [];
  let outcome: PairedOutcome = 'same';
  let verdictUsd = 0;
  if (!prompt.agrees) {
    outcome = judgeVerdict(prompt, judging.error, random);
    verdictUsd = judgeUsd(
      prompt.tokens.prompt + prompt.tokens.requestedCompletion + prompt.tokens.cheapCompletion,
      'pairwise',
      judging.pairwiseJudge,
    );
    judges.push(judging.pairwiseJudge.name);
  }
  if (judging.grading === 'gold') return { sample: { outcome, requestedRight: prompt.requestedCorrect }, verdictUsd, gradeUsd: 0, judges };
  const grade = (): boolean =>
    judging.grading === 'own answer' ? prompt.agrees : random() < judging.error ? !prompt.requestedCorrect : prompt.requestedCorrect;
  const gradeUsd = (): number => judgeUsd(prompt.tokens.prompt + prompt.tokens.requestedCompletion, 'grade', judging.gradeJudge);
  if (outcome === 'tie' || (outcome === 'same' && (gradeAllAgreements || random() < judging.gradeShare))) {
    const requestedRight = grade();
    judges.push(judging.gradeJudge.name);
    return { sample: { outcome, requestedRight }, verdictUsd, gradeUsd: gradeUsd(), judges };
  }
  if ((outcome === 'win' || outcome === 'loss') && random() < judging.graderCheckShare) {
    // The verdict says who was right (a loss: R; a win: not R); the grade is paid, not recorded.
    const requestedRight = grade();
    judges.push(judging.gradeJudge.name);
    return {
      sample: { outcome },
      verdictUsd,
      gradeUsd: gradeUsd(),
      judges,
      graderCheck: { grader: judging.gradeJudge.name, differed: requestedRight !== (outcome === 'loss') },
    };
  }
  return { sample: { outcome }, verdictUsd, gradeUsd: 0, judges };
}

function judgeUsd(materialTokens: number, kind: 'pairwise' | 'grade', judge: RecordedModel): number {
  return ((materialTokens + JUDGE_INSTRUCTION_TOKENS[kind] + JUDGE_ANSWER_TOKENS[kind]) * judge.pricePerMillionTokens) / 1e6;
}

/** The verdict on a disagreement: the data's truth (a tie when both are wrong), wrong with probability ε. */
function judgeVerdict(prompt: RealPrompt, error: number, random: Random): PairedOutcome {
  const truth: PairedOutcome = prompt.cheapCorrect === prompt.requestedCorrect ? 'tie' : prompt.cheapCorrect ? 'win' : 'loss';
  if (!(random() < error)) return truth;
  if (truth === 'tie') return random() < 0.5 ? 'win' : 'loss';
  return truth === 'win' ? 'loss' : 'win';
}
