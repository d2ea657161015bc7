/**
 * Runs an eval contract's checks on one reply. A reply passes when every
 * check that applies passes and at least one applies; when none applies the
 * result is `passed: null` (the sample is evidence of nothing).
 */
import type { EvalCheck, EvalContract } from './eval-contract.js';
import { evaluateAgreement, needsPairwiseJudge } from './agreement-check.js';
import { notApplicable, type EvalInput, type EvalOutcome, type JudgeRunner } from './evaluator.js';
import { evaluateJsonSchema } from './json-schema-check.js';
import { evaluateJudge, evaluatePairwiseJudge } from './judge-check.js';
import { evaluateRegex } from './regex-check.js';
import { evaluateResponseFormat } from './response-format-check.js';
import { evaluateToolCallValid } from './tool-call-valid-check.js';

/** The checks that need no reference: what the inline guard runs. */
const REFERENCE_FREE: ReadonlySet<EvalCheck['type']> = new Set(['json_schema', 'regex', 'tool_call_valid', 'response_format_valid']);

export interface ContractResult {
  /** null: every check was not applicable. */
  passed: boolean | null;
  /** One per contract check, in contract order. */
  checks: Array<{ type: EvalCheck['type']; outcome: EvalOutcome }>;
}

export interface EvaluateOptions {
  /** Runs judge prompts; without it, judge checks are not applicable. */
  judge?: JudgeRunner;
  /**
   * The judge model for the check at `checkIndex` (the router calls
   * `chooseJudge` with the candidate's family and the check's preferred
   * model); null when no judge is available. Without it, the check's own
   * `model` / `judge_model` is used (an `auto` agreement check names none).
   */
  judgeModel?: (checkIndex: number) => string | null;
  signal?: AbortSignal;
}

/**
 * Rule checks run first; when one of them fails, the judge checks are skipped
 * (`not_applicable`): the reply already fails, and a judge costs money. An
 * `auto` agreement check is a judge check for this reply when both replies
 * are free text that differs (see `needsPairwiseJudge`), a rule check else.
 * Judges of one reply run concurrently. Rejects only when `signal` aborts.
 */
export async function evaluateContract(contract: EvalContract, input: EvalInput, options: EvaluateOptions = {}): Promise<ContractResult> {
  const outcomes: Array<EvalOutcome | null> = contract.checks.map((check) =>
    needsJudge(check, input) ? null : evaluateByRule(check, input),
  );
  const failed = outcomes.findIndex((outcome) => outcome?.verdict === 'fail');
  const signal = options.signal ?? new AbortController().signal;
  const judged = await Promise.all(
    contract.checks.map(async (check, index): Promise<EvalOutcome> => {
      const ruled = outcomes[index];
      if (ruled !== undefined && ruled !== null) return ruled;
      if (failed !== -1) return notApplicable(`skipped: check ${failed} (${contract.checks[failed]?.type}) already failed`);
      if (check.type === 'agreement' && input.reference === null) return notApplicable('no reference reply to compare with');
      if (options.judge === undefined) return notApplicable('no judge runner');
      const model = options.judgeModel === undefined ? preferredJudge(check) : options.judgeModel(index);
      if (model === null)
        return notApplicable(options.judgeModel === undefined ? 'the check names no judge model' : 'no judge model available');
      const context = { run: options.judge, model, signal };
      if (check.type === 'judge') return evaluateJudge(check, input, context);
      if (check.type === 'agreement') return evaluatePairwiseJudge(check, input, context);
      return notApplicable(`check type ${check.type} needs no judge`);
    }),
  );
  return resultOf(contract.checks, judged);
}

/**
 * The reference-free checks only (json_schema, regex, tool_call_valid,
 * response_format_valid): what runs inline on the hot path, synchronously.
 * `checks` lists only those checks, in contract order; a contract without
 * any gives `passed: null`.
 */
export function guardChecks(contract: EvalContract, input: Omit<EvalInput, 'reference'>): ContractResult {
  const guarded = contract.checks.filter((check) => REFERENCE_FREE.has(check.type));
  const full: EvalInput = { ...input, reference: null };
  return resultOf(
    guarded,
    guarded.map((check) => evaluateByRule(check, full)),
  );
}

function needsJudge(check: EvalCheck, input: EvalInput): boolean {
  return check.type === 'judge' || (check.type === 'agreement' && needsPairwiseJudge(check, input));
}

function preferredJudge(check: EvalCheck): string | null {
  if (check.type === 'judge') return check.model ?? null;
  if (check.type === 'agreement') return check.judge_model ?? null;
  return null;
}

function evaluateByRule(check: EvalCheck, input: EvalInput): EvalOutcome {
  switch (check.type) {
    case 'json_schema':
      return evaluateJsonSchema(check, input);
    case 'regex':
      return evaluateRegex(check, input);
    case 'tool_call_valid':
      return evaluateToolCallValid(check, input);
    case 'response_format_valid':
      return evaluateResponseFormat(check, input);
    case 'agreement':
      return evaluateAgreement(check, input);
    case 'judge':
      return notApplicable('a judge check needs a judge');
  }
}

function resultOf(checks: readonly EvalCheck[], outcomes: readonly EvalOutcome[]): ContractResult {
  const results = checks.map((check, index) => ({ type: check.type, outcome: outcomes[index] ?? notApplicable('not run') }));
  const applied = results.filter((result) => result.outcome.verdict !== 'not_applicable');
  const passed = applied.length === 0 ? null : applied.every((result) => result.outcome.verdict === 'pass');
  return { passed, checks: results };
}
