/**
 * An event's `choices` as JSON.stringify writes them, by hand for the common
 * case: one choice with a text delta (`role`, `content`) and a finish reason,
 * no logprobs, with one string escape (the content's) instead of
 * JSON.stringify's walk of the objects (measured: docs/benchmarks.md).
 * The objects' own key order is followed, and any other shape (tool calls,
 * reasoning, several choices, a key it does not know) is left to
 * JSON.stringify, so the bytes are always JSON.stringify's: the tests hold
 * the two to that.
 */
import type { ChunkChoice, ChunkDelta } from '../api/chat-types.js';

export function choicesJson(choices: readonly ChunkChoice[]): string {
  return (choices.length === 1 ? plainChoicesJson(choices[0] as ChunkChoice) : undefined) ?? JSON.stringify(choices);
}

/**
 * `[{"index":…,"delta":…,"finish_reason":…}]` when the choice has exactly
 * those keys in that order (and perhaps an undefined `logprobs`). Written in
 * one template: nested pieces joined step by step cost twice as much.
 */
function plainChoicesJson(choice: ChunkChoice): string | undefined {
  let step = 0;
  for (const key in choice) {
    const expected = step === 0 ? 'index' : step === 1 ? 'delta' : step === 2 ? 'finish_reason' : 'logprobs';
    if (key !== expected || (step === 3 && choice.logprobs !== undefined)) return undefined;
    step++;
  }
  if (step < 3 || !Number.isInteger(choice.index)) return undefined;
  const finish = choice.finish_reason;
  if (finish !== null && typeof finish !== 'string') return undefined;
  const delta = deltaJson(choice.delta);
  if (delta === undefined) return undefined;
  return `[{"index":${choice.index},"delta":${delta},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]`;
}

/**
 * `{"role":"assistant","content":…}` or part of it, keys in the object's
 * order; undefined for any other key or value. Read in one pass and written
 * in one template (nearly every delta is a content alone).
 */
function deltaJson(delta: ChunkDelta): string | undefined {
  let role = false;
  let content: string | undefined;
  let contentFirst = false;
  for (const key in delta) {
    const value = (delta as Record<string, unknown>)[key];
    // A key whose value is undefined is left out, as JSON.stringify leaves it out.
    if (value === undefined) continue;
    if (key === 'role' && value === 'assistant') role = true;
    else if (key === 'content' && (typeof value === 'string' || value === null)) {
      content = JSON.stringify(value);
      contentFirst = !role;
    } else return undefined;
  }
  if (content === undefined) return role ? '{"role":"assistant"}' : '{}';
  if (!role) return `{"content":${content}}`;
  return contentFirst ? `{"content":${content},"role":"assistant"}` : `{"role":"assistant","content":${content}}`;
}
