/**
 * `metadata`: up to 16 string pairs, keys at most 64 characters and values at
 * most 512 (OpenAI's `Metadata` description). Lengths are in characters
 * (Unicode code points), as OpenAI counts them: a key of 33 emoji is 33
 * characters, though JavaScript counts 66 UTF-16 units.
 */
import { characterCount, fitsLength, invalidTypeError, invalidValueError, isJsonObject, quoteForMessage } from './field-checks.js';

export const MAX_METADATA_PAIRS = 16;
export const MAX_METADATA_KEY_LENGTH = 64;
export const MAX_METADATA_VALUE_LENGTH = 512;

/** Keys refused outright: harmless in a null-prototype object, but a trap for any code that copies it. */
const RESERVED_METADATA_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The pairs, copied into an object without a prototype: no key can reach
 * Object.prototype, whatever code later reads or copies it.
 */
export function validateMetadata(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw invalidTypeError('metadata', 'an object of string key-value pairs', value);
  const keys = Object.keys(value);
  if (keys.length > MAX_METADATA_PAIRS) {
    throw invalidValueError('metadata', `expected at most ${MAX_METADATA_PAIRS} key-value pairs, got ${keys.length}.`);
  }
  const metadata: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const key of keys) {
    if (!fitsLength(key, MAX_METADATA_KEY_LENGTH)) {
      throw invalidValueError(
        'metadata',
        `keys must be at most ${MAX_METADATA_KEY_LENGTH} characters, got ${quoteForMessage(key)} (${characterCount(key)}).`,
      );
    }
    if (RESERVED_METADATA_KEYS.has(key)) {
      throw invalidValueError('metadata', `the key '${key}' is reserved; use another name.`);
    }
    const entry = value[key];
    if (typeof entry !== 'string') throw invalidTypeError(`metadata.${key}`, 'a string', entry);
    if (!fitsLength(entry, MAX_METADATA_VALUE_LENGTH)) {
      throw invalidValueError(`metadata.${key}`, `expected at most ${MAX_METADATA_VALUE_LENGTH} characters, got ${characterCount(entry)}.`);
    }
    metadata[key] = entry;
  }
  return metadata;
}
