/**
 * Shared pieces of request validation: the OpenAI-style 400s that name the
 * offending field, and the small checks every validator uses.
 *
 * Error paths build their `param` strings only when they throw, so a valid
 * request pays for no string concatenation.
 */
import { InvalidRequestError } from './errors.js';

/** Longest piece of a caller's string repeated in an error message. */
const QUOTED_VALUE_LIMIT = 64;

/** How a parsed JSON value is named in messages: 'a string', 'an array', 'null'. */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/**
 * A caller's string quoted for an error message. Long values are cut, so a
 * 10,000-character field is not echoed back (nor copied into logs and traces).
 */
export function quoteForMessage(text: string): string {
  if (text.length <= QUOTED_VALUE_LIMIT) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, QUOTED_VALUE_LIMIT))}… (${text.length} characters)`;
}

/** A value of any JSON type as it appears in a message: strings quoted and cut, numbers as written. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return quoteForMessage(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return describeJsonType(value);
}

/** Parsed JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a property only when the object itself has it. Parsed JSON objects
 * inherit from Object.prototype; reading an absent field through the
 * prototype chain would let anything planted there look like caller input.
 */
export function ownField(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

export function invalidTypeError(param: string, expected: string, value: unknown): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid type for '${param}': expected ${expected}, got ${describeJsonType(value)}.`,
    param,
    'invalid_type',
  );
}

export function invalidValueError(param: string, problem: string): InvalidRequestError {
  return new InvalidRequestError(`Invalid value for '${param}': ${problem}`, param, 'invalid_value');
}

export function missingParameterError(param: string, hint = ''): InvalidRequestError {
  return new InvalidRequestError(`Missing required parameter: '${param}'.${hint}`, param, 'missing_required_parameter');
}

export function arrayTooLongError(param: string, maximum: number, length: number): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid value for '${param}': expected at most ${maximum} items, got ${length}.`,
    param,
    'array_above_max_length',
  );
}

/**
 * A string's length in characters (Unicode code points), as JSON Schema's
 * `maxLength` and OpenAI count it: an emoji is one character, though
 * JavaScript's `length` counts it as two UTF-16 units.
 */
export function characterCount(text: string): number {
  let count = text.length;
  for (let index = 0; index < text.length - 1; index++) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        index++;
      }
    }
  }
  return count;
}

/** True when `text` has at most `maximum` characters; a string short in UTF-16 units needs no count. */
export function fitsLength(text: string, maximum: number): boolean {
  return text.length <= maximum || characterCount(text) <= maximum;
}

/** An optional string field: `null` and absent mean "not sent"; the limit is in characters. */
export function optionalString(value: unknown, param: string, maximumLength: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidTypeError(param, 'a string', value);
  if (!fitsLength(value, maximumLength)) {
    throw invalidValueError(param, `expected at most ${maximumLength} characters, got ${characterCount(value)}.`);
  }
  return value;
}

/** A required string field (absent or null is a missing parameter). */
export function requiredString(value: unknown, param: string): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) throw missingParameterError(param);
  throw invalidTypeError(param, 'a string', value);
}

/** One of a fixed list of strings; `null` and absent mean "not sent". */
export function optionalEnum<T extends string>(value: unknown, param: string, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  const list = allowed.map((item) => `'${item}'`).join(', ');
  if (typeof value !== 'string') throw invalidTypeError(param, `one of ${list}`, value);
  throw invalidValueError(param, `expected one of ${list}, got ${quoteForMessage(value)}.`);
}

/** A required object field, checked to be a JSON object. */
export function requiredObject(value: unknown, param: string, expected = 'an object'): Record<string, unknown> {
  if (isJsonObject(value)) return value;
  if (value === undefined || value === null) throw missingParameterError(param);
  throw invalidTypeError(param, expected, value);
}

/** 400 for a field that asks for what taskgate cannot serve; the message says why. */
export function unsupportedError(param: string, why: string): InvalidRequestError {
  return new InvalidRequestError(`Unsupported value for '${param}': ${why}`, param, 'unsupported_parameter');
}

/** An optional boolean field: `null` and absent mean "not sent"; `"true"` is not a boolean. */
export function optionalBoolean(value: unknown, param: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidTypeError(param, 'a boolean', value);
  return value;
}
