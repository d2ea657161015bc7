import { describe, expect, it } from 'vitest';
import type { AssistantMessage, GenerationParameters } from '../api/chat-types.js';
import { DEFAULT_CONTRACT, parseEvalContract } from './eval-contract.js';
import { evaluateContract, guardChecks } from './evaluate-contract.js';
import type { JudgeRunner } from './evaluator.js';

const request: GenerationParameters = {
  messages: [{ role: 'user', content: 'Classify the sentiment as JSON.' }],
  tools: [
    {
      type: 'function',
      function: { name: 'escalate', parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'] } },
    },
  ],
};
const text = (content: string): AssistantMessage => ({ role: 'assistant', content });
const escalating = (args: string): AssistantMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id: 'c1', type: 'function', function: { name: 'escalate', arguments: args } }],
});

const structured = parseEvalContract({
  checks: [
    {
      type: 'json_schema',
      schema: { type: 'object', properties: { sentiment: { enum: ['positive', 'negative'] } }, required: ['sentiment'] },
    },
    { type: 'tool_call_valid' },
    { type: 'agreement' },
  ],
});

describe('evaluateContract', () => {
  it('passes when every applicable check passes, listing each outcome in contract order', async () => {
    const result = await evaluateContract(structured, {
      request,
      reference: text('{"sentiment":"positive"}'),
      candidate: text('{ "sentiment": "positive" }'),
    });
    expect(result).toEqual({
      passed: true,
      checks: [
        { type: 'json_schema', outcome: { verdict: 'pass' } },
        { type: 'tool_call_valid', outcome: { verdict: 'not_applicable', reason: 'neither the reply nor the reference calls a tool' } },
        { type: 'agreement', outcome: { verdict: 'pass' } },
      ],
    });
  });

  it('fails when one applicable check fails', async () => {
    const result = await evaluateContract(structured, {
      request,
      reference: text('{"sentiment":"positive"}'),
      candidate: text('{"sentiment":"negative"}'),
    });
    expect(result.passed).toBe(false);
    expect(result.checks.map((check) => check.outcome.verdict)).toEqual(['pass', 'not_applicable', 'fail']);
  });

  it('judges tool-call replies by the checks that apply to them', async () => {
    const reference = escalating('{"reason":"angry customer"}');
    expect((await evaluateContract(structured, { request, reference, candidate: escalating('{"reason": "angry customer"}') })).passed).toBe(
      true,
    );
    const invalid = await evaluateContract(structured, { request, reference, candidate: escalating('{}') });
    expect(invalid.passed).toBe(false);
    expect(invalid.checks.map((check) => check.outcome.verdict)).toEqual(['not_applicable', 'fail', 'fail']);
  });

  it('gives passed: null when no check applies', async () => {
    expect(await evaluateContract(DEFAULT_CONTRACT, { request, reference: null, candidate: text('hi') })).toEqual({
      passed: null,
      checks: [
        { type: 'response_format_valid', outcome: { verdict: 'not_applicable', reason: 'the request asks for no JSON response format' } },
        { type: 'tool_call_valid', outcome: { verdict: 'not_applicable', reason: 'neither the reply nor the reference calls a tool' } },
        { type: 'agreement', outcome: { verdict: 'not_applicable', reason: 'no reference reply to agree with' } },
      ],
    });
  });

  it('runs the default contract: agreement picked from the reference shape', async () => {
    expect((await evaluateContract(DEFAULT_CONTRACT, { request, reference: text('Positive.'), candidate: text('positive') })).passed).toBe(
      true,
    );
    expect(
      (await evaluateContract(DEFAULT_CONTRACT, { request, reference: text('{"a":[1,2]}'), candidate: text('{"a":[2,1]}') })).passed,
    ).toBe(false);
  });

  it('runs the default contract: structural checks on, whatever the reference says', async () => {
    const asJson: GenerationParameters = { ...request, response_format: { type: 'json_object' } };
    const notJson = await evaluateContract(DEFAULT_CONTRACT, {
      request: asJson,
      reference: text('Positive.'),
      candidate: text('positive'),
    });
    expect(notJson.passed).toBe(false);
    expect(notJson.checks.map((check) => check.outcome.verdict)).toEqual(['fail', 'not_applicable', 'pass']);
    const badCall = await evaluateContract(DEFAULT_CONTRACT, { request, reference: escalating('{}'), candidate: escalating('{}') });
    expect(badCall.checks.map((check) => check.outcome.verdict)).toEqual(['not_applicable', 'fail', 'pass']);
  });
});

describe('evaluateContract: the default contract on free text that differs', () => {
  const input = { request, reference: text('The customer is happy with the product.'), candidate: text('Positive: they like it.') };

  it('asks the pairwise judge in both orders, and fails only a loss in both', async () => {
    const asked: string[] = [];
    const judge: JudgeRunner = async (model, messages) => {
      asked.push(model);
      const shownFirst = /\[The Start of Assistant A's Answer\]\n(.*)\n/.exec(String(messages[1]?.content))?.[1];
      // Prefers the reference wherever it is shown.
      return shownFirst === input.reference.content ? 'A is exact. [[A]]' : 'B is exact. [[B]]';
    };
    const result = await evaluateContract(DEFAULT_CONTRACT, input, { judge, judgeModel: () => 'judge' });
    expect(asked).toEqual(['judge', 'judge']);
    expect(result.passed).toBe(false);
    expect(result.checks[2]?.outcome).toEqual({
      verdict: 'fail',
      reason: 'judge judge prefers the reference in both orders: "A is exact. [[A]]"',
    });
    const tie: JudgeRunner = async () => 'Both say the same. [[C]]';
    expect((await evaluateContract(DEFAULT_CONTRACT, input, { judge: tie, judgeModel: () => 'judge' })).passed).toBe(true);
  });

  it('is evidence of nothing without a judge or a judge model, never a fail', async () => {
    expect(await evaluateContract(DEFAULT_CONTRACT, input)).toMatchObject({
      passed: null,
      checks: [{}, {}, { outcome: { verdict: 'not_applicable', reason: 'no judge runner' } }],
    });
    const judge: JudgeRunner = async () => {
      throw new Error('not to be asked');
    };
    const none = await evaluateContract(DEFAULT_CONTRACT, input, { judge, judgeModel: () => null });
    expect(none).toMatchObject({
      passed: null,
      checks: [{}, {}, { outcome: { verdict: 'not_applicable', reason: 'no judge model available' } }],
    });
    // An auto check names no judge of its own.
    expect((await evaluateContract(DEFAULT_CONTRACT, input, { judge })).checks[2]?.outcome).toEqual({
      verdict: 'not_applicable',
      reason: 'the check names no judge model',
    });
  });

  it('pays no judge when a rule check already failed, or when the texts are equal once normalized', async () => {
    let asked = 0;
    const judge: JudgeRunner = async () => {
      asked++;
      return '[[C]]';
    };
    const asJson: GenerationParameters = { ...request, response_format: { type: 'json_object' } };
    const result = await evaluateContract(DEFAULT_CONTRACT, { ...input, request: asJson }, { judge, judgeModel: () => 'judge' });
    expect(result.passed).toBe(false);
    expect(result.checks[2]?.outcome).toEqual({
      verdict: 'not_applicable',
      reason: 'skipped: check 0 (response_format_valid) already failed',
    });
    const same = await evaluateContract(
      DEFAULT_CONTRACT,
      { ...input, candidate: text('the customer is happy with the product') },
      { judge, judgeModel: () => 'judge' },
    );
    expect(same.passed).toBe(true);
    expect(asked).toBe(0);
  });
});

describe('evaluateContract with judges', () => {
  const judged = parseEvalContract({
    checks: [
      { type: 'regex', pattern: '^[A-Z]' },
      { type: 'judge', rubric: 'Polite.', model: 'contract-judge' },
      { type: 'agreement', method: 'judge', judge_model: 'pairwise-judge' },
    ],
  });
  const input = { request, reference: text('Positive.'), candidate: text('Positive, clearly.') };

  it('asks the model judgeModel picks for each check index', async () => {
    const asked: string[] = [];
    const judge: JudgeRunner = async (model, messages) => {
      asked.push(model);
      return String(messages[0]?.content).includes('[[C]]') ? '[[C]]' : 'PASS';
    };
    const result = await evaluateContract(judged, input, { judge, judgeModel: (index) => `judge-for-${index}` });
    expect(result.passed).toBe(true);
    expect(asked.sort()).toEqual(['judge-for-1', 'judge-for-2', 'judge-for-2']);
  });

  it("uses the check's own model without judgeModel, and is not applicable when judgeModel finds none", async () => {
    const asked: string[] = [];
    const judge: JudgeRunner = async (model, messages) => {
      asked.push(model);
      return String(messages[0]?.content).includes('[[C]]') ? '[[B]]' : 'FAIL impolite';
    };
    const result = await evaluateContract(judged, input, { judge });
    expect(asked.sort()).toEqual(['contract-judge', 'pairwise-judge', 'pairwise-judge']);
    expect(result.passed).toBe(false);
    const none = await evaluateContract(judged, input, { judge, judgeModel: () => null });
    expect(none.passed).toBe(true);
    expect(none.checks[1]?.outcome).toEqual({ verdict: 'not_applicable', reason: 'no judge model available' });
  });

  it('skips the judges (no spend) when a rule check already failed', async () => {
    let asked = 0;
    const judge: JudgeRunner = async () => {
      asked++;
      return 'PASS';
    };
    const result = await evaluateContract(judged, { ...input, candidate: text('lowercase start') }, { judge });
    expect(asked).toBe(0);
    expect(result.passed).toBe(false);
    expect(result.checks[1]?.outcome).toEqual({ verdict: 'not_applicable', reason: 'skipped: check 0 (regex) already failed' });
  });

  it('treats judge checks as not applicable without a judge runner', async () => {
    const onlyJudge = parseEvalContract({ checks: [{ type: 'judge', rubric: 'Polite.', model: 'm' }] });
    expect(await evaluateContract(onlyJudge, input)).toEqual({
      passed: null,
      checks: [{ type: 'judge', outcome: { verdict: 'not_applicable', reason: 'no judge runner' } }],
    });
    const unnamed = parseEvalContract({ checks: [{ type: 'judge', rubric: 'Polite.' }] });
    const result = await evaluateContract(unnamed, input, { judge: async () => 'PASS' });
    expect(result.checks[0]?.outcome).toEqual({ verdict: 'not_applicable', reason: 'the check names no judge model' });
  });

  it('runs the judges of one reply concurrently', async () => {
    let running = 0;
    let most = 0;
    const judge: JudgeRunner = async (_model, messages) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      return String(messages[0]?.content).includes('[[C]]') ? '[[C]]' : 'PASS';
    };
    await evaluateContract(judged, input, { judge });
    expect(most).toBe(3);
  });
});

describe('guardChecks', () => {
  const contract = parseEvalContract({
    checks: [
      { type: 'agreement' },
      { type: 'regex', pattern: '^\\{' },
      { type: 'judge', rubric: 'r' },
      { type: 'json_schema', schema: { type: 'object', required: ['sentiment'] } },
      { type: 'tool_call_valid' },
    ],
  });

  it('runs only the reference-free checks, synchronously', () => {
    const result = guardChecks(contract, { request, candidate: text('{"sentiment":"positive"}') });
    expect(result).toEqual({
      passed: true,
      checks: [
        { type: 'regex', outcome: { verdict: 'pass' } },
        { type: 'json_schema', outcome: { verdict: 'pass' } },
        { type: 'tool_call_valid', outcome: { verdict: 'not_applicable', reason: 'neither the reply nor the reference calls a tool' } },
      ],
    });
  });

  it('fails a reply that breaks one of them', () => {
    expect(guardChecks(contract, { request, candidate: text('{"mood":"good"}') }).passed).toBe(false);
    expect(guardChecks(contract, { request, candidate: escalating('{"why":1}') }).passed).toBe(false);
  });

  it('checks the response format asked for', () => {
    const asJson: GenerationParameters = { ...request, response_format: { type: 'json_object' } };
    expect(guardChecks(DEFAULT_CONTRACT, { request: asJson, candidate: text('{"sentiment":"positive"}') }).passed).toBe(true);
    expect(guardChecks(DEFAULT_CONTRACT, { request: asJson, candidate: text('positive') })).toMatchObject({
      passed: false,
      checks: [{ type: 'response_format_valid', outcome: { verdict: 'fail' } }, { type: 'tool_call_valid' }],
    });
  });

  it('runs the structural checks of the default contract, and has nothing to say when they do not apply', () => {
    expect(guardChecks(DEFAULT_CONTRACT, { request, candidate: escalating('{}') }).passed).toBe(false);
    expect(guardChecks(DEFAULT_CONTRACT, { request, candidate: text('anything') })).toMatchObject({
      passed: null,
      checks: [{ type: 'response_format_valid' }, { type: 'tool_call_valid' }],
    });
    expect(
      guardChecks(parseEvalContract({ checks: [{ type: 'agreement' }, { type: 'judge', rubric: 'r' }] }), {
        request,
        candidate: text('anything'),
      }),
    ).toEqual({ passed: null, checks: [] });
  });
});
