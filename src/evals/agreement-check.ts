/**
 * `agreement` by rule: the candidate's reply says what the requested model's
 * own reply (the reference) says. No reference, no agreement check:
 * `not_applicable`. The `judge` method is in judge-check.ts.
 *
 * - `normalized`: contents equal after `normalizeText`.
 * - `json_equal`: both contents parse as JSON and are deep-equal, ignoring key order.
 * - `tool_calls_equal`: the same multiset of (name, parsed arguments); order
 *   and ids of the calls do not count, the content beside them does not either.
 * - `auto` (the default contract): picked from the reference's shape, because
 *   that is what the caller's code consumes: tool calls → tool_calls_equal;
 *   content that is a JSON object or array → json_equal; else free text,
 *   which passes by rule when the normalized texts are equal and is otherwise
 *   left to the pairwise judge (`needsPairwiseJudge`): two good answers in
 *   prose rarely match word for word, so a rule could only fail them. Without
 *   a judge, such a pair is `not_applicable`, evidence of nothing.
 *
 * For the content methods, a candidate that calls tools where the reference
 * answered in content fails: the caller's code would take another branch.
 */
import type { AssistantMessage, ToolCall } from '../api/chat-types.js';
import type { AgreementMethod, EvalCheckOf } from './eval-contract.js';
import { excerpt, fail, notApplicable, pass, type EvalInput, type EvalOutcome, type SyncEvaluator } from './evaluator.js';
import { canonicalJson, isJsonObject, parseJson } from './json-value.js';
import { toolCallsOf } from './reply-shape.js';

export type RuleMethod = Exclude<AgreementMethod, 'auto' | 'judge'>;

/**
 * Text as compared by `normalized`: NFKC (full-width letters, ligatures and
 * non-breaking spaces become their plain forms), lower case, whitespace runs
 * collapsed to one space, trimmed, then sentence-ending punctuation stripped
 * from the end (`.,;:!?…` and CJK `。、`), so "Yes." agrees with "yes".
 * Closing brackets and quotes are kept: they carry meaning ("f(x)" is not "f(x").
 */
export function normalizeText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .trim()
    .replace(/[\s.,;:!?…。、]+$/u, '');
}

/**
 * The rule `auto` applies, from the reference reply's shape. For free text
 * (`normalized`) the rule only decides equal texts; see `needsPairwiseJudge`.
 */
export function agreementMethodFor(reference: AssistantMessage): RuleMethod {
  if (toolCallsOf(reference).length > 0) return 'tool_calls_equal';
  const parsed = reference.content === null ? null : parseJson(reference.content);
  if (parsed?.ok === true && (isJsonObject(parsed.value) || Array.isArray(parsed.value))) return 'json_equal';
  return 'normalized';
}

/**
 * Whether the check is decided by the pairwise judge rather than by rule:
 * always for method `judge`; for `auto`, when both replies are free text
 * whose normalized forms differ. A candidate that calls tools where the
 * reference answered in text, or answers with no content, still fails by rule.
 */
export function needsPairwiseJudge(check: EvalCheckOf<'agreement'>, { reference, candidate }: EvalInput): boolean {
  if (check.method === 'judge') return true;
  if (check.method !== 'auto' || reference === null || reference.content === null) return false;
  if (agreementMethodFor(reference) !== 'normalized' || toolCallsOf(candidate).length > 0) return false;
  const content = candidate.content;
  return content !== null && content.trim() !== '' && normalizeText(content) !== normalizeText(reference.content);
}

export const evaluateAgreement: SyncEvaluator<EvalCheckOf<'agreement'>> = (check, input) => {
  const { reference, candidate } = input;
  if (reference === null) return notApplicable('no reference reply to agree with');
  if (check.method === 'judge') return notApplicable('agreement by judge needs a judge model');
  if (needsPairwiseJudge(check, input))
    return notApplicable('the free text differs from the reference: only the pairwise judge can tell whether it is as good');
  const method = check.method === 'auto' ? agreementMethodFor(reference) : check.method;
  if (method === 'tool_calls_equal') return compareToolCalls(reference, candidate);
  if (reference.content === null) return notApplicable('the reference reply has no content to compare');
  if (toolCallsOf(candidate).length > 0 && toolCallsOf(reference).length === 0) {
    return fail('the reply calls tools where the reference answered in content');
  }
  if (candidate.content === null) return fail(`the reply has no content; the reference says ${excerpt(reference.content)}`);
  return method === 'json_equal' ? compareJson(reference.content, candidate.content) : compareText(reference.content, candidate.content);
};

function compareText(reference: string, candidate: string): EvalOutcome {
  if (normalizeText(reference) === normalizeText(candidate)) return pass;
  return fail(`normalized text differs: ${excerpt(candidate)} vs the reference's ${excerpt(reference)}`);
}

function compareJson(reference: string, candidate: string): EvalOutcome {
  const expected = parseJson(reference);
  if (!expected.ok) return notApplicable('the reference content is not JSON');
  const actual = parseJson(candidate);
  if (!actual.ok) return fail(`content is not valid JSON (${actual.error}): ${excerpt(candidate)}`);
  if (canonicalJson(expected.value) === canonicalJson(actual.value)) return pass;
  return fail(`JSON differs: ${excerpt(canonicalJson(actual.value))} vs the reference's ${excerpt(canonicalJson(expected.value))}`);
}

function compareToolCalls(reference: AssistantMessage, candidate: AssistantMessage): EvalOutcome {
  const expected = toolCallsOf(reference).map(toolCallKey);
  const actual = toolCallsOf(candidate).map(toolCallKey);
  if (expected.length === 0 && actual.length === 0) return notApplicable('neither the reply nor the reference calls a tool');
  const unmatched = [...expected];
  const extra: string[] = [];
  for (const key of actual) {
    const at = unmatched.indexOf(key);
    if (at === -1) extra.push(key);
    else unmatched.splice(at, 1);
  }
  if (unmatched.length === 0 && extra.length === 0) return pass;
  const list = (keys: string[]): string =>
    keys
      .slice(0, 3)
      .map((key) => excerpt(key))
      .join(', ') + (keys.length > 3 ? ', …' : '');
  const parts: string[] = [];
  if (extra.length > 0) parts.push(`calls ${list(extra)} that the reference does not`);
  if (unmatched.length > 0) parts.push(`misses the reference's ${list(unmatched)}`);
  return fail(`tool calls differ: ${parts.join('; ')}`);
}

/** `name(canonical arguments)`; arguments that do not parse compare as their raw text. */
export function toolCallKey(call: ToolCall): string {
  const parsed = parseJson(call.function.arguments);
  return `${call.function.name}(${parsed.ok ? canonicalJson(parsed.value) : `unparsed ${JSON.stringify(call.function.arguments)}`})`;
}
