/**
 * The eval contract of a workload: which checks a reply must pass, and how
 * sure the router must be before it serves the workload with a cheaper model.
 * Set through the API, the CLI or the config; a workload with none uses
 * `DEFAULT_CONTRACT`. Parsing is strict: unknown keys are errors, and every
 * bad path is named in one error, so a caller fixes a contract in one round.
 */
import { z } from 'zod';
import { InvalidRequestError } from '../api/errors.js';
import { findSemanticIssues, formatPath, sortIssues, zodIssues, type EvalContractIssue } from './eval-contract-issues.js';
import { isJsonObject } from './json-value.js';

export type { EvalContractIssue } from './eval-contract-issues.js';

export type AgreementMethod = 'auto' | 'normalized' | 'json_equal' | 'tool_calls_equal' | 'judge';

export type EvalCheck =
  /** The reply's content parses as JSON and validates against `schema`. Reference-free. */
  | { type: 'json_schema'; schema: Record<string, unknown> }
  /** The reply's trimmed content matches (RegExp `test`: anchor with ^…$ to match all of it). Reference-free. */
  | { type: 'regex'; pattern: string; flags?: string }
  /** Every tool call names an offered tool, with arguments valid against its `parameters`. Reference-free. */
  | { type: 'tool_call_valid' }
  /** The reply agrees with the requested model's own reply (see agreement-check.ts for each method). */
  | { type: 'agreement'; method: AgreementMethod; judge_model?: string }
  /** An LLM judge of another family grades the reply against `rubric` (PASS/FAIL). */
  | { type: 'judge'; model?: string; rubric: string };

export type EvalCheckOf<Type extends EvalCheck['type']> = Extract<EvalCheck, { type: Type }>;

export interface EvalContract {
  /** All must pass (those that apply to the call) for a reply to pass. At least one. */
  checks: EvalCheck[];
  /** The pass rate a candidate must be shown to reach: 0.5 to 0.9999. */
  pass_rate: number;
  /** Confidence of that showing (1 minus the error the router accepts): 0.5 to 0.9999. */
  confidence: number;
  /** Evaluated samples before a candidate may be certified, whatever its bound says. */
  min_samples: number;
  /** Share of production calls replayed on candidates: 0 to 1. */
  sample_rate: number;
  /** Eval spend (replays and judges) per day, USD. */
  daily_budget_usd: number;
  /** When set, only these catalog ids are tried as candidates. */
  candidates?: string[];
  /** May candidates include models pricier than the requested one? By default only cheaper models are tried. */
  allow_upgrade: boolean;
}

/** Agreement with the requested model's own reply, by the shape of that reply: works with no configuration. */
export const DEFAULT_CONTRACT: EvalContract = Object.freeze({
  checks: Object.freeze([Object.freeze({ type: 'agreement', method: 'auto' })]) as EvalCheck[],
  pass_rate: 0.95,
  confidence: 0.95,
  min_samples: 50,
  sample_rate: 0.05,
  daily_budget_usd: 5,
  allow_upgrade: false,
});

const MAX_CHECKS = 32;
const MAX_PATTERN_LENGTH = 10_000;
const MAX_RUBRIC_LENGTH = 20_000;
const REGEX_FLAGS = /^(?!.*(.).*\1)(?!.*u.*v|.*v.*u)[imsuv]*$/;

const modelId = z.string().trim().min(1).max(256);
const share = z.number().min(0.5).max(0.9999);

const checkSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('json_schema'), schema: z.custom<Record<string, unknown>>(isJsonObject, 'must be a JSON Schema object') }).strict(),
  z
    .object({
      type: z.literal('regex'),
      pattern: z.string().min(1).max(MAX_PATTERN_LENGTH),
      // g and y make RegExp#test stateful; d changes nothing for a yes/no match.
      flags: z.string().regex(REGEX_FLAGS, 'must be distinct letters of "imsuv", without both u and v').optional(),
    })
    .strict(),
  z.object({ type: z.literal('tool_call_valid') }).strict(),
  z
    .object({
      type: z.literal('agreement'),
      method: z.enum(['auto', 'normalized', 'json_equal', 'tool_calls_equal', 'judge']).default('auto'),
      judge_model: modelId.optional(),
    })
    .strict(),
  z.object({ type: z.literal('judge'), model: modelId.optional(), rubric: z.string().trim().min(1).max(MAX_RUBRIC_LENGTH) }).strict(),
]);

const contractSchema = z
  .object({
    checks: z
      .array(checkSchema)
      .min(1)
      .max(MAX_CHECKS)
      .default(() => [{ type: 'agreement', method: 'auto' } as const]),
    pass_rate: share.default(0.95),
    confidence: share.default(0.95),
    min_samples: z.number().int().min(1).max(1_000_000).default(50),
    sample_rate: z.number().min(0).max(1).default(0.05),
    daily_budget_usd: z.number().min(0).max(1_000_000).default(5),
    candidates: z.array(modelId).max(1_000).optional(),
    allow_upgrade: z.boolean().default(false),
  })
  .strict();

export type EvalContractValidation = { ok: true; contract: EvalContract } | { ok: false; issues: EvalContractIssue[] };

/**
 * Every problem of a contract, in document order. For callers that report
 * issues their own way (the config loader prefixes its own path).
 */
export function validateEvalContract(input: unknown): EvalContractValidation {
  const result = contractSchema.safeParse(input);
  const issues = [...(result.success ? [] : zodIssues(result.error.issues, input)), ...findSemanticIssues(input)];
  if (issues.length > 0 || !result.success) return { ok: false, issues: sortIssues(dedupe(issues), input) };
  const contract: EvalContract = result.data;
  return { ok: true, contract };
}

/** The contract, or an InvalidRequestError naming every bad path (`param`: the first). */
export function parseEvalContract(input: unknown): EvalContract {
  const validation = validateEvalContract(input);
  if (validation.ok) return validation.contract;
  const message = validation.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`).join('; ');
  const first = validation.issues[0];
  const param = first === undefined || first.path.length === 0 ? null : formatPath(first.path);
  throw new InvalidRequestError(`Invalid eval contract: ${message}`, param, 'invalid_eval_contract');
}

function dedupe(issues: EvalContractIssue[]): EvalContractIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${formatPath(issue.path)}\n${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
