/**
 * Checks decided by an LLM judge (never on the hot path).
 *
 * - `judge`: the judge grades the candidate against the contract's rubric;
 *   its first PASS/FAIL decides.
 * - `agreement` with method `judge`: pairwise. The judge compares the
 *   reference and the candidate twice, once in each order, because judges
 *   favour a position. The candidate passes when it is judged at least as good
 *   as the reference in both orders; a flip (each reply wins in one order) is
 *   the position bias showing, and counts as a tie, which passes. Losing in
 *   one order and tying in the other fails.
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

type Preferred = 'reference' | 'candidate' | 'tie';

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
  if (first === null) return notApplicable(`judge ${judge.model} gave no [[A]]/[[B]]/[[TIE]] verdict: ${excerpt(referenceFirst)}`);
  if (second === null) return notApplicable(`judge ${judge.model} gave no [[A]]/[[B]]/[[TIE]] verdict: ${excerpt(candidateFirst)}`);
  const verdicts: [Preferred, Preferred] = [
    first === 'A' ? 'reference' : first === 'B' ? 'candidate' : 'tie',
    second === 'A' ? 'candidate' : second === 'B' ? 'reference' : 'tie',
  ];
  const losses = verdicts.filter((verdict) => verdict === 'reference').length;
  const wins = verdicts.filter((verdict) => verdict === 'candidate').length;
  if (losses === 0 || wins > 0) return pass;
  const how = losses === 2 ? 'in both orders' : 'in one order and equivalent in the other';
  return fail(`judge ${judge.model} prefers the reference ${how}: ${excerpt(losses === 2 || verdicts[0] === 'reference' ? referenceFirst : candidateFirst, 200)}`);
};

/** The judge's answer, or the outcome when it could not answer. Only an abort of the caller's signal rejects. */
async function ask(judge: JudgeContext, messages: ChatMessage[]): Promise<string | EvalOutcome> {
  try {
    return await judge.run(judge.model, messages, judge.signal);
  } catch (error) {
    if (judge.signal.aborted) throw error;
    return notApplicable(`judge ${judge.model} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function sameReply(left: AssistantMessage, right: AssistantMessage): boolean {
  const calls = (message: AssistantMessage): string => toolCallsOf(message).map(toolCallKey).sort().join('\n');
  return normalizeText(left.content ?? '') === normalizeText(right.content ?? '') && calls(left) === calls(right);
}
