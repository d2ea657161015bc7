/**
 * Problems of an eval contract as `path: message` pairs: zod's structural
 * issues in plain words, plus the rules zod cannot state (a pattern compiles,
 * a schema compiles, a field that only one method uses, a quality bar needs
 * an agreement check, per-call policies need a quality bar). The semantic
 * rules run on the raw input even when the structure has other problems, so
 * one error names every bad path.
 */
import type { z } from 'zod';
import { compileJsonSchema } from './json-schema-validator.js';
import { isJsonObject } from './json-value.js';

export interface EvalContractIssue {
  /** Keys and indexes from the top of the contract; empty for the contract itself. */
  path: Array<string | number>;
  message: string;
}

const CHECK_TYPES = ['json_schema', 'regex', 'tool_call_valid', 'response_format_valid', 'agreement', 'judge'];
const AGREEMENT_METHODS = new Set(['auto', 'normalized', 'json_equal', 'tool_calls_equal', 'judge']);

/** `checks[1].pattern`; `(contract)` for the top level. */
export function formatPath(path: ReadonlyArray<string | number>): string {
  if (path.length === 0) return '(contract)';
  return path.map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`)).join('');
}

export function zodIssues(issues: readonly z.core.$ZodIssue[], input: unknown): EvalContractIssue[] {
  return issues.flatMap((issue): EvalContractIssue[] => {
    const path = issue.path.filter((part): part is string | number => typeof part !== 'symbol');
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ path: [...path, key], message: 'unknown key' }));
    return [{ path, message: describe(issue, valueAt(input, path)) }];
  });
}

function describe(issue: z.core.$ZodIssue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return 'required';
      return `must be ${article(issue.expected)}, got ${typeName(value)}`;
    case 'invalid_union':
      // The discriminated union of checks reports at the `type` key: it matched no check.
      if (issue.path.at(-1) === 'type') {
        if (value === undefined) return `required: one of ${CHECK_TYPES.join(', ')}`;
        return `unknown check type ${JSON.stringify(value)} (expected one of ${CHECK_TYPES.join(', ')})`;
      }
      // A field with alternatives (sample_rate: a number or "auto") that matched none.
      if (value === undefined) return 'required';
      return `must be ${alternatives(issue.errors)}, got ${typeName(value)}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((option) => JSON.stringify(option)).join(', ')}, got ${JSON.stringify(value)}`;
    case 'too_small':
      return bound(issue.origin, 'at least', issue.minimum, issue.inclusive);
    case 'too_big':
      return bound(issue.origin, 'at most', issue.maximum, issue.inclusive);
    default:
      return issue.message;
  }
}

function bound(origin: string, word: 'at least' | 'at most', limit: number | bigint, inclusive = true): string {
  if (origin === 'array')
    return word === 'at least' ? `must have at least ${limit} item${limit === 1 ? '' : 's'}` : `must have at most ${limit} items`;
  if (origin === 'string') return word === 'at least' && limit === 1 ? 'must not be empty' : `must be ${word} ${limit} characters`;
  if (inclusive) return `must be ${word} ${limit}`;
  return `must be ${word === 'at least' ? 'more' : 'less'} than ${limit}`;
}

/** `a number or "auto"`, from the first issue of each alternative. */
function alternatives(errors: readonly (readonly z.core.$ZodIssue[])[]): string {
  const options = errors.flatMap((issues) => {
    const first = issues[0];
    if (first?.code === 'invalid_type') return [article(first.expected)];
    if (first?.code === 'invalid_value') return first.values.map((option) => JSON.stringify(option));
    return [];
  });
  return options.length === 0 ? 'one of the allowed values' : options.join(' or ');
}

function article(expected: string): string {
  if (expected === 'int') return 'an integer';
  if (expected === 'object' || expected === 'array') return `an ${expected}`;
  return `a ${expected}`;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isInteger(value)) return `${value}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`.slice(0, 60);
}

function valueAt(input: unknown, path: ReadonlyArray<string | number>): unknown {
  let node = input;
  for (const part of path) {
    if (typeof part === 'number') node = Array.isArray(node) ? node[part] : undefined;
    else node = isJsonObject(node) && Object.hasOwn(node, part) ? node[part] : undefined;
  }
  return node;
}

/** The rules zod cannot state field by field, checked on whatever parts of the input have the right shape. */
export function findSemanticIssues(input: unknown): EvalContractIssue[] {
  if (!isJsonObject(input)) return [];
  const issues: EvalContractIssue[] = [];
  const checks = Object.hasOwn(input, 'checks') ? input.checks : undefined;
  if (Array.isArray(checks)) {
    checks.forEach((check: unknown, index) => {
      if (isJsonObject(check)) issues.push(...checkIssues(check, ['checks', index]));
    });
  }
  const qualityBar = Object.hasOwn(input, 'quality_bar') ? input.quality_bar : undefined;
  // Omitted checks are the default ones, which include agreement.
  if (
    typeof qualityBar === 'number' &&
    Array.isArray(checks) &&
    !checks.some((check: unknown) => isJsonObject(check) && check.type === 'agreement')
  ) {
    issues.push({
      path: ['quality_bar'],
      message: 'needs an agreement check in checks (the paired comparison with the requested model); add one, or set quality_bar to null',
    });
  }
  const perCall = Object.hasOwn(input, 'per_call') ? input.per_call : undefined;
  if (perCall === true && absoluteBar(input, qualityBar, checks)) {
    issues.push({
      path: ['per_call'],
      message:
        'needs quality_bar (the relative semantics: a per-call policy is certified by paired comparison with the requested model); set quality_bar, or set per_call to false',
    });
  }
  const candidates = Object.hasOwn(input, 'candidates') ? input.candidates : undefined;
  if (Array.isArray(candidates)) {
    candidates.forEach((candidate: unknown, index) => {
      const first = candidates.indexOf(candidate);
      if (typeof candidate === 'string' && first < index)
        issues.push({ path: ['candidates', index], message: `duplicate of candidates[${first}]` });
    });
  }
  return issues;
}

/**
 * Whether the input's quality bar is null once defaulted (the absolute
 * semantics), by the rule of `qualityBarOf` in eval-contract.ts: given as
 * null, or left out by a contract that sets `pass_rate` or whose checks have
 * no agreement check. A bar of the wrong type, or checks that are not an
 * array, are zod's issues: no verdict here.
 */
function absoluteBar(input: Record<string, unknown>, qualityBar: unknown, checks: unknown): boolean {
  if (qualityBar === null) return true;
  if (qualityBar !== undefined) return false;
  if (Object.hasOwn(input, 'pass_rate')) return true;
  // Omitted checks are the default ones, which include agreement.
  return Array.isArray(checks) && !checks.some((check: unknown) => isJsonObject(check) && check.type === 'agreement');
}

function checkIssues(check: Record<string, unknown>, at: Array<string | number>): EvalContractIssue[] {
  const field = (key: string): unknown => (Object.hasOwn(check, key) ? check[key] : undefined);
  const type = field('type');
  if (type === 'regex') {
    const pattern = field('pattern');
    const flags = field('flags');
    if (typeof pattern !== 'string' || pattern === '' || (flags !== undefined && typeof flags !== 'string')) return [];
    try {
      new RegExp(pattern, flags);
    } catch (error) {
      // A bad flags string is zod's issue; only blame the pattern when the flags alone are fine.
      if (flags !== undefined && !flagsCompile(flags)) return [];
      return [{ path: [...at, 'pattern'], message: `not a valid regular expression (${(error as Error).message})` }];
    }
  }
  if (type === 'json_schema') {
    const schema = field('schema');
    if (!isJsonObject(schema)) return [];
    const compiled = compileJsonSchema(schema, 'strict');
    if (!compiled.ok) return [{ path: [...at, 'schema'], message: `not a valid JSON Schema (${compiled.error})` }];
  }
  if (type === 'agreement') {
    const method = field('method') ?? 'auto';
    if (field('judge_model') !== undefined && method !== 'judge' && AGREEMENT_METHODS.has(String(method))) {
      return [{ path: [...at, 'judge_model'], message: `only used with method "judge", not ${JSON.stringify(method)}` }];
    }
  }
  return [];
}

function flagsCompile(flags: string): boolean {
  try {
    new RegExp('', flags);
    return true;
  } catch {
    return false;
  }
}

/**
 * Document order: a path's position is the order of its keys in the input
 * (a missing key sorts after the present ones), so the first issue, which
 * becomes the error's `param`, is the first bad place a reader meets.
 */
export function sortIssues(issues: EvalContractIssue[], input: unknown): EvalContractIssue[] {
  const keyed = issues.map((issue) => ({ issue, position: positionOf(input, issue.path) }));
  keyed.sort((left, right) => comparePositions(left.position, right.position));
  return keyed.map(({ issue }) => issue);
}

function positionOf(input: unknown, path: ReadonlyArray<string | number>): number[] {
  const position: number[] = [];
  let node = input;
  for (const part of path) {
    if (typeof part === 'number') {
      position.push(part);
      node = Array.isArray(node) ? node[part] : undefined;
      continue;
    }
    const keys = isJsonObject(node) ? Object.keys(node) : [];
    const index = keys.indexOf(part);
    position.push(index === -1 ? keys.length : index);
    node = index === -1 || !isJsonObject(node) ? undefined : node[part];
  }
  return position;
}

function comparePositions(left: number[], right: number[]): number {
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}
