import { describe, expect, it } from 'vitest';
import type { AssistantMessage } from '../api/chat-types.js';
import { evaluateRegex } from './regex-check.js';

const request = { messages: [{ role: 'user' as const, content: 'Is the sky blue? Answer yes or no.' }] };
const reply = (content: string | null, extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: 'assistant',
  content,
  ...extra,
});
const evaluate = (pattern: string, candidate: AssistantMessage, flags?: string) =>
  evaluateRegex({ type: 'regex', pattern, ...(flags === undefined ? {} : { flags }) }, { request, reference: null, candidate });

describe('regex check', () => {
  it('matches the trimmed content', () => {
    expect(evaluate('^(yes|no)$', reply('  yes\n'))).toEqual({ verdict: 'pass' });
  });

  it('fails content that does not match, quoting it', () => {
    expect(evaluate('^(yes|no)$', reply('Yes, it is.'))).toEqual({
      verdict: 'fail',
      reason: 'content does not match /^(yes|no)$/: "Yes, it is."',
    });
  });

  it('applies flags', () => {
    expect(evaluate('^(yes|no)$', reply('YES'), 'i').verdict).toBe('pass');
    expect(evaluate('^(yes|no)$', reply('YES')).verdict).toBe('fail');
  });

  it('matches anywhere unless anchored', () => {
    expect(evaluate('\\d{4}', reply('The year was 1969.')).verdict).toBe('pass');
  });

  it('is not applicable to a tool-call reply, and fails an empty one', () => {
    const calls = [{ id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } }];
    expect(evaluate('.*', reply(null, { tool_calls: calls })).verdict).toBe('not_applicable');
    expect(evaluate('.*', reply(null))).toEqual({ verdict: 'fail', reason: 'the reply has no content' });
  });

  it('is not applicable when the pattern does not compile (a contract that skipped parsing)', () => {
    expect(evaluate('(', reply('x')).verdict).toBe('not_applicable');
  });
});
