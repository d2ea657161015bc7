/**
 * Numeric and sampling fields of a chat request: ranges, integers, `n`,
 * `seed`, `stop`, `logit_bias`. `null` means "not sent" for all of them
 * (OpenAI SDKs and LangChain send explicit nulls). JSON numbers too large for
 * a double parse to Infinity (`1e400`), which every range check here rejects.
 */
import { InvalidRequestError } from './errors.js';
import {
  arrayTooLongError,
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  quoteForMessage,
  showValue,
  unsupportedError,
} from './field-checks.js';

export const MAX_STOP_SEQUENCES = 4;
export const MAX_LOGIT_BIAS_ENTRIES = 300;
/** Token ids: a non-negative integer written in decimal. */
const TOKEN_ID_PATTERN = /^(0|[1-9][0-9]{0,9})$/;

/** A number in [minimum, maximum]. */
export function numberInRange(value: unknown, param: string, minimum: number, maximum: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number') throw invalidTypeError(param, 'a number', value);
  if (!(value >= minimum && value <= maximum)) {
    throw invalidValueError(param, `expected a number from ${minimum} to ${maximum}, got ${value}.`);
  }
  return value;
}

/** An integer in [minimum, maximum] (bounds at most Number.MAX_SAFE_INTEGER). */
export function integerInRange(value: unknown, param: string, minimum: number, maximum: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number') throw invalidTypeError(param, 'an integer', value);
  if (!Number.isInteger(value)) {
    throw new InvalidRequestError(`Invalid type for '${param}': expected an integer, got ${value}.`, param, 'invalid_type');
  }
  if (value < minimum) throw invalidValueError(param, `must be at least ${minimum}, got ${value}.`);
  if (value > maximum) throw invalidValueError(param, `must be at most ${maximum}, got ${value}.`);
  return value;
}

/** OpenAI's largest `n`. */
const MAX_N = 128;

/** `n`: 1 to 128 is valid, but engines here make one choice per call, so only 1 is served. */
export function validateN(value: unknown): number | undefined {
  const n = integerInRange(value, 'n', 1, MAX_N);
  if (n !== undefined && n > 1) {
    throw unsupportedError(
      'n',
      `taskgate's engines generate one choice per call, so only n=1 is supported, got ${n}. Make ${n} calls instead.`,
    );
  }
  return n;
}

/**
 * Limits of a `seed`: OpenAI's are int64. JSON numbers are doubles once
 * parsed, so beyond 2^53 the value arrives rounded to a neighbouring double
 * (9223372036854775807, int64's largest, parses to 2^63): any integer up to
 * 2^63 as parsed is accepted, and engines get it as parsed (the `openai`
 * engine sends 2^63 as the largest double below it, which is within int64).
 */
const SEED_MINIMUM = -(2 ** 63);
const SEED_MAXIMUM = 2 ** 63;

export function validateSeed(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number') throw invalidTypeError('seed', 'an integer', value);
  if (!Number.isInteger(value)) {
    throw new InvalidRequestError(`Invalid type for 'seed': expected an integer, got ${value}.`, 'seed', 'invalid_type');
  }
  if (value < SEED_MINIMUM || value > SEED_MAXIMUM) {
    throw invalidValueError('seed', `expected a 64-bit integer (-9223372036854775808 to 9223372036854775807), got ${value}.`);
  }
  return value;
}

/** `repetition_penalty`: 1 is neutral, 0 would divide by zero in engines. */
export function repetitionPenalty(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number') throw invalidTypeError('repetition_penalty', 'a number', value);
  if (!(value > 0 && value <= 2)) {
    throw invalidValueError('repetition_penalty', `expected a number greater than 0 and at most 2, got ${value}.`);
  }
  return value;
}

/**
 * A string or up to four strings, always returned as an array. OpenAI's
 * schema allows empty strings; an empty sequence can stop nothing, so it is
 * dropped (engines differ on what they make of one). `[]` counts as none.
 */
export function validateStop(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.length === 0 ? undefined : [value];
  if (!Array.isArray(value)) throw invalidTypeError('stop', 'a string or an array of strings', value);
  if (value.length > MAX_STOP_SEQUENCES) throw arrayTooLongError('stop', MAX_STOP_SEQUENCES, value.length);
  const stop: string[] = [];
  for (let index = 0; index < value.length; index++) {
    const sequence: unknown = value[index];
    if (typeof sequence !== 'string') throw invalidTypeError(`stop[${index}]`, 'a string', sequence);
    if (sequence.length > 0) stop.push(sequence);
  }
  return stop.length === 0 ? undefined : stop;
}

/**
 * Token id -> an integer bias in [-100, 100] (OpenAI's schema: integer values;
 * its description: token ids, -100 to 100). Keys must be token ids, which also
 * keeps `__proto__` and friends out; the copy has no prototype all the same.
 */
export function validateLogitBias(value: unknown): Record<string, number> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw invalidTypeError('logit_bias', 'an object mapping token ids to numbers', value);
  const tokenIds = Object.keys(value);
  if (tokenIds.length === 0) return undefined;
  if (tokenIds.length > MAX_LOGIT_BIAS_ENTRIES) {
    throw invalidValueError('logit_bias', `expected at most ${MAX_LOGIT_BIAS_ENTRIES} entries, got ${tokenIds.length}.`);
  }
  const bias: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const tokenId of tokenIds) {
    if (!TOKEN_ID_PATTERN.test(tokenId)) {
      throw invalidValueError('logit_bias', `keys must be token ids (non-negative integers), got ${quoteForMessage(tokenId)}.`);
    }
    const amount = value[tokenId];
    if (typeof amount !== 'number') throw invalidTypeError(`logit_bias.${tokenId}`, 'an integer', amount);
    if (!Number.isInteger(amount)) {
      throw new InvalidRequestError(
        `Invalid type for 'logit_bias.${tokenId}': expected an integer, got ${amount}.`,
        `logit_bias.${tokenId}`,
        'invalid_type',
      );
    }
    if (!(amount >= -100 && amount <= 100)) {
      throw invalidValueError(`logit_bias.${tokenId}`, `expected a number from -100 to 100, got ${showValue(amount)}.`);
    }
    bias[tokenId] = amount;
  }
  return bias;
}
