/**
 * The paired comparison of a relative contract (`quality_bar`): on one
 * sampled call, the requested model's reply (the reference) and a
 * candidate's are compared, and the outcome is one of
 *   same  the replies agree by the contract's agreement rule (normalised
 *         text, equal JSON, equal tool calls): equal quality, no judge;
 *   win / loss / tie  a pairwise judge read both and preferred the
 *         candidate, the reference, or neither.
 * Unlike the agreement check, a disagreement is not the candidate's fault
 * until a judge says so: the reference's own mistakes count for the
 * candidate that got the call right.
 *
 * The judge reads the two replies once, in an order drawn at random by the
 * caller: a judge's preference for a position then falls as often on either
 * side, and shows as error in the verdicts, which the bound charges
 * (routing/paired-quality.ts). Judging both orders would double the spend.
 *
 * A grade is the judge's verdict on one reply alone (PASS/FAIL on a fixed
 * rubric): what tells the router how good the requested model is, which
 * sets how much worse a cheaper model may be on a share of the calls.
 */
import type { AssistantMessage, GenerationParameters } from '../api/chat-types.js';
import { evaluateAgreement } from './agreement-check.js';
import type { EvalCheckOf } from './eval-contract.js';
import type { EvalInput, EvalOutcome, JudgeContext } from './evaluator.js';
import { ask, sameReply } from './judge-check.js';
import { pairwiseJudgeMessages, parsePairwise, parsePassFail, rubricJudgeMessages } from './judge-prompts.js';
import { excerpt, notApplicable } from './evaluator.js';

export type PairedVerdict = 'win' | 'loss' | 'tie';

/** The rubric a grade applies to the requested model's reply. */
export const GRADE_RUBRIC =
  'The reply answers the last user message correctly: what it states is true, what it computes is right, and it does what was asked (tool calls with the right arguments, the requested format). Judge correctness only, not style or length.';

/** Whether the two replies agree by the check's rule; `judge` agreement agrees only on the same reply. */
export function repliesAgree(check: EvalCheckOf<'agreement'>, input: EvalInput & { reference: AssistantMessage }): boolean {
  if (check.method === 'judge') return sameReply(input.reference, input.candidate);
  return evaluateAgreement(check, input).verdict === 'pass';
}

/**
 * One pairwise verdict, the reference shown first when `referenceFirst`:
 * `win` when the judge prefers the candidate, `loss` the reference, `tie`
 * neither; `not_applicable` when the judge failed or gave no verdict.
 */
export async function comparePair(
  judge: JudgeContext,
  request: GenerationParameters,
  reference: AssistantMessage,
  candidate: AssistantMessage,
  referenceFirst: boolean,
): Promise<PairedVerdict | EvalOutcome> {
  const answer = await ask(
    judge,
    referenceFirst ? pairwiseJudgeMessages(request, reference, candidate) : pairwiseJudgeMessages(request, candidate, reference),
  );
  if (typeof answer !== 'string') return answer;
  const verdict = parsePairwise(answer);
  if (verdict === null) return notApplicable(`judge ${judge.model} gave no [[A]]/[[B]]/[[C]] verdict: ${excerpt(answer)}`);
  if (verdict === 'TIE') return 'tie';
  const referenceWins = (verdict === 'A') === referenceFirst;
  return referenceWins ? 'loss' : 'win';
}

/** The judge's grade of one reply on `GRADE_RUBRIC`: `right` (PASS), `wrong` (FAIL), or `not_applicable`. */
export async function gradeReply(
  judge: JudgeContext,
  request: GenerationParameters,
  reply: AssistantMessage,
): Promise<'right' | 'wrong' | EvalOutcome> {
  const answer = await ask(judge, rubricJudgeMessages(GRADE_RUBRIC, request, reply));
  if (typeof answer !== 'string') return answer;
  const verdict = parsePassFail(answer);
  if (verdict === null) return notApplicable(`judge ${judge.model} gave no PASS/FAIL verdict: ${excerpt(answer)}`);
  return verdict === 'pass' ? 'right' : 'wrong';
}
