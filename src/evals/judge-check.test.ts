import { describe, expect, it } from 'vitest';
import type { AssistantMessage, ChatMessage } from '../api/chat-types.js';
import type { EvalInput, JudgeContext, JudgeRunner } from './evaluator.js';
import { evaluateJudge, evaluatePairwiseJudge } from './judge-check.js';

const request = { messages: [{ role: 'user' as const, content: 'Capital of Australia?' }] };
const text = (content: string): AssistantMessage => ({ role: 'assistant', content });
const reference = text('Canberra.');
const candidate = text('It is Sydney.');

interface Call {
  model: string;
  messages: ChatMessage[];
  signal: AbortSignal;
}

/** A scripted judge: answers in turn, and records what it was asked. */
function scriptedJudge(...answers: Array<string | Error>): { run: JudgeRunner; calls: Call[] } {
  const calls: Call[] = [];
  const run: JudgeRunner = async (model, messages, signal) => {
    calls.push({ model, messages, signal });
    const answer = answers[calls.length - 1];
    if (answer === undefined) throw new Error('the judge was asked more often than scripted');
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { run, calls };
}

/** Which reply the pairwise prompt shows as A. */
function replyA(call: Call | undefined): string {
  const content = call?.messages[1]?.content;
  return typeof content === 'string'
    ? (/\[The Start of Assistant A's Answer\]\n([\s\S]*?)\n\[The End of Assistant A's Answer\]/.exec(content)?.[1] ?? '')
    : '';
}

const context = (run: JudgeRunner, signal = new AbortController().signal): JudgeContext => ({ run, model: 'judge-model', signal });
const input: EvalInput = { request, reference, candidate };

describe('judge check (rubric)', () => {
  const check = { type: 'judge' as const, rubric: 'Names the correct capital.' };

  it('passes on PASS and fails on FAIL, with the judge reply as the reason', async () => {
    const passing = scriptedJudge('PASS\nCorrect.');
    expect(await evaluateJudge(check, input, context(passing.run))).toEqual({ verdict: 'pass' });
    expect(passing.calls[0]?.model).toBe('judge-model');
    expect(passing.calls[0]?.messages[1]?.content).toContain('<rubric>\nNames the correct capital.\n</rubric>');
    expect(passing.calls[0]?.messages[1]?.content).toContain('<reply>\nIt is Sydney.\n</reply>');
    const failing = scriptedJudge('FAIL\nThe capital is Canberra.');
    expect(await evaluateJudge(check, input, context(failing.run))).toEqual({
      verdict: 'fail',
      reason: 'judge judge-model: "FAIL The capital is Canberra."',
    });
  });

  it('is not applicable when the judge gives no verdict or fails', async () => {
    expect(await evaluateJudge(check, input, context(scriptedJudge('I think it is fine.').run))).toEqual({
      verdict: 'not_applicable',
      reason: 'judge judge-model gave no PASS/FAIL verdict: "I think it is fine."',
    });
    expect(await evaluateJudge(check, input, context(scriptedJudge(new Error('engine down')).run))).toEqual({
      verdict: 'not_applicable',
      reason: 'judge judge-model failed: engine down',
    });
  });

  it('rejects when the caller aborts', async () => {
    const controller = new AbortController();
    const run: JudgeRunner = async (_model, _messages, signal) => {
      controller.abort(new Error('shutting down'));
      throw signal.reason;
    };
    await expect(evaluateJudge(check, input, context(run, controller.signal))).rejects.toThrow('shutting down');
  });
});

describe('agreement by judge (pairwise, both orders)', () => {
  const check = { type: 'agreement' as const, method: 'judge' as const };

  it('asks in both orders: reference first, then candidate first', async () => {
    const judge = scriptedJudge('[[C]]', '[[C]]');
    expect(await evaluatePairwiseJudge(check, input, context(judge.run))).toEqual({ verdict: 'pass' });
    expect(judge.calls.map(replyA)).toEqual(['Canberra.', 'It is Sydney.']);
  });

  it.each<[string, string, string, 'pass' | 'fail']>([
    // [case, answer with the reference as A, answer with the candidate as A, verdict]
    ['candidate better in both orders', '[[B]]', '[[A]]', 'pass'],
    ['tie in both orders', '[[C]]', '[[C]]', 'pass'],
    ['tie in both orders, written [[TIE]]', '[[TIE]]', '[[tie]]', 'pass'],
    ['candidate better once, tie once', '[[C]]', '[[A]]', 'pass'],
    ['a flip: A wins both times (position bias) counts as a tie', '[[A]]', '[[A]]', 'pass'],
    ['a flip: B wins both times counts as a tie', '[[B]]', '[[B]]', 'pass'],
    ['reference better once, tie once: unconfirmed, a tie', '[[A]]', '[[C]]', 'pass'],
    ['tie once, reference better once: unconfirmed, a tie', '[[C]]', '[[B]]', 'pass'],
    ['reference better in both orders', '[[A]]', '[[B]]', 'fail'],
    [
      'reference better in both orders, verdicts after explanations',
      'A names the capital; B does not. [[A]]',
      'B names the capital. [[B]]',
      'fail',
    ],
  ])('%s → %s', async (_case, referenceFirst, candidateFirst, verdict) => {
    const outcome = await evaluatePairwiseJudge(check, input, context(scriptedJudge(referenceFirst, candidateFirst).run));
    expect(outcome.verdict).toBe(verdict);
  });

  it('says why the reference won, quoting the judge', async () => {
    expect(
      await evaluatePairwiseJudge(check, input, context(scriptedJudge('Canberra is right. [[A]]', 'Sydney is wrong. [[B]]').run)),
    ).toEqual({
      verdict: 'fail',
      reason: 'judge judge-model prefers the reference in both orders: "Canberra is right. [[A]]"',
    });
  });

  it('is not applicable when either order gives no verdict or the judge fails', async () => {
    expect((await evaluatePairwiseJudge(check, input, context(scriptedJudge('[[A]]', 'hmm').run))).verdict).toBe('not_applicable');
    expect((await evaluatePairwiseJudge(check, input, context(scriptedJudge(new Error('timeout'), '[[A]]').run))).verdict).toBe(
      'not_applicable',
    );
  });

  it('passes replies that are the same after normalising without asking the judge, and needs a reference', async () => {
    const judge = scriptedJudge();
    expect(await evaluatePairwiseJudge(check, { request, reference, candidate: text('canberra') }, context(judge.run))).toEqual({
      verdict: 'pass',
    });
    expect(await evaluatePairwiseJudge(check, { request, reference: null, candidate }, context(judge.run))).toMatchObject({
      verdict: 'not_applicable',
    });
    expect(judge.calls).toHaveLength(0);
  });
});
