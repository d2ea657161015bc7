/** What an assistant reply consists of, as the checks see it. */
import type { AssistantMessage, ToolCall } from '../api/chat-types.js';
import { fail, notApplicable, type EvalOutcome } from './evaluator.js';

export function toolCallsOf(message: AssistantMessage): ToolCall[] {
  return message.tool_calls ?? [];
}

/**
 * The content a content check (json_schema, regex) reads, or the outcome
 * when there is none: a reply that only calls tools has nothing for such a
 * check to judge; a reply with neither content nor tool calls fails it.
 */
export function contentForCheck(candidate: AssistantMessage): string | EvalOutcome {
  const content = candidate.content;
  if (content !== null && content.trim() !== '') return content;
  if (toolCallsOf(candidate).length > 0) return notApplicable('the reply calls tools and has no content');
  if (content === null) return fail(candidate.refusal ? 'the reply is a refusal with no content' : 'the reply has no content');
  return content;
}
