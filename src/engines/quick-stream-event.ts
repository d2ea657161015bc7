/**
 * The common stream event read with one regular expression instead of
 * JSON.parse: a compact `chat.completion.chunk` with one choice carrying a
 * text delta (`content`, perhaps `role: "assistant"`) and a finish reason, in
 * the field orders real servers write (vLLM, SGLang's plain chunks and OpenAI:
 * `choices` after `model`; llama.cpp: `choices` first, `finish_reason` before
 * `index`). Nearly every event of a stream is one, and JSON.parse builds
 * strings for the `id`, `model` and `created` the gateway replaces anyway;
 * vLLM's plain content event, the most common of all, is tried first with a
 * shorter expression of its own. Measured: docs/benchmarks.md.
 *
 * The usage report that closes a stream is read by a second expression.
 * Anything else (usage with details, an error, tool calls, reasoning,
 * logprobs, several choices, whitespace, a field it does not know, a
 * malformed event) does not match, and `parseStreamEvent` reads it the full
 * way. So when there is a result it is the one the full reader gives: the
 * tests hold the two to that, on real servers' events and on thousands of
 * mutations of them. It stays beside the engines rather than in
 * `src/fast-path/` because it gives the Engine contract's `EngineChunk`.
 */
import type { ChunkDelta } from '../api/chat-types.js';
import type { EngineChunk } from './engine.js';
import { finishReasonOf } from './finish-reason.js';

/** A JSON string without escapes (ids, model names, fingerprints). */
const plainString = '"[^"\\\\\\u0000-\\u001f]*"';
/** Any JSON string, escapes validated (the content). */
const anyString = '"(?:[^"\\\\\\u0000-\\u001f]|\\\\(?:["\\\\/bfnrt]|u[0-9a-fA-F]{4}))*"';
/** A JSON integer as JSON allows it (no leading zeros). */
const integer = '(?:0|[1-9][0-9]*)';
const finishReason = `(?:null|"[a-z_]+")`;

/**
 * The fields around `choices` that carry nothing the gateway keeps, in any
 * order: `object` only as a chunk (vLLM's older error events say
 * `"object":"error"`), and (in `otherField`) `usage` only when null.
 * `system_fingerprint` is read apart (below): a capture inside a repeated
 * group is lost on the next repetition.
 */
const fieldBesideUsage = `(?:"(?:id|model|system_fingerprint|service_tier|obfuscation)":(?:${plainString}|null)|"created":${integer}|"object":"chat\\.completion\\.chunk")`;
const otherField = `(?:${fieldBesideUsage}|"usage":null)`;
/** A delta of a role, a content, both or neither: captures the role, then the content (after a role, or alone). */
const delta = `\\{(?:("role":"assistant")(?:,"content":(null|${anyString}))?|"content":(null|${anyString}))?\\}`;
/** One choice: vLLM and OpenAI order (index, delta, logprobs, finish_reason) or llama.cpp's (finish_reason, index, delta). */
const choice =
  `\\{(?:"index":(${integer}),"delta":${delta}(?:,"logprobs":null)?,"finish_reason":(${finishReason})` +
  `|"finish_reason":(${finishReason}),"index":(${integer}),"delta":${delta})\\}`;
/**
 * vLLM's content event exactly (OpenAI's too, without its extra fields): 20 of
 * a 23-event stream's events. Read by a shorter expression first, which has
 * no alternatives to try and captures two groups instead of eleven; any other
 * event fails it within its first fields.
 */
const contentEvent = new RegExp(
  `^\\{"id":${plainString},"object":"chat\\.completion\\.chunk","created":${integer},"model":${plainString},` +
    `"choices":\\[\\{"index":(${integer}),"delta":\\{"content":(${anyString})\\},"logprobs":null,"finish_reason":null\\}\\]\\}$`,
);
const quickEvent = new RegExp(`^\\{(?:${otherField},)*"choices":\\[${choice}\\](?:,${otherField})*\\}$`);
/** A token count JSON.parse reads exactly (15 digits at most). */
const tokenCount = '(0|[1-9][0-9]{0,14})';
/**
 * The usage report closing a stream (empty `choices`, then `usage` with the
 * three counts and no details: vLLM's order or OpenAI's). No other field may
 * name `usage` (JSON.parse keeps the last of repeated keys).
 */
const usageEvent = new RegExp(
  `^\\{(?:${fieldBesideUsage},)*"choices":\\[\\],(?:${fieldBesideUsage},)*"usage":\\{"prompt_tokens":${tokenCount},` +
    `(?:"completion_tokens":${tokenCount},"total_tokens":${tokenCount}|"total_tokens":${tokenCount},"completion_tokens":${tokenCount})\\}(?:,${fieldBesideUsage})*\\}$`,
);
/** The first capture group of each order: index, role, content after a role, content alone, then the finish reason (the first of llama.cpp's). */
const vllmOrder = 1;
const llamaOrder = 7;
const fingerprintAt = new RegExp(`"system_fingerprint":(${plainString})`, 'y');

/** The event as the full reader would give it, or undefined when it is not a plain text chunk (see above). */
export function readQuickStreamEvent(text: string): EngineChunk | undefined {
  const plain = contentEvent.exec(text);
  if (plain !== null) return contentChunk(Number(plain[1]), plain[2] as string, undefined);
  const match = quickEvent.exec(text);
  if (match === null) return readUsageEvent(text);
  const first = match[vllmOrder] === undefined ? llamaOrder : vllmOrder;
  const index = Number(match[first]);
  const role = match[first + 1] !== undefined;
  const content = match[first + 2] ?? match[first + 3];
  const finish = match[first === vllmOrder ? 5 : 6] as string;
  if (!role && finish === 'null' && content !== undefined && content !== 'null') return contentChunk(index, content, fingerprintOf(text));
  const delta: ChunkDelta = {};
  if (role) delta.role = 'assistant';
  if (content !== undefined && content !== 'null') delta.content = stringValue(content);
  return {
    choices: [{ index, delta, finish_reason: finish === 'null' ? null : finishReasonOf(finish.slice(1, -1)), logprobs: undefined }],
    usage: undefined,
    system_fingerprint: fingerprintOf(text),
  };
}

/** Nearly every event: a piece of content alone, given as its JSON literal. */
function contentChunk(index: number, literal: string, fingerprint: string | undefined): EngineChunk {
  return {
    choices: [{ index, delta: { content: stringValue(literal) }, finish_reason: null, logprobs: undefined }],
    usage: undefined,
    system_fingerprint: fingerprint,
  };
}

/** The closing usage report as the full reader gives it, or undefined. */
function readUsageEvent(text: string): EngineChunk | undefined {
  const match = usageEvent.exec(text);
  if (match === null) return undefined;
  // vLLM writes total_tokens before completion_tokens (groups 4 and 5), OpenAI after (groups 2 and 3).
  const totalFirst = match[2] === undefined;
  return {
    choices: [],
    usage: {
      prompt_tokens: Number(match[1]),
      completion_tokens: Number(totalFirst ? match[5] : match[2]),
      total_tokens: Number(totalFirst ? match[4] : match[3]),
    },
    system_fingerprint: undefined,
  };
}

/** The last `system_fingerprint` when it is a string (JSON.parse keeps the last of repeated keys); none can hide in a value, which holds no bare quote. */
function fingerprintOf(text: string): string | undefined {
  const at = text.lastIndexOf('"system_fingerprint":');
  if (at === -1) return undefined;
  fingerprintAt.lastIndex = at;
  return fingerprintAt.exec(text)?.[1]?.slice(1, -1);
}

/** A JSON string literal's value: the text between the quotes when it has no escapes. */
function stringValue(literal: string): string {
  return literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
}
