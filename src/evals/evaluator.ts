/**
 * The evaluator contract: what every check of an eval contract receives and
 * what it answers. The router worker runs evaluators on shadow replays (with
 * the requested model's reply as the reference), and the per-call guard runs
 * the reference-free ones inline (without it).
 *
 * Two kinds of evaluator exist:
 * - `SyncEvaluator`: a pure, synchronous function of the check and the input
 *   (json_schema, regex, tool_call_valid, response_format_valid, agreement
 *   by rule). No I/O, no clock, no randomness, so the same input always gives
 *   the same outcome and it is cheap enough for the hot path.
 * - `JudgeEvaluator`: asks an LLM judge through an injected `JudgeRunner`
 *   (judge, agreement by judge, `auto` agreement on free text that differs).
 *   Async, costs money, never on the hot path.
 *
 * An evaluator never throws for a bad reply: a reply that breaks the check is
 * a `fail` with a reason a person can read. It answers `not_applicable` when
 * the check has nothing to say about this call (no reference to agree with,
 * a tool-call reply to a content check, a judge that gave no verdict), so
 * such calls count neither for nor against the candidate.
 */
import type { AssistantMessage, ChatMessage, GenerationParameters } from '../api/chat-types.js';

export interface EvalInput {
  /** What was asked: messages, tools, tool_choice, response_format, sampling. */
  request: GenerationParameters;
  /**
   * The requested model's own reply to the same request, or `null` when there
   * is none (the inline guard runs before any reference exists). Checks that
   * need it answer `not_applicable` without it.
   */
  reference: AssistantMessage | null;
  /** The reply being judged. */
  candidate: AssistantMessage;
}

/**
 * `reason` is shown to people (route evidence, the dashboard, the CLI), so it
 * says what was wrong in one sentence and quotes at most a short excerpt of
 * the reply.
 */
export type EvalOutcome = { verdict: 'pass' } | { verdict: 'fail'; reason: string } | { verdict: 'not_applicable'; reason: string };

/**
 * Runs a judge prompt on a model and returns its text reply. Injected: the
 * router gives it an engine call (which also meters the judge's spend as eval
 * spend). The runner picks the sampling: temperature 0 and `JUDGE_MAX_TOKENS`
 * (judge-prompts.ts), room for the pairwise judge's explanation before its
 * verdict. It rejects when the engine fails or `signal` aborts.
 */
export type JudgeRunner = (model: string, messages: ChatMessage[], signal: AbortSignal) => Promise<string>;

/** A check decided by rule: pure and synchronous. */
export type SyncEvaluator<Check> = (check: Check, input: EvalInput) => EvalOutcome;

/** What a judge-based check needs besides the input: who judges, and how to stop. */
export interface JudgeContext {
  run: JudgeRunner;
  /** The judge model: of another family than the candidate when one is available (see `chooseJudge`). */
  model: string;
  signal: AbortSignal;
}

/**
 * A check decided by an LLM judge. A judge that fails or answers something
 * unparseable gives `not_applicable` (the candidate is not to blame); only an
 * abort of `signal` rejects.
 */
export type JudgeEvaluator<Check> = (check: Check, input: EvalInput, judge: JudgeContext) => Promise<EvalOutcome>;

export const pass: EvalOutcome = Object.freeze({ verdict: 'pass' });

export function fail(reason: string): EvalOutcome {
  return { verdict: 'fail', reason };
}

export function notApplicable(reason: string): EvalOutcome {
  return { verdict: 'not_applicable', reason };
}

/** A short, single-line quote of reply text for a reason. */
export function excerpt(text: string, maxLength = 80): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(line.length > maxLength ? `${line.slice(0, maxLength - 1)}…` : line);
}
