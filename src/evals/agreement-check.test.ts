import { describe, expect, it } from 'vitest';
import type { AssistantMessage, ToolCall } from '../api/chat-types.js';
import { agreementMethodFor, evaluateAgreement, needsPairwiseJudge, normalizeText } from './agreement-check.js';
import type { AgreementMethod } from './eval-contract.js';

const request = { messages: [{ role: 'user' as const, content: 'Question?' }] };
const text = (content: string | null): AssistantMessage => ({ role: 'assistant', content });
const call = (name: string, args: string, id = 'call_1'): ToolCall => ({ id, type: 'function', function: { name, arguments: args } });
const calling = (...calls: ToolCall[]): AssistantMessage => ({ role: 'assistant', content: null, tool_calls: calls });
const agree = (method: AgreementMethod, reference: AssistantMessage | null, candidate: AssistantMessage) =>
  evaluateAgreement({ type: 'agreement', method }, { request, reference, candidate });

describe('normalizeText', () => {
  it.each<[string, string]>([
    ['  Yes.  ', 'yes'],
    ['The   answer\n\tis 42!!', 'the answer is 42'],
    ['ＹＥＳ', 'yes'], // full-width letters (NFKC)
    ['ﬁne…', 'fine'], // ligature and ellipsis (NFKC) stripped at the end
    ['Paris\u00a0France?', 'paris france'], // non-breaking space
    ['はい。', 'はい'],
    ['f(x)', 'f(x)'], // closing brackets carry meaning
    ['"quoted."', '"quoted."'],
  ])('%j → %j', (input, expected) => {
    expect(normalizeText(input)).toBe(expected);
  });
});

describe('agreement: normalized', () => {
  it('passes text equal after normalising, fails other text', () => {
    expect(agree('normalized', text('Paris.'), text('  paris'))).toEqual({ verdict: 'pass' });
    expect(agree('normalized', text('Paris.'), text('Lyon.'))).toEqual({
      verdict: 'fail',
      reason: 'normalized text differs: "Lyon." vs the reference\'s "Paris."',
    });
  });

  it('fails a candidate with no content, or one that calls tools where the reference answered', () => {
    expect(agree('normalized', text('Paris'), text(null)).verdict).toBe('fail');
    expect(agree('normalized', text('Paris'), { role: 'assistant', content: 'Paris', tool_calls: [call('lookup', '{}')] })).toEqual({
      verdict: 'fail',
      reason: 'the reply calls tools where the reference answered in content',
    });
  });

  it('is not applicable without a reference, or when the reference has no content', () => {
    expect(agree('normalized', null, text('Paris')).verdict).toBe('not_applicable');
    expect(agree('normalized', calling(call('lookup', '{}')), text('Paris')).verdict).toBe('not_applicable');
  });
});

describe('agreement: json_equal', () => {
  it('passes deep-equal JSON regardless of key order and formatting', () => {
    expect(agree('json_equal', text('{"a":1,"b":{"c":[1,2],"d":null}}'), text('{ "b": { "d": null, "c": [1, 2.0] }, "a": 1 }'))).toEqual({
      verdict: 'pass',
    });
  });

  it('fails different JSON (array order counts) and content that is not JSON', () => {
    expect(agree('json_equal', text('[1,2]'), text('[2,1]'))).toEqual({
      verdict: 'fail',
      reason: 'JSON differs: "[2,1]" vs the reference\'s "[1,2]"',
    });
    expect(agree('json_equal', text('{"a":1}'), text('{"a":1,"b":2}')).verdict).toBe('fail');
    expect(agree('json_equal', text('{"a":1}'), text('a: 1')).verdict).toBe('fail');
  });

  it('is not applicable when the reference is not JSON', () => {
    expect(agree('json_equal', text('plain words'), text('{}'))).toEqual({
      verdict: 'not_applicable',
      reason: 'the reference content is not JSON',
    });
  });
});

describe('agreement: tool_calls_equal', () => {
  it('passes the same multiset of calls in another order, with other ids and key order', () => {
    const reference = calling(call('a', '{"x":1,"y":2}', 'r1'), call('b', '{}', 'r2'), call('a', '{"x":1,"y":2}', 'r3'));
    const candidate = calling(call('b', '{ }', 'c1'), call('a', '{"y":2,"x":1}', 'c2'), call('a', '{"x":1,"y":2}', 'c3'));
    expect(agree('tool_calls_equal', reference, candidate)).toEqual({ verdict: 'pass' });
  });

  it('fails other arguments, a missing or an extra call, and no calls', () => {
    const reference = calling(call('a', '{"x":1}'), call('a', '{"x":1}', 'r2'));
    expect(agree('tool_calls_equal', reference, calling(call('a', '{"x":1}')))).toEqual({
      verdict: 'fail',
      reason: 'tool calls differ: misses the reference\'s "a({\\"x\\":1})"',
    });
    expect(agree('tool_calls_equal', calling(call('a', '{"x":1}')), calling(call('a', '{"x":2}')))).toEqual({
      verdict: 'fail',
      reason: 'tool calls differ: calls "a({\\"x\\":2})" that the reference does not; misses the reference\'s "a({\\"x\\":1})"',
    });
    expect(agree('tool_calls_equal', calling(call('a', '{}')), text('done')).verdict).toBe('fail');
    expect(agree('tool_calls_equal', text('done'), calling(call('a', '{}'))).verdict).toBe('fail');
  });

  it('compares unparseable arguments as raw text', () => {
    expect(agree('tool_calls_equal', calling(call('a', '{x')), calling(call('a', '{x'))).verdict).toBe('pass');
    expect(agree('tool_calls_equal', calling(call('a', '{x')), calling(call('a', '{ x')))).toMatchObject({ verdict: 'fail' });
  });

  it('is not applicable when neither calls a tool', () => {
    expect(agree('tool_calls_equal', text('a'), text('b')).verdict).toBe('not_applicable');
  });
});

describe('agreement: auto picks the method from the reference reply', () => {
  it.each<[string, AssistantMessage, string]>([
    ['tool calls', { role: 'assistant', content: 'Let me look.', tool_calls: [call('a', '{}')] }, 'tool_calls_equal'],
    ['a JSON object', text(' {"a": 1} '), 'json_equal'],
    ['a JSON array', text('[1, 2]'), 'json_equal'],
    ['a JSON scalar', text('42'), 'normalized'],
    ['a JSON string', text('"yes"'), 'normalized'],
    ['prose', text('Paris.'), 'normalized'],
    ['no content', text(null), 'normalized'],
  ])('%s → %s', (_case, reference, method) => {
    expect(agreementMethodFor(reference)).toBe(method);
  });

  it('applies the picked method', () => {
    expect(agree('auto', text('{"a":1,"b":2}'), text('{"b":2,"a":1}')).verdict).toBe('pass'); // json_equal; normalized text would differ
    expect(agree('auto', text('{"a":1}'), text('{"a":2}')).verdict).toBe('fail'); // JSON that differs fails by rule, no judge
    expect(agree('auto', text('Paris.'), text('paris')).verdict).toBe('pass'); // normalized
    expect(
      agree('auto', calling(call('a', '{"x":1}')), { role: 'assistant', content: 'other words', tool_calls: [call('a', '{"x": 1}')] })
        .verdict,
    ).toBe('pass');
    expect(agree('auto', calling(call('a', '{"x":1}')), text('{"x":1}')).verdict).toBe('fail');
    expect(agree('auto', null, text('x')).verdict).toBe('not_applicable');
  });
});

describe('agreement: auto on free text leaves differing text to the pairwise judge', () => {
  const needs = (method: AgreementMethod, reference: AssistantMessage | null, candidate: AssistantMessage) =>
    needsPairwiseJudge({ type: 'agreement', method }, { request, reference, candidate });

  it('is not failed by rule: not applicable without a judge, and needsPairwiseJudge says so', () => {
    expect(agree('auto', text('The capital is Canberra.'), text('Canberra is the capital.'))).toEqual({
      verdict: 'not_applicable',
      reason: 'the free text differs from the reference: only the pairwise judge can tell whether it is as good',
    });
    expect(agree('auto', text('42'), text('42.0')).verdict).toBe('not_applicable'); // a JSON scalar is free text
    expect(needs('auto', text('The capital is Canberra.'), text('Canberra is the capital.'))).toBe(true);
    expect(needs('auto', text('42'), text('{"a":1}'))).toBe(true); // JSON where the reference wrote text: still text to compare
  });

  it('decides by rule what a rule can decide', () => {
    expect(needs('auto', text('Paris.'), text('paris'))).toBe(false); // equal after normalising: passes, no judge paid
    expect(needs('auto', text('{"a":1}'), text('{"a":2}'))).toBe(false); // json_equal
    expect(needs('auto', calling(call('a', '{}')), text('done'))).toBe(false); // tool_calls_equal
    expect(needs('auto', null, text('x'))).toBe(false); // nothing to compare with
    expect(needs('auto', text(null), text('x'))).toBe(false); // the reference has no content
  });

  it('fails by rule a reply of another shape: tool calls, or no content, where the reference answered in text', () => {
    const toolsInstead: AssistantMessage = { role: 'assistant', content: 'Let me check.', tool_calls: [call('lookup', '{}')] };
    expect(needs('auto', text('Paris'), toolsInstead)).toBe(false);
    expect(agree('auto', text('Paris'), toolsInstead).verdict).toBe('fail');
    for (const empty of [text(null), text('  ')]) {
      expect(needs('auto', text('Paris'), empty)).toBe(false);
      expect(agree('auto', text('Paris'), empty).verdict).toBe('fail');
    }
  });

  it('always needs the judge for method judge, never for the other rules', () => {
    expect(needs('judge', text('Paris'), text('paris'))).toBe(true);
    expect(needs('normalized', text('Paris'), text('Lyon'))).toBe(false);
    expect(agree('normalized', text('Paris'), text('Lyon')).verdict).toBe('fail');
  });
});
