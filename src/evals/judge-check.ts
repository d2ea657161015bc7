/**
 * Checks decided by an LLM judge (never on the hot path).
 *
 * - `judge`: the judge grades the candidate against the contract's rubric;
 *   its first PASS/FAIL decides.
 * - `agreement` with method `judge` (and `auto` on free text that differs):
 *   pairwise. The question is "is the candidate at least as good as the
 *   reference?". The judge compares the two twice, once in each order,
 *   because judges favour a position. Only a loss in both orders fails.
 *   Anything else is a tie or better, and passes: a flip (each reply wins
 *   once) is the position bias showing; a loss in one order and a tie in the
 *   other is one verdict the other order does not confirm. Failing on a single
 *   unconfirmed loss would fail two equally good answers as often as the
 *   judge errs (about 1 in 20 for a judge right 95% of the time), which no
 *   pass rate could tell from a worse model.
 *
 * A judge that errors or answers without a verdict gives `not_applicable`: the
 * candidate is not to blame for it.
 */
import type { AssistantMessage, ChatMessage } from '../api/chat-types.js';
import { normalizeText, toolCallKey } from './agreement-check.js';
import type { EvalCheckOf } from './eval-contract.js';
import { excerpt, fail, notApplicable, pass, type EvalOutcome, type JudgeContext, type JudgeEvaluator } from './evaluator.js';
import { pairwiseJudgeMessages, parsePairwise, parsePassFail, rubricJudgeMessages } from './judge-prompts.js';
import { toolCallsOf } from './reply-shape.js';

export const evaluateJudge: JudgeEvaluator<EvalCheckOf<'judge'>> = async (check, { request, candidate }, judge) => {
  const answer = await ask(judge, rubricJudgeMessages(check.rubric, request, candidate));
  if (typeof answer !== 'string') return answer;
  const verdict = parsePassFail(answer);
  if (verdict === null) return notApplicable(`judge ${judge.model} gave no PASS/FAIL verdict: ${excerpt(answer)}`);
  return verdict === 'pass' ? pass : fail(`judge ${judge.model}: ${excerpt(answer, 200)}`);
};

export const evaluatePairwiseJudge: JudgeEvaluator<EvalCheckOf<'agreement'>> = async (_check, { request, reference, candidate }, judge) => {
  if (reference === null) return notApplicable('no reference reply to compare with');
  // Identical replies tie without paying a judge.
  if (sameReply(reference, candidate)) return pass;
  const [referenceFirst, candidateFirst] = await Promise.all([
    ask(judge, pairwiseJudgeMessages(request, reference, candidate)),
    ask(judge, pairwiseJudgeMessages(request, candidate, reference)),
  ]);
  if (typeof referenceFirst !== 'string') return referenceFirst;
  if (typeof candidateFirst !== 'string') return candidateFirst;
  const first = parsePairwise(referenceFirst);
  const second = parsePairwise(candidateFirst);
  // Half an answer is no answer, even when the half we have could not fail: one order alone is the biased measure.
  if (first === null) return notApplicable(`judge ${judge.model} gave no [[A]]/[[B]]/[[C]] verdict: ${excerpt(referenceFirst)}`);
  if (second === null) return notApplicable(`judge ${judge.model} gave no [[A]]/[[B]]/[[C]] verdict: ${excerpt(candidateFirst)}`);
  // The reference is A in the first order and B in the second.
  const referenceWinsBoth = first === 'A' && second === 'B';
  return referenceWinsBoth ? fail(`judge ${judge.model} prefers the reference in both orders: ${excerpt(referenceFirst, 200)}`) : pass;
};

/** The judge's answer, or the outcome when it could not answer. Only an abort of the caller's signal rejects. */
export async function ask(judge: JudgeContext, messages: ChatMessage[]): Promise<string | EvalOutcome> {
  try {
    return await judge.run(judge.model, messages, judge.signal);
  } catch (error) {
    if (judge.signal.aborted) throw error;
    return notApplicable(`judge ${judge.model} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Equal normalised content and equal tool calls: the same reply, whatever a judge would say. */
export function sameReply(left: AssistantMessage, right: AssistantMessage): boolean {
  const calls = (message: AssistantMessage): string => toolCallsOf(message).map(toolCallKey).sort().join('\n');
  return normalizeText(left.content ?? '') === normalizeText(right.content ?? '') && calls(left) === calls(right);
}
