import { describe, expect, it } from 'vitest';
import type { AssistantMessage, GenerationParameters } from '../api/chat-types.js';
import { DEFAULT_CONTRACT, parseEvalContract } from './eval-contract.js';
import { evaluateContract, guardChecks } from './evaluate-contract.js';
import type { JudgeRunner } from './evaluator.js';

const request: GenerationParameters = {
  messages: [{ role: 'user', content: 'Classify the sentiment as JSON.' }],
  tools: [{ type: 'function', function: { name: 'escalate', parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'] } } }],
};
const text = (content: string): AssistantMessage => ({ role: 'assistant', content });
const escalating = (args: string): AssistantMessage => ({ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'escalate', arguments: args } }] });

const structured = parseEvalContract({
  checks: [
    { type: 'json_schema', schema: { type: 'object', properties: { sentiment: { enum: ['positive', 'negative'] } }, required: ['sentiment'] } },
    { type: 'tool_call_valid' },
    { type: 'agreement' },
  ],
});

describe('evaluateContract', () => {
  it('passes when every applicable check passes, listing each outcome in contract order', async () => {
    const result = await evaluateContract(structured, { request, reference: text('{"sentiment":"positive"}'), candidate: text('{ "sentiment": "positive" }') });
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
    const result = await evaluateContract(structured, { request, reference: text('{"sentiment":"positive"}'), candidate: text('{"sentiment":"negative"}') });
    expect(result.passed).toBe(false);
    expect(result.checks.map((check) => check.outcome.verdict)).toEqual(['pass', 'not_applicable', 'fail']);
  });

  it('judges tool-call replies by the checks that apply to them', async () => {
    const reference = escalating('{"reason":"angry customer"}');
    expect((await evaluateContract(structured, { request, reference, candidate: escalating('{"reason": "angry customer"}') })).passed).toBe(true);
    const invalid = await evaluateContract(structured, { request, reference, candidate: escalating('{}') });
    expect(invalid.passed).toBe(false);
    expect(invalid.checks.map((check) => check.outcome.verdict)).toEqual(['not_applicable', 'fail', 'fail']);
  });

  it('gives passed: null when no check applies', async () => {
    expect(await evaluateContract(DEFAULT_CONTRACT, { request, reference: null, candidate: text('hi') })).toEqual({
      passed: null,
      checks: [{ type: 'agreement', outcome: { verdict: 'not_applicable', reason: 'no reference reply to agree with' } }],
    });
  });

  it('runs the default contract: agreement picked from the reference shape', async () => {
    expect((await evaluateContract(DEFAULT_CONTRACT, { request, reference: text('Positive.'), candidate: text('positive') })).passed).toBe(true);
    expect((await evaluateContract(DEFAULT_CONTRACT, { request, reference: text('{"a":[1,2]}'), candidate: text('{"a":[2,1]}') })).passed).toBe(false);
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
      return String(messages[0]?.content).includes('[[TIE]]') ? '[[TIE]]' : 'PASS';
    };
    const result = await evaluateContract(judged, input, { judge, judgeModel: (index) => `judge-for-${index}` });
    expect(result.passed).toBe(true);
    expect(asked.sort()).toEqual(['judge-for-1', 'judge-for-2', 'judge-for-2']);
  });

  it("uses the check's own model without judgeModel, and is not applicable when judgeModel finds none", async () => {
    const asked: string[] = [];
    const judge: JudgeRunner = async (model, messages) => {
      asked.push(model);
      return String(messages[0]?.content).includes('[[TIE]]') ? '[[B]]' : 'FAIL impolite';
    };
    const result = await evaluateContract(judged, input, { judge });
    expect(asked.sort()).toEqual(['contract-judge', 'pairwise-judge', 'pairwise-judge']);
    expect(result.passed).toBe(false);
    const none = await evaluateContract(judged, input, { judge, judgeModel: () => null });
    expect(none.passed).toBe(true);
    expect(none.checks[1]?.outcome).toEqual({ verdict: 'not_applicable', reason: 'no judge model of another family than the candidate' });
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
    expect(await evaluateContract(onlyJudge, input)).toEqual({ passed: null, checks: [{ type: 'judge', outcome: { verdict: 'not_applicable', reason: 'no judge runner' } }] });
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
      return String(messages[0]?.content).includes('[[TIE]]') ? '[[TIE]]' : 'PASS';
    };
    await evaluateContract(judged, input, { judge });
    expect(most).toBe(3);
  });
});

describe('guardChecks', () => {
  const contract = parseEvalContract({
    checks: [{ type: 'agreement' }, { type: 'regex', pattern: '^\\{' }, { type: 'judge', rubric: 'r' }, { type: 'json_schema', schema: { type: 'object', required: ['sentiment'] } }, { type: 'tool_call_valid' }],
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

  it('has nothing to say for a contract without reference-free checks', () => {
    expect(guardChecks(DEFAULT_CONTRACT, { request, candidate: text('anything') })).toEqual({ passed: null, checks: [] });
  });
});
