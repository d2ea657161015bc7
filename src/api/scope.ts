/**
 * Which project and workload a call is counted against (DESIGN section 2):
 *   1. the workload header wins over the body's `task`;
 *   2. `task` alone names the workload;
 *   3. neither means workload `main`;
 *   4. the project comes from its header, else `default`.
 * A scope header that is present but malformed is a 400, never a silent fall
 * back to the default: a typo would otherwise mix one workload's stats into
 * another's.
 */
import { InvalidRequestError } from './errors.js';
import { quoteForMessage } from './field-checks.js';

export const SCOPE_PROJECT_HEADER = 'x-taskgate-project';
export const SCOPE_WORKLOAD_HEADER = 'x-taskgate-workload';
export const DEFAULT_PROJECT = 'default';
export const DEFAULT_WORKLOAD = 'main';

/** Longest project slug and workload name. Checked before the pattern so a huge value costs nothing. */
const MAX_SCOPE_NAME_LENGTH = 63;
const PROJECT_SLUG_PATTERN = /^[a-z0-9-]{1,63}$/;
const WORKLOAD_NAME_PATTERN = /^[a-z0-9_-]{1,63}$/;

/**
 * Where a call is counted: the caller's account, one of its projects, and a
 * workload of that project. The one shape of it: built once per call
 * (`resolveScope`, after the key is known) and passed whole to the route
 * table, the router, the store and the trace.
 */
export interface Scope {
  accountId: string;
  project: string;
  workload: string;
}

/** A project of an account: a scope without its workload. */
export type ProjectScope = Pick<Scope, 'accountId' | 'project'>;

/** What a request names of its scope (headers, `task`): the scope before the caller's account is added. */
export type ScopeNames = Pick<Scope, 'project' | 'workload'>;

export interface ScopeInput {
  /** The raw header value as Node gives it; an array means the header was sent more than once. */
  projectHeader: string | string[] | undefined;
  workloadHeader: string | string[] | undefined;
  /** The request's validated `task`, if any. */
  task: string | undefined;
}

export function isValidProjectSlug(value: string): boolean {
  return value.length <= MAX_SCOPE_NAME_LENGTH && PROJECT_SLUG_PATTERN.test(value);
}

/** Also the rule for `task`, which is an alias of the workload name. */
export function isValidWorkloadName(value: string): boolean {
  return value.length <= MAX_SCOPE_NAME_LENGTH && WORKLOAD_NAME_PATTERN.test(value);
}

/** The names a request gives its scope; `scopeOf` adds the caller's account. */
export function resolveScope(input: ScopeInput): ScopeNames {
  const project =
    input.projectHeader === undefined
      ? DEFAULT_PROJECT
      : checkedHeader(input.projectHeader, SCOPE_PROJECT_HEADER, 'a project slug', PROJECT_SLUG_PATTERN);

  let workload: string;
  if (input.workloadHeader !== undefined) {
    workload = checkedHeader(input.workloadHeader, SCOPE_WORKLOAD_HEADER, 'a workload name', WORKLOAD_NAME_PATTERN);
  } else if (input.task !== undefined) {
    // The validator already checked `task`; this keeps the function safe on its own.
    if (!isValidWorkloadName(input.task)) throw scopeValueError('task', "'task'", 'a workload name', WORKLOAD_NAME_PATTERN, input.task);
    workload = input.task;
  } else {
    workload = DEFAULT_WORKLOAD;
  }
  return { project, workload };
}

/** The call's scope: the caller's account and the names its request gave. */
export function scopeOf(accountId: string, names: ScopeNames): Scope {
  return { accountId, project: names.project, workload: names.workload };
}

function checkedHeader(value: string | string[], header: string, what: string, pattern: RegExp): string {
  if (Array.isArray(value)) {
    throw new InvalidRequestError(
      `Header '${header}' was sent ${value.length} times; send it once, as ${what} matching ${pattern.source}.`,
      header,
      'invalid_scope_header',
    );
  }
  if (value.length > MAX_SCOPE_NAME_LENGTH || !pattern.test(value)) {
    throw scopeValueError(header, `header '${header}'`, what, pattern, value);
  }
  return value;
}

function scopeValueError(param: string, subject: string, what: string, pattern: RegExp, value: string): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid value for ${subject}: expected ${what} matching ${pattern.source}, got ${quoteForMessage(value)}.`,
    param,
    param === 'task' ? 'invalid_value' : 'invalid_scope_header',
  );
}
