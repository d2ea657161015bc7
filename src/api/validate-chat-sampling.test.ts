import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors.js';
import { parseJsonObject } from './parse-json-body.js';
import { validateChatRequest } from './validate-chat-request.js';
import { invalidRequestOf } from '../../test/helpers/invalid-request.js';

/** Through the JSON parser, as the server runs it: big integers are rounded there. */
const request = (fields: string) =>
  validateChatRequest(parseJsonObject(`{"model":"m","messages":[{"role":"user","content":"hi"}],${fields}}`));
const rejected = (fields: string): InvalidRequestError => invalidRequestOf(() => request(fields));

describe('seed', () => {
  it('takes any int64, as parsed: beyond 2^53 rounded to a double by JSON parsing', () => {
    expect(request('"seed":9007199254740993').seed).toBe(2 ** 53);
    expect(request('"seed":9223372036854775807').seed).toBe(2 ** 63);
    expect(request('"seed":-9223372036854775808').seed).toBe(-(2 ** 63));
    expect(request('"seed":4611686018427387904').seed).toBe(2 ** 62);
  });

  it('refuses what is beyond int64 or not an integer', () => {
    for (const seed of ['9223372036854777856', '-9223372036854777856', '18446744073709551615', '1e19']) {
      expect([rejected(`"seed":${seed}`).param, rejected(`"seed":${seed}`).code]).toStrictEqual(['seed', 'invalid_value']);
    }
    expect(rejected('"seed":0.5').code).toBe('invalid_type');
    expect(rejected('"seed":"7"').code).toBe('invalid_type');
  });
});

describe('n', () => {
  it('is 1, or a 400 that says why', () => {
    expect(request('"n":1').n).toBe(1);
    const unservable = rejected('"n":4');
    expect([unservable.param, unservable.code]).toStrictEqual(['n', 'unsupported_parameter']);
    expect(unservable.message).toContain('one choice per call');
    expect(rejected('"n":0').code).toBe('invalid_value');
    expect(rejected('"n":129').code).toBe('invalid_value');
  });
});

describe('logit_bias', () => {
  it("takes integers from -100 to 100 only, as OpenAI's schema says", () => {
    expect(request('"logit_bias":{"1":-100,"2":100}').logit_bias).toEqual({ 1: -100, 2: 100 });
    const fraction = rejected('"logit_bias":{"7":0.5}');
    expect([fraction.param, fraction.code]).toStrictEqual(['logit_bias.7', 'invalid_type']);
  });
});
