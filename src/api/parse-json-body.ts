/**
 * Request body text -> a parsed JSON object, or a 400 that says what is wrong.
 *
 * Nesting depth is bounded here, before `JSON.parse`, for the whole document.
 * Measured on Node 20 (V8 11.3): `JSON.parse` itself is iterative and accepts
 * any depth (10,000, 1,000,000 and 10,000,000 levels all parse), but
 *   - everything after it recurses: `JSON.stringify` (forwarding the body to an
 *     engine, writing a trace) throws RangeError from about 5,000 levels, as do
 *     `structuredClone` and any recursive walk, which would turn a bad request
 *     into a 5xx far from here;
 *   - deep input is slow to parse: a 4 MiB body of `[[[[…` takes 0.7-1 s of CPU,
 *     against 5 ms for a 4 MiB string and 70 ms for a 4 MiB flat array.
 * A scan of the text that stops at level 65 fixes both: it rejects `[[[[…`
 * after 65 characters (4 MiB of it: ~0.2 ms instead of ~1 s), and on an
 * ordinary body it mostly jumps from quote to quote with `indexOf`.
 * Bounding the whole document before parsing, rather than walking the
 * free-form values after it, is the cheaper choice because it also saves the
 * parse of hostile input, bounds every value nobody thought of, and leaves
 * nothing downstream (validator, tool schemas, content parts, traces) to
 * re-check: none sees more than 64 levels.
 *
 * `__proto__`: `JSON.parse` makes a `"__proto__"` key an ordinary own property
 * and never touches any prototype, so parsing is safe; the validator decides
 * what such keys mean and never merges parsed objects into others.
 */
import { InvalidRequestError } from './errors.js';
import { describeJsonType } from './field-checks.js';

/**
 * Deepest nesting of arrays and objects accepted in a request body. The chat
 * request itself uses 6 levels (body > messages > message > content > part >
 * image_url); the rest is room for tool `parameters` and response schemas.
 */
export const MAX_JSON_NESTING_DEPTH = 64;

/** Longest piece of the parser's own message kept (V8 quotes ~10 characters of the body). */
const SYNTAX_REASON_LIMIT = 200;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const BYTE_ORDER_MARK = 0xfeff;

/** Where the nesting limit was crossed: the top-level key being read then, as [start, end] of its quoted text. */
interface NestingOverflow {
  keyStart: number;
  keyEnd: number;
}

export function parseJsonObject(text: string): Record<string, unknown> {
  // Some Windows tools prefix a byte-order mark; RFC 8259 lets a parser ignore it.
  const source = text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text;
  if (isBlank(source)) throw new InvalidRequestError('Request body is empty; send a JSON object.', null, 'empty_body');

  const overflow = findNestingOverflow(source, MAX_JSON_NESTING_DEPTH);
  if (overflow !== undefined) {
    const field = topLevelKey(source, overflow);
    throw new InvalidRequestError(
      `Request body nests arrays and objects more than ${MAX_JSON_NESTING_DEPTH} levels deep` +
        `${field === null ? '' : ` (in '${field}')`}; flatten the value.`,
      field,
      'json_too_deep',
    );
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch (error) {
    throw new InvalidRequestError(`Request body is not valid JSON: ${syntaxReason(error)}`, null, 'invalid_json');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidRequestError(`Request body must be a JSON object, got ${describeJsonType(parsed)}.`, null, 'invalid_body');
  }
  return parsed as Record<string, unknown>;
}

/** True when the text holds only JSON whitespace. Stops at the first other character, so O(1) for real bodies. */
function isBlank(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return false;
  }
  return true;
}

/**
 * Finds the first array or object opened deeper than `maxDepth`. Exact for
 * valid JSON: outside strings, `[` and `{` are always openers. For invalid
 * JSON it may stop early or find nothing; `JSON.parse` then reports the error.
 * It also remembers the last top-level key (a string at depth 1 followed by
 * `:`), so the error can name the field.
 */
function findNestingOverflow(text: string, maxDepth: number): NestingOverflow | undefined {
  const length = text.length;
  let depth = 0;
  let index = 0;
  let stringStart = -1;
  let stringEnd = -1;
  let keyStart = -1;
  let keyEnd = -1;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = closingQuote(text, index + 1);
      if (end === -1) return undefined;
      if (depth === 1) {
        stringStart = index;
        stringEnd = end;
      }
      index = end + 1;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
      if (depth > maxDepth) return { keyStart, keyEnd };
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    } else if (code === COLON && depth === 1) {
      keyStart = stringStart;
      keyEnd = stringEnd;
    }
    index++;
  }
  return undefined;
}

/** Index of the quote that closes a string whose content starts at `from`, or -1. */
function closingQuote(text: string, from: number): number {
  let end = text.indexOf('"', from);
  while (end !== -1) {
    // A quote is escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    let before = end - 1;
    while (text.charCodeAt(before) === BACKSLASH) {
      backslashes++;
      before--;
    }
    if ((backslashes & 1) === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return -1;
}

/** The top-level field an overflow happened in, decoded, or null when there is none or it is unreadable. */
function topLevelKey(text: string, overflow: NestingOverflow): string | null {
  if (overflow.keyStart < 0 || overflow.keyEnd - overflow.keyStart > 130) return null;
  try {
    const key: unknown = JSON.parse(text.slice(overflow.keyStart, overflow.keyEnd + 1));
    return typeof key === 'string' && key.length > 0 && key.length <= 64 ? key : null;
  } catch {
    return null;
  }
}

function syntaxReason(error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return reason.length <= SYNTAX_REASON_LIMIT ? reason : `${reason.slice(0, SYNTAX_REASON_LIMIT)}…`;
}
