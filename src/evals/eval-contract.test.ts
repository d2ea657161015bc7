import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../api/errors.js';
import {
  DEFAULT_CONTRACT,
  checksKey,
  isAbsoluteCheck,
  parseEvalContract,
  qualitySemantics,
  qualitySemanticsDetail,
  validateEvalContract,
  type EvalCheck,
} from './eval-contract.js';
import { invalidRequestOf } from '../../test/helpers/invalid-request.js';

const errorOf = (input: unknown): InvalidRequestError => invalidRequestOf(() => parseEvalContract(input));

describe('parseEvalContract: defaults', () => {
  it('fills every default: the structural checks and agreement when no checks are given, an adaptive sample rate, latency limits', () => {
    expect(parseEvalContract({})).toEqual({
      checks: [{ type: 'response_format_valid' }, { type: 'tool_call_valid' }, { type: 'agreement', method: 'auto' }],
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
  });

  it('equals DEFAULT_CONTRACT, which is frozen, and gives each parse its own arrays', () => {
    const first = parseEvalContract({});
    expect(first).toEqual(DEFAULT_CONTRACT);
    expect(
      Object.isFrozen(DEFAULT_CONTRACT) &&
        Object.isFrozen(DEFAULT_CONTRACT.checks) &&
        DEFAULT_CONTRACT.checks.every((check) => Object.isFrozen(check)),
    ).toBe(true);
    expect(Object.isFrozen(first.checks[0])).toBe(false);
    first.checks.push({ type: 'regex', pattern: 'x' });
    expect(parseEvalContract({}).checks).toHaveLength(3);
  });

  it('keeps the sample rate and latency limits given', () => {
    expect(
      parseEvalContract({ sample_rate: 0.2, max_latency_ms: 1500, max_ttft_ms: 300.5, latency_percentile: 99.9, max_latency_factor: 1 }),
    ).toMatchObject({
      sample_rate: 0.2,
      max_latency_ms: 1500,
      max_ttft_ms: 300.5,
      latency_percentile: 99.9,
      max_latency_factor: 1,
    });
    expect(
      parseEvalContract({ sample_rate: 'auto', max_latency_ms: null, max_ttft_ms: null, latency_percentile: 50, max_latency_factor: null }),
    ).toMatchObject({
      sample_rate: 'auto',
      max_latency_ms: null,
      max_ttft_ms: null,
      latency_percentile: 50,
      max_latency_factor: null,
    });
  });

  it('defaults agreement method to auto and keeps what is given', () => {
    const contract = parseEvalContract({
      checks: [
        { type: 'agreement' },
        { type: 'regex', pattern: '^(yes|no)$', flags: 'i' },
        { type: 'json_schema', schema: { type: 'object', required: ['a'], properties: { a: { type: 'string', format: 'date-time' } } } },
        { type: 'tool_call_valid' },
        { type: 'agreement', method: 'judge', judge_model: 'qwen2.5-7b' },
        { type: 'judge', rubric: 'Answers in French.', model: 'llama-3.1-8b' },
      ],
      pass_rate: 0.9,
      confidence: 0.99,
      min_samples: 10,
      sample_rate: 0,
      daily_budget_usd: 0.5,
      candidates: ['a', 'b'],
      allow_upgrade: true,
    });
    expect(contract.checks[0]).toEqual({ type: 'agreement', method: 'auto' });
    expect(contract.checks[4]).toEqual({ type: 'agreement', method: 'judge', judge_model: 'qwen2.5-7b' });
    expect(contract).toMatchObject({
      pass_rate: 0.9,
      confidence: 0.99,
      min_samples: 10,
      sample_rate: 0,
      daily_budget_usd: 0.5,
      candidates: ['a', 'b'],
      allow_upgrade: true,
    });
  });

  it('keeps a schema as the caller wrote it, __proto__ key included', () => {
    const input = JSON.parse(
      '{"checks":[{"type":"json_schema","schema":{"type":"object","properties":{"__proto__":{"type":"string"}}}}]}',
    ) as unknown;
    const contract = parseEvalContract(input);
    const check = contract.checks[0];
    expect(check?.type === 'json_schema' && Object.hasOwn(check.schema.properties as object, '__proto__')).toBe(true);
  });
});

describe('parseEvalContract: errors name every bad path', () => {
  it('names each path in one error, in document order, param = the first', () => {
    const error = errorOf({
      checks: [
        { type: 'regex', pattern: '^ok$' },
        { type: 'regex', pattern: '(unclosed' },
        { type: 'json_schema', schema: { type: 'strin' } },
        { type: 'nope' },
        { type: 'judge' },
      ],
      pass_rate: 1,
      min_samples: 2.5,
      bogus: true,
    });
    expect(error.param).toBe('checks[1].pattern');
    expect(error.code).toBe('invalid_eval_contract');
    expect(error.status).toBe(400);
    const parts = error.message
      .replace(/^Invalid eval contract: /, '')
      .split('; ')
      .map((part) => part.split(':')[0]);
    expect(parts).toEqual([
      'checks[1].pattern',
      'checks[2].schema',
      'checks[3].type',
      'checks[4].rubric',
      'pass_rate',
      'min_samples',
      'bogus',
    ]);
    expect(error.message).toContain(
      'checks[1].pattern: not a valid regular expression (Invalid regular expression: /(unclosed/: Unterminated group)',
    );
    expect(error.message).toContain('checks[2].schema: not a valid JSON Schema (');
    expect(error.message).toContain(
      'checks[3].type: unknown check type "nope" (expected one of json_schema, regex, tool_call_valid, response_format_valid, agreement, judge)',
    );
    expect(error.message).toContain('checks[4].rubric: required');
    expect(error.message).toContain('pass_rate: must be at most 0.9999');
    expect(error.message).toContain('min_samples: must be an integer');
    expect(error.message).toContain('bogus: unknown key');
  });

  it('reports a bad pattern even when its check also has an unknown key', () => {
    const error = errorOf({ checks: [{ type: 'regex', pattern: '[', extra: 1 }] });
    expect(error.message).toContain('checks[0].pattern: not a valid regular expression');
    expect(error.message).toContain('checks[0].extra: unknown key');
  });

  it.each<[string, unknown, string, string]>([
    ['not an object', 'x', '(contract): must be an object, got string "x"', ''],
    ['null', null, '(contract): must be an object, got null', ''],
    ['no checks', { checks: [] }, 'checks: must have at least 1 item', 'checks'],
    ['check not an object', { checks: [3] }, 'checks[0]', 'checks[0]'],
    ['check without type', { checks: [{}] }, 'checks[0].type: required: one of json_schema', 'checks[0].type'],
    [
      'unknown key in a check',
      { checks: [{ type: 'tool_call_valid', strict: true }] },
      'checks[0].strict: unknown key',
      'checks[0].strict',
    ],
    [
      'unknown agreement method',
      { checks: [{ type: 'agreement', method: 'exact' }] },
      'checks[0].method: must be one of "auto", "normalized", "json_equal", "tool_calls_equal", "judge", got "exact"',
      'checks[0].method',
    ],
    [
      'judge_model without method judge',
      { checks: [{ type: 'agreement', method: 'normalized', judge_model: 'm' }] },
      'checks[0].judge_model: only used with method "judge"',
      'checks[0].judge_model',
    ],
    [
      'judge_model with the default method',
      { checks: [{ type: 'agreement', judge_model: 'm' }] },
      'checks[0].judge_model: only used with method "judge", not "auto"',
      'checks[0].judge_model',
    ],
    ['blank rubric', { checks: [{ type: 'judge', rubric: '   ' }] }, 'checks[0].rubric: must not be empty', 'checks[0].rubric'],
    ['empty pattern', { checks: [{ type: 'regex', pattern: '' }] }, 'checks[0].pattern: must not be empty', 'checks[0].pattern'],
    [
      'stateful g flag',
      { checks: [{ type: 'regex', pattern: 'a', flags: 'g' }] },
      'checks[0].flags: must be distinct letters of "imsuv"',
      'checks[0].flags',
    ],
    [
      'u and v together',
      { checks: [{ type: 'regex', pattern: 'a', flags: 'uv' }] },
      'checks[0].flags: must be distinct letters',
      'checks[0].flags',
    ],
    [
      'repeated flag',
      { checks: [{ type: 'regex', pattern: 'a', flags: 'ii' }] },
      'checks[0].flags: must be distinct letters',
      'checks[0].flags',
    ],
    [
      'pattern invalid only with its flags',
      { checks: [{ type: 'regex', pattern: '\\-', flags: 'u' }] },
      'checks[0].pattern: not a valid regular expression',
      'checks[0].pattern',
    ],
    [
      'schema not an object',
      { checks: [{ type: 'json_schema', schema: [] }] },
      'checks[0].schema: must be a JSON Schema object',
      'checks[0].schema',
    ],
    [
      'schema keyword typo',
      { checks: [{ type: 'json_schema', schema: { type: 'object', requred: ['a'] } }] },
      'checks[0].schema: not a valid JSON Schema (strict mode: unknown keyword: "requred")',
      'checks[0].schema',
    ],
    [
      'schema with a remote $ref',
      { checks: [{ type: 'json_schema', schema: { $ref: 'https://example.com/s.json' } }] },
      "checks[0].schema: not a valid JSON Schema (can't resolve reference",
      'checks[0].schema',
    ],
    ['pass_rate too low', { pass_rate: 0.4 }, 'pass_rate: must be at least 0.5', 'pass_rate'],
    ['quality_bar too low', { quality_bar: 0.49 }, 'quality_bar: must be at least 0.5', 'quality_bar'],
    ['quality_bar above 1', { quality_bar: 1.01 }, 'quality_bar: must be at most 1', 'quality_bar'],
    ['quality_bar as a string', { quality_bar: '0.95' }, 'quality_bar: must be a number, got string "0.95"', 'quality_bar'],
    [
      'quality_bar without an agreement check',
      { checks: [{ type: 'json_schema', schema: { type: 'object' } }], quality_bar: 0.9 },
      'quality_bar: needs an agreement check in checks (the paired comparison with the requested model)',
      'quality_bar',
    ],
    ['confidence as a string', { confidence: '0.9' }, 'confidence: must be a number, got string "0.9"', 'confidence'],
    ['min_samples zero', { min_samples: 0 }, 'min_samples: must be at least 1', 'min_samples'],
    ['sample_rate above 1', { sample_rate: 1.5 }, 'sample_rate: must be at most 1', 'sample_rate'],
    ['sample_rate negative', { sample_rate: -0.1 }, 'sample_rate: must be at least 0', 'sample_rate'],
    ['sample_rate another word', { sample_rate: 'fast' }, 'sample_rate: must be a number or "auto", got string "fast"', 'sample_rate'],
    ['sample_rate null', { sample_rate: null }, 'sample_rate: must be a number or "auto", got null', 'sample_rate'],
    ['max_latency_ms zero', { max_latency_ms: 0 }, 'max_latency_ms: must be more than 0', 'max_latency_ms'],
    ['max_latency_ms as a string', { max_latency_ms: '2s' }, 'max_latency_ms: must be a number, got string "2s"', 'max_latency_ms'],
    ['max_ttft_ms negative', { max_ttft_ms: -5 }, 'max_ttft_ms: must be more than 0', 'max_ttft_ms'],
    ['latency_percentile below 50', { latency_percentile: 49 }, 'latency_percentile: must be at least 50', 'latency_percentile'],
    ['latency_percentile 100', { latency_percentile: 100 }, 'latency_percentile: must be at most 99.9', 'latency_percentile'],
    ['latency_percentile null', { latency_percentile: null }, 'latency_percentile: must be a number, got null', 'latency_percentile'],
    ['max_latency_factor below 1', { max_latency_factor: 0.5 }, 'max_latency_factor: must be at least 1', 'max_latency_factor'],
    [
      'unknown key in response_format_valid',
      { checks: [{ type: 'response_format_valid', schema: {} }] },
      'checks[0].schema: unknown key',
      'checks[0].schema',
    ],
    ['negative budget', { daily_budget_usd: -1 }, 'daily_budget_usd: must be at least 0', 'daily_budget_usd'],
    ['empty candidate id', { candidates: [''] }, 'candidates[0]: must not be empty', 'candidates[0]'],
    ['duplicate candidate', { candidates: ['a', 'b', 'a'] }, 'candidates[2]: duplicate of candidates[0]', 'candidates[2]'],
    ['allow_upgrade not boolean', { allow_upgrade: 'yes' }, 'allow_upgrade: must be a boolean', 'allow_upgrade'],
    ['per_call not boolean', { per_call: 'yes' }, 'per_call: must be a boolean, got string "yes"', 'per_call'],
    ['per_call null', { per_call: null }, 'per_call: must be a boolean, got null', 'per_call'],
    [
      'per_call with pass_rate and no quality_bar (absolute)',
      { pass_rate: 0.9, per_call: true },
      'per_call: needs quality_bar (the relative semantics: a per-call policy is certified by paired comparison with the requested model); set quality_bar, or set per_call to false',
      'per_call',
    ],
    ['per_call with quality_bar null', { quality_bar: null, per_call: true }, 'per_call: needs quality_bar', 'per_call'],
    [
      'per_call without an agreement check',
      { checks: [{ type: 'tool_call_valid' }], per_call: true },
      'per_call: needs quality_bar',
      'per_call',
    ],
  ])('%s', (_case, input, message, param) => {
    const error = errorOf(input);
    expect(error.message).toContain(message);
    expect(error.param).toBe(param === '' ? null : param);
  });

  it('validateEvalContract returns the issues as data for callers with their own error format', () => {
    const validation = validateEvalContract({ pass_rate: 2, checks: [{ type: 'regex', pattern: '(' }] });
    expect(validation.ok).toBe(false);
    if (validation.ok) return;
    expect(validation.issues.map((issue) => issue.path)).toEqual([['pass_rate'], ['checks', 0, 'pattern']]);
  });
});

describe('checksKey', () => {
  it('is the same for contracts with the same checks, whatever the key order and the other fields', () => {
    const checks = [
      { type: 'json_schema', schema: { type: 'object', required: ['a'] } },
      { type: 'agreement', method: 'judge', judge_model: 'm' },
    ];
    const reordered = [
      { schema: { required: ['a'], type: 'object' }, type: 'json_schema' },
      { judge_model: 'm', type: 'agreement', method: 'judge' },
    ];
    const key = checksKey(parseEvalContract({ checks, pass_rate: 0.9 }));
    expect(checksKey(parseEvalContract({ checks: reordered, pass_rate: 0.99, sample_rate: 1, max_latency_ms: 800 }))).toBe(key);
    expect(checksKey(parseEvalContract({}))).toBe(checksKey(DEFAULT_CONTRACT));
    // An agreement check's method defaults to auto, so writing it out changes nothing.
    expect(checksKey(parseEvalContract({ checks: [{ type: 'agreement' }] }))).toBe(
      checksKey(parseEvalContract({ checks: [{ type: 'agreement', method: 'auto' }] })),
    );
  });

  it('differs when the checks differ: a value, the order of checks, an optional key', () => {
    const base = checksKey(parseEvalContract({ checks: [{ type: 'regex', pattern: '^a$' }, { type: 'tool_call_valid' }] }));
    expect(checksKey(parseEvalContract({ checks: [{ type: 'regex', pattern: '^b$' }, { type: 'tool_call_valid' }] }))).not.toBe(base);
    expect(checksKey(parseEvalContract({ checks: [{ type: 'tool_call_valid' }, { type: 'regex', pattern: '^a$' }] }))).not.toBe(base);
    expect(checksKey(parseEvalContract({ checks: [{ type: 'regex', pattern: '^a$', flags: 'i' }, { type: 'tool_call_valid' }] }))).not.toBe(
      base,
    );
  });

  it('treats an optional key set to undefined as absent', () => {
    const contract = parseEvalContract({ checks: [{ type: 'judge', rubric: 'r' }] });
    expect(checksKey({ ...contract, checks: [{ type: 'judge', rubric: 'r', model: undefined }] })).toBe(checksKey(contract));
  });
});

describe('quality_bar and its two semantics', () => {
  const agreement = { type: 'agreement', method: 'normalized' };
  const regex = { type: 'regex', pattern: '^\\d+$' };

  it.each<[string, Record<string, unknown>, number | null, 'relative' | 'absolute']>([
    ['nothing given: the default bar', {}, 0.95, 'relative'],
    ['checks with agreement, no pass_rate', { checks: [agreement, regex] }, 0.95, 'relative'],
    ['pass_rate with the default checks: legacy', { pass_rate: 0.9 }, null, 'absolute'],
    ['pass_rate with an agreement check: legacy', { checks: [regex, agreement], pass_rate: 0.9 }, null, 'absolute'],
    ['pass_rate and a bar', { pass_rate: 0.9, quality_bar: 0.97 }, 0.97, 'relative'],
    ['an explicit null: legacy', { quality_bar: null }, null, 'absolute'],
    ['the bounds', { quality_bar: 1 }, 1, 'relative'],
    ['absolute checks only: no bar to keep', { checks: [regex] }, null, 'absolute'],
    ['absolute checks only, with pass_rate', { checks: [regex], pass_rate: 0.9 }, null, 'absolute'],
    ['absolute checks only, explicit null', { checks: [regex], quality_bar: null }, null, 'absolute'],
  ])('%s', (_case, input, bar, semantics) => {
    const contract = parseEvalContract(input);
    expect(Object.hasOwn(contract, 'quality_bar')).toBe(true);
    expect(contract.quality_bar).toBe(bar);
    expect(qualitySemantics(contract)).toBe(semantics);
    // Stored contracts are parsed again on every read: the same contract, whatever was defaulted.
    expect(parseEvalContract(JSON.parse(JSON.stringify(contract)))).toEqual(contract);
  });

  it('reads a contract stored before quality_bar (pass_rate set, no quality_bar key) as legacy, and keeps it so', () => {
    // What every stored contract looked like: the parsed default, without the key.
    const stored = Object.fromEntries(Object.entries(parseEvalContract({})).filter(([key]) => key !== 'quality_bar'));
    const contract = parseEvalContract(stored);
    expect(contract).toEqual({ ...stored, quality_bar: null });
    expect(qualitySemantics(contract)).toBe('absolute');
    expect(parseEvalContract(JSON.parse(JSON.stringify(contract)))).toEqual(contract);
  });

  it('is relative only with a bar and an agreement check', () => {
    const base = parseEvalContract({});
    expect(qualitySemantics(base)).toBe('relative');
    expect(qualitySemantics({ ...base, quality_bar: null })).toBe('absolute');
    // A contract built in code, past the parser: a bar with nothing to compare by means nothing.
    expect(qualitySemantics({ ...base, checks: [{ type: 'tool_call_valid' }] })).toBe('absolute');
  });

  it('calls every check type but agreement absolute', () => {
    const checks: EvalCheck[] = [
      { type: 'json_schema', schema: {} },
      { type: 'regex', pattern: 'a' },
      { type: 'tool_call_valid' },
      { type: 'response_format_valid' },
      { type: 'judge', rubric: 'r' },
      { type: 'agreement', method: 'auto' },
    ];
    expect(checks.map((check) => [check.type, isAbsoluteCheck(check)])).toEqual([
      ['json_schema', true],
      ['regex', true],
      ['tool_call_valid', true],
      ['response_format_valid', true],
      ['judge', true],
      ['agreement', false],
    ]);
  });

  it("names the semantics in one sentence with the contract's numbers", () => {
    expect(
      qualitySemanticsDetail(
        parseEvalContract({ pass_rate: 0.9, quality_bar: 0.97, checks: [regex, agreement, { type: 'judge', rubric: 'r' }] }),
      ),
    ).toBe(
      'A cheaper model serves a share of calls, up to all of them, when its quality by paired comparison with the requested model on the same calls ' +
        "is certified at least 0.97 × the requested model's; pass_rate 0.9 applies to the absolute checks (regex, judge).",
    );
    expect(qualitySemanticsDetail(DEFAULT_CONTRACT)).toContain(
      'pass_rate 0.95 applies to the absolute checks (response_format_valid, tool_call_valid).',
    );
    expect(qualitySemanticsDetail(parseEvalContract({ checks: [agreement], quality_bar: 0.9 }))).toContain(
      "at least 0.9 × the requested model's; pass_rate 0.95 applies to no check",
    );
    expect(qualitySemanticsDetail(parseEvalContract({ pass_rate: 0.9 }))).toBe(
      'Every model that serves must itself pass every check at pass_rate 0.9 (the absolute agreement semantics; set quality_bar to compare with the requested model instead).',
    );
    expect(qualitySemanticsDetail(parseEvalContract({ checks: [regex], pass_rate: 0.8 }))).toBe(
      'Every model that serves must itself pass every check at pass_rate 0.8 (there is no agreement check, so no comparison with the requested model).',
    );
  });

  it('names a bar without an agreement check along with the other problems', () => {
    const validation = validateEvalContract({ quality_bar: 0.9, checks: [{ type: 'regex', pattern: '(' }], pass_rate: 2 });
    expect(validation.ok).toBe(false);
    if (validation.ok) return;
    expect(validation.issues.map((issue) => issue.path)).toEqual([['quality_bar'], ['checks', 0, 'pattern'], ['pass_rate']]);
    // With the default checks (agreement among them) a bar is fine.
    expect(validateEvalContract({ quality_bar: 0.9 }).ok).toBe(true);
  });

  it('keeps the evidence when only the bar changes: checksKey depends on the checks alone', () => {
    const key = checksKey(parseEvalContract({ pass_rate: 0.9 }));
    expect(checksKey(parseEvalContract({ pass_rate: 0.9, quality_bar: 0.97 }))).toBe(key);
    expect(checksKey(parseEvalContract({ quality_bar: 0.5 }))).toBe(key);
    expect(checksKey(DEFAULT_CONTRACT)).toBe(key);
  });
});

describe('per_call', () => {
  const perCallClause =
    "; per-call policies: a cheaper model may take the calls a policy learned on the workload's own samples picks, certified on samples it was not trained on, where that saves more than a random share.";

  it('is false by default, and true is accepted under the relative semantics', () => {
    expect(DEFAULT_CONTRACT.per_call).toBe(false);
    expect(parseEvalContract({}).per_call).toBe(false);
    const contract = parseEvalContract({ per_call: true });
    expect(contract).toEqual({ ...DEFAULT_CONTRACT, per_call: true });
    expect(qualitySemantics(contract)).toBe('relative');
    expect(parseEvalContract({ pass_rate: 0.9, quality_bar: 0.97, per_call: true })).toMatchObject({ quality_bar: 0.97, per_call: true });
    // Off needs nothing, whatever the semantics.
    expect(parseEvalContract({ pass_rate: 0.9, per_call: false })).toMatchObject({ quality_bar: null, per_call: false });
  });

  it('parses a contract stored before per_call existed as off, and a stored contract back to itself', () => {
    const old = JSON.parse(
      '{"checks":[{"type":"agreement","method":"normalized"}],"quality_bar":null,"pass_rate":0.9,"confidence":0.95,"min_samples":50,"sample_rate":"auto","daily_budget_usd":5,"allow_upgrade":false,"max_latency_ms":null,"max_ttft_ms":null,"latency_percentile":95,"max_latency_factor":2}',
    ) as unknown;
    expect(parseEvalContract(old)).toMatchObject({ quality_bar: null, pass_rate: 0.9, per_call: false });
    const stored = parseEvalContract({ pass_rate: 0.9, quality_bar: 0.97, per_call: true });
    expect(parseEvalContract(JSON.parse(JSON.stringify(stored)))).toEqual(stored);
  });

  it('refuses per_call without a quality bar along with the other problems, each path named', () => {
    const validation = validateEvalContract({ per_call: true, pass_rate: 2 });
    expect(validation.ok).toBe(false);
    if (validation.ok) return;
    expect(validation.issues.map((issue) => issue.path)).toEqual([['per_call'], ['pass_rate']]);
    const error = errorOf({ checks: [{ type: 'json_schema', schema: { type: 'object' } }], quality_bar: 0.9, per_call: true });
    // The bar is the problem there (it needs an agreement check), not per_call.
    expect(error.param).toBe('quality_bar');
    expect(error.message).not.toContain('per_call');
  });

  it('adds one clause to the relative sentence, and leaves it as it was when off', () => {
    const off = qualitySemanticsDetail(DEFAULT_CONTRACT);
    expect(qualitySemanticsDetail(parseEvalContract({ per_call: false }))).toBe(off);
    expect(off).not.toContain('per-call');
    expect(qualitySemanticsDetail(parseEvalContract({ per_call: true }))).toBe(off.slice(0, -1) + perCallClause);
  });

  it('keeps the evidence when only per_call changes: checksKey depends on the checks alone', () => {
    expect(checksKey(parseEvalContract({ per_call: true }))).toBe(checksKey(DEFAULT_CONTRACT));
    expect(checksKey(parseEvalContract({ pass_rate: 0.9, quality_bar: 0.97, per_call: true }))).toBe(
      checksKey(parseEvalContract({ pass_rate: 0.9 })),
    );
  });
});
