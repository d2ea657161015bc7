/**
 * The eval contract of a workload: which checks a reply must pass, what
 * quality it must keep against the requested model, and how sure the router
 * must be before it serves the workload (or a share of it) with a cheaper model.
 * Set through the API, the CLI or the config; a workload with none uses
 * `DEFAULT_CONTRACT`. Parsing is strict: unknown keys are errors, and every
 * bad path is named in one error, so a caller fixes a contract in one round.
 */
import { z } from 'zod';
import { InvalidRequestError } from '../api/errors.js';
import { findSemanticIssues, formatPath, sortIssues, zodIssues, type EvalContractIssue } from './eval-contract-issues.js';
import { canonicalJson, isJsonObject } from './json-value.js';

export type { EvalContractIssue } from './eval-contract-issues.js';

export type AgreementMethod = 'auto' | 'normalized' | 'json_equal' | 'tool_calls_equal' | 'judge';

export type EvalCheck =
  /** The reply's content parses as JSON and validates against `schema`. Reference-free. */
  | { type: 'json_schema'; schema: Record<string, unknown> }
  /** The reply's trimmed content matches (RegExp `test`: anchor with ^…$ to match all of it). Reference-free. */
  | { type: 'regex'; pattern: string; flags?: string }
  /** Every tool call names an offered tool, with arguments valid against its `parameters`. Reference-free. */
  | { type: 'tool_call_valid' }
  /** The content is what the request's `response_format` asked for (a JSON object, or JSON valid against its schema). Reference-free. */
  | { type: 'response_format_valid' }
  /** The reply agrees with the requested model's own reply (see agreement-check.ts for each method; `auto` leaves differing free text to the pairwise judge). */
  | { type: 'agreement'; method: AgreementMethod; judge_model?: string }
  /** An LLM judge (of another family than the candidate when one is available) grades the reply against `rubric` (PASS/FAIL). */
  | { type: 'judge'; model?: string; rubric: string };

export type EvalCheckOf<Type extends EvalCheck['type']> = Extract<EvalCheck, { type: Type }>;

/**
 * What the contract's bar means (see `qualitySemantics`).
 * - `relative`: the agreement check is a paired comparison with the requested
 *   model on the same sampled calls (agreeing replies are equal quality; only
 *   disagreements are judged: which reply is right, or a tie). A candidate, or
 *   a share of calls, passes when its quality is certified at least
 *   `quality_bar` times the requested model's; `pass_rate` applies only to the
 *   absolute checks (`isAbsoluteCheck`), which every serving model must pass.
 * - `absolute`: every model that serves must itself pass every check,
 *   agreement included, at `pass_rate` (the meaning before `quality_bar`).
 */
export type QualitySemantics = 'relative' | 'absolute';

export interface EvalContract {
  /** All must pass (those that apply to the call) for a reply to pass. At least one. */
  checks: EvalCheck[];
  /**
   * The share of the requested model's quality a cheaper model (or a share of
   * calls) must be certified to keep, by paired comparison on the same calls:
   * 0.5 to 1. Needs an agreement check. Null: `absolute` semantics. When the
   * input leaves it out it is null if the input sets `pass_rate` (so contracts
   * written before it keep their meaning) or has no agreement check, else 0.95.
   */
  quality_bar: number | null;
  /** The pass rate a candidate must be shown to reach (under `relative` semantics, on the absolute checks only): 0.5 to 0.9999. */
  pass_rate: number;
  /** Confidence of that showing (1 minus the error the router accepts): 0.5 to 0.9999. */
  confidence: number;
  /** Evaluated samples before a candidate may be certified, whatever its bound says. */
  min_samples: number;
  /**
   * Share of production calls replayed on candidates: 0 to 1, or `"auto"`:
   * the router adapts the rate to the workload's traffic and to the saving
   * still possible (a workload already served by its cheapest model needs few).
   */
  sample_rate: number | 'auto';
  /** Eval spend (replays and judges) per day, USD. */
  daily_budget_usd: number;
  /** When set, only these catalog ids are tried as candidates. */
  candidates?: string[];
  /** May candidates include models pricier than the requested one? By default only cheaper models are tried. */
  allow_upgrade: boolean;
  /** When set, a candidate's latency (ms) at `latency_percentile` must be at most this; null: no absolute limit. */
  max_latency_ms: number | null;
  /** The same limit for the time to first token (ms), measured on streamed calls; null: no limit. */
  max_ttft_ms: number | null;
  /** The percentile (50 to 99.9) at which the latency limits apply: 95 means 19 calls in 20 are that fast. */
  latency_percentile: number;
  /**
   * A candidate's latency at `latency_percentile` must be at most this many
   * times the requested model's own on the workload (at least 1; null: no
   * relative limit). A cheaper model that makes the workload much slower is
   * a saving the caller did not ask for.
   */
  max_latency_factor: number | null;
  /**
   * Learn which calls a cheaper model may take (a per-call policy on the
   * request's features), certify it on evidence it was not trained on, and
   * serve it where it saves more than a random share. Only under `relative`
   * semantics (a contract with it and no quality bar is refused). Off by
   * default: a policy wins only on large workloads whose calls differ, and it
   * spends a fifth of the contract's error (α), which costs a little saving
   * everywhere else (docs/routing.md, "Calls picked one by one").
   */
  per_call: boolean;
}

/**
 * Works with no configuration: the structural checks (JSON when the request
 * asks for it, tool calls against their schemas), then agreement with the
 * requested model's own reply, by the shape of that reply.
 */
export const DEFAULT_CONTRACT: EvalContract = Object.freeze({
  checks: Object.freeze(defaultChecks().map((check) => Object.freeze(check))) as EvalCheck[],
  quality_bar: 0.95,
  pass_rate: 0.95,
  confidence: 0.95,
  min_samples: 50,
  sample_rate: 'auto',
  daily_budget_usd: 5,
  allow_upgrade: false,
  max_latency_ms: null,
  max_ttft_ms: null,
  latency_percentile: 95,
  max_latency_factor: 2,
  per_call: false,
});

/** A new array each call, so a parsed contract never shares (frozen) objects with DEFAULT_CONTRACT. */
function defaultChecks(): EvalCheck[] {
  return [{ type: 'response_format_valid' }, { type: 'tool_call_valid' }, { type: 'agreement', method: 'auto' }];
}

const MAX_CHECKS = 32;
const MAX_PATTERN_LENGTH = 10_000;
const MAX_RUBRIC_LENGTH = 20_000;
const REGEX_FLAGS = /^(?!.*(.).*\1)(?!.*u.*v|.*v.*u)[imsuv]*$/;

const modelId = z.string().trim().min(1).max(256);
const share = z.number().min(0.5).max(0.9999);
const milliseconds = z.number().positive();

const checkSchema = z.discriminatedUnion('type', [
  z
    .object({ type: z.literal('json_schema'), schema: z.custom<Record<string, unknown>>(isJsonObject, 'must be a JSON Schema object') })
    .strict(),
  z
    .object({
      type: z.literal('regex'),
      pattern: z.string().min(1).max(MAX_PATTERN_LENGTH),
      // g and y make RegExp#test stateful; d changes nothing for a yes/no match.
      flags: z.string().regex(REGEX_FLAGS, 'must be distinct letters of "imsuv", without both u and v').optional(),
    })
    .strict(),
  z.object({ type: z.literal('tool_call_valid') }).strict(),
  z.object({ type: z.literal('response_format_valid') }).strict(),
  z
    .object({
      type: z.literal('agreement'),
      method: z.enum(['auto', 'normalized', 'json_equal', 'tool_calls_equal', 'judge']).default('auto'),
      judge_model: modelId.optional(),
    })
    .strict(),
  z.object({ type: z.literal('judge'), model: modelId.optional(), rubric: z.string().trim().min(1).max(MAX_RUBRIC_LENGTH) }).strict(),
]);

const DEFAULT_QUALITY_BAR = 0.95;

const contractSchema = z
  .object({
    checks: z.array(checkSchema).min(1).max(MAX_CHECKS).default(defaultChecks),
    // Its default depends on the rest of the input: see qualityBarOf.
    quality_bar: z.number().min(0.5).max(1).nullable().optional(),
    pass_rate: share.default(0.95),
    confidence: share.default(0.95),
    min_samples: z.number().int().min(1).max(1_000_000).default(50),
    sample_rate: z.union([z.number().min(0).max(1), z.literal('auto')]).default('auto'),
    daily_budget_usd: z.number().min(0).max(1_000_000).default(5),
    candidates: z.array(modelId).max(1_000).optional(),
    allow_upgrade: z.boolean().default(false),
    max_latency_ms: milliseconds.nullable().default(null),
    max_ttft_ms: milliseconds.nullable().default(null),
    latency_percentile: z.number().min(50).max(99.9).default(95),
    max_latency_factor: z.number().min(1).nullable().default(2),
    // Needs the relative semantics: see findSemanticIssues.
    per_call: z.boolean().default(false),
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
  const { checks, quality_bar: qualityBar, ...rest } = result.data;
  const contract: EvalContract = { checks, quality_bar: qualityBarOf(input, qualityBar, checks), ...rest };
  return { ok: true, contract };
}

/**
 * The bar given, or its default. A contract that sets `pass_rate` with the
 * agreement check (its own or the default one) was written for the absolute
 * meaning, as every contract stored before `quality_bar` was: it stays null.
 * Without an agreement check a bar means nothing (and given, is an error), so
 * the default is null there too, which keeps parse(parse(x)) = parse(x).
 */
function qualityBarOf(input: unknown, given: number | null | undefined, checks: EvalCheck[]): number | null {
  if (given !== undefined) return given;
  const setsPassRate = isJsonObject(input) && Object.hasOwn(input, 'pass_rate');
  return !setsPassRate && checks.some((check) => !isAbsoluteCheck(check)) ? DEFAULT_QUALITY_BAR : null;
}

/** Every check type but `agreement`: a reply passes or fails it on its own, with no comparison with the requested model. */
export function isAbsoluteCheck(check: EvalCheck): check is Exclude<EvalCheck, { type: 'agreement' }> {
  return check.type !== 'agreement';
}

/** `relative` when the contract has a quality bar and an agreement check to compare by; else `absolute`. */
export function qualitySemantics(contract: EvalContract): QualitySemantics {
  return contract.quality_bar !== null && contract.checks.some((check) => !isAbsoluteCheck(check)) ? 'relative' : 'absolute';
}

/** One sentence saying what a model must do to serve under this contract, with its numbers (the eval API's `semantics_detail`). */
export function qualitySemanticsDetail(contract: EvalContract): string {
  const passRate = `pass_rate ${contract.pass_rate}`;
  if (qualitySemantics(contract) === 'relative') {
    const absolute = [...new Set(contract.checks.filter(isAbsoluteCheck).map((check) => check.type))];
    const applies =
      absolute.length === 0
        ? `${passRate} applies to no check (the contract has no absolute checks)`
        : `${passRate} applies to the absolute checks (${absolute.join(', ')})`;
    const perCall = contract.per_call
      ? "; per-call policies: a cheaper model may take the calls a policy learned on the workload's own samples picks, certified on samples it was not trained on, where that saves more than a random share"
      : '';
    return (
      'A cheaper model serves a share of calls, up to all of them, when its quality by paired comparison with the requested model on the same calls ' +
      `is certified at least ${contract.quality_bar} × the requested model's; ${applies}${perCall}.`
    );
  }
  if (contract.checks.some((check) => !isAbsoluteCheck(check))) {
    return `Every model that serves must itself pass every check at ${passRate} (the absolute agreement semantics; set quality_bar to compare with the requested model instead).`;
  }
  return `Every model that serves must itself pass every check at ${passRate} (there is no agreement check, so no comparison with the requested model).`;
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

/**
 * The contract's checks alone, canonically (key order and absent-vs-undefined
 * optional keys do not count): two contracts with the same key judge replies
 * alike, so evidence gathered under one still holds under the other when only
 * thresholds, budgets, latency limits or `per_call` changed (a policy learns
 * from the same samples: it does not change what a sample means).
 */
export function checksKey(contract: EvalContract): string {
  // The JSON round trip drops optional keys set to undefined, which canonicalJson would write as null.
  return canonicalJson(JSON.parse(JSON.stringify(contract.checks)) as unknown);
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
