import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors.js';
import {
  DEFAULT_PROJECT,
  DEFAULT_WORKLOAD,
  isValidProjectSlug,
  isValidWorkloadName,
  resolveScope,
  SCOPE_PROJECT_HEADER,
  SCOPE_WORKLOAD_HEADER,
  type ScopeInput,
} from './scope.js';

function errorOf(run: () => unknown): InvalidRequestError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidRequestError) return error;
    throw error;
  }
  throw new Error('expected an InvalidRequestError, nothing was thrown');
}

const none: ScopeInput = { projectHeader: undefined, workloadHeader: undefined, task: undefined };

describe('scope constants', () => {
  it('uses the brand-named headers and defaults of the design', () => {
    expect(SCOPE_PROJECT_HEADER).toBe('x-taskgate-project');
    expect(SCOPE_WORKLOAD_HEADER).toBe('x-taskgate-workload');
    expect(DEFAULT_PROJECT).toBe('default');
    expect(DEFAULT_WORKLOAD).toBe('main');
  });
});

describe('resolveScope rules', () => {
  it.each<[string, Partial<ScopeInput>, { project: string; workload: string }]>([
    ['neither header nor task: workload main of project default', {}, { project: 'default', workload: 'main' }],
    ['task alone names the workload', { task: 'summarise' }, { project: 'default', workload: 'summarise' }],
    ['the workload header alone', { workloadHeader: 'triage_v2' }, { project: 'default', workload: 'triage_v2' }],
    ['the header wins over task', { workloadHeader: 'from-header', task: 'from_task' }, { project: 'default', workload: 'from-header' }],
    ['the project from its header', { projectHeader: 'acme-prod' }, { project: 'acme-prod', workload: 'main' }],
    ['project header with task', { projectHeader: 'acme', task: 'classify' }, { project: 'acme', workload: 'classify' }],
    ['both headers and task', { projectHeader: 'p1', workloadHeader: 'w1', task: 't1' }, { project: 'p1', workload: 'w1' }],
    [
      '63-character names',
      { projectHeader: 'p'.repeat(63), workloadHeader: 'w'.repeat(63) },
      { project: 'p'.repeat(63), workload: 'w'.repeat(63) },
    ],
    ['a project named like the default workload', { projectHeader: 'main' }, { project: 'main', workload: 'main' }],
  ])('%s', (_name, input, expected) => {
    expect(resolveScope({ ...none, ...input })).toEqual(expected);
  });
});

describe('resolveScope rejects a malformed header instead of falling back', () => {
  const long = 'a'.repeat(10_000);
  it.each<[string, Partial<ScopeInput>, string, string]>([
    ['project path traversal', { projectHeader: '../' }, SCOPE_PROJECT_HEADER, '^[a-z0-9-]{1,63}$'],
    ['project upper case', { projectHeader: 'Acme' }, SCOPE_PROJECT_HEADER, '^[a-z0-9-]{1,63}$'],
    ['project underscore (allowed only in workloads)', { projectHeader: 'my_project' }, SCOPE_PROJECT_HEADER, '^[a-z0-9-]{1,63}$'],
    ['project empty', { projectHeader: '' }, SCOPE_PROJECT_HEADER, '^[a-z0-9-]{1,63}$'],
    ['project 64 characters', { projectHeader: 'p'.repeat(64) }, SCOPE_PROJECT_HEADER, '^[a-z0-9-]{1,63}$'],
    ['project 10,000 characters', { projectHeader: long }, SCOPE_PROJECT_HEADER, '^[a-z0-9-]{1,63}$'],
    ['project sent twice (array)', { projectHeader: ['a', 'b'] }, SCOPE_PROJECT_HEADER, '^[a-z0-9-]{1,63}$'],
    ['project sent twice (joined by Node)', { projectHeader: 'a, b' }, SCOPE_PROJECT_HEADER, '^[a-z0-9-]{1,63}$'],
    ['project with a space', { projectHeader: ' acme' }, SCOPE_PROJECT_HEADER, '^[a-z0-9-]{1,63}$'],
    ['workload path traversal', { workloadHeader: '../etc' }, SCOPE_WORKLOAD_HEADER, '^[a-z0-9_-]{1,63}$'],
    ['workload upper case', { workloadHeader: 'Main' }, SCOPE_WORKLOAD_HEADER, '^[a-z0-9_-]{1,63}$'],
    ['workload empty, even with a task', { workloadHeader: '', task: 'fine' }, SCOPE_WORKLOAD_HEADER, '^[a-z0-9_-]{1,63}$'],
    ['workload 10,000 characters', { workloadHeader: long }, SCOPE_WORKLOAD_HEADER, '^[a-z0-9_-]{1,63}$'],
    ['workload sent twice (array)', { workloadHeader: ['a', 'a'] }, SCOPE_WORKLOAD_HEADER, '^[a-z0-9_-]{1,63}$'],
    ['workload with a newline', { workloadHeader: 'main\n' }, SCOPE_WORKLOAD_HEADER, '^[a-z0-9_-]{1,63}$'],
    ['an invalid task given directly', { task: 'Not Valid' }, 'task', '^[a-z0-9_-]{1,63}$'],
  ])('%s', (_name, input, param, pattern) => {
    const error = errorOf(() => resolveScope({ ...none, ...input }));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toContain(pattern);
    expect(error.message.length).toBeLessThan(300);
  });

  it('quotes the bad value, cut when long', () => {
    expect(errorOf(() => resolveScope({ ...none, projectHeader: '../' })).message).toBe(
      `Invalid value for header 'x-taskgate-project': expected a project slug matching ^[a-z0-9-]{1,63}$, got "../".`,
    );
    const message = errorOf(() => resolveScope({ ...none, workloadHeader: 'x'.repeat(10_000) })).message;
    expect(message).toContain('(10000 characters)');
    expect(message).not.toContain('x'.repeat(100));
  });

  it('checks the project header even when the workload header is valid', () => {
    expect(errorOf(() => resolveScope({ ...none, projectHeader: 'BAD', workloadHeader: 'ok' })).param).toBe(SCOPE_PROJECT_HEADER);
  });
});

describe('isValidProjectSlug and isValidWorkloadName', () => {
  it.each([
    ['default', true, true],
    ['a', true, true],
    ['team-42', true, true],
    ['snake_case', false, true],
    ['x'.repeat(63), true, true],
    ['x'.repeat(64), false, false],
    ['', false, false],
    ['UPPER', false, false],
    ['../', false, false],
    ['with space', false, false],
    ['ünicode', false, false],
    ['dot.name', false, false],
  ])('%j: slug %s, workload %s', (value, slug, workload) => {
    expect(isValidProjectSlug(value)).toBe(slug);
    expect(isValidWorkloadName(value)).toBe(workload);
  });
});
