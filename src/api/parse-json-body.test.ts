import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors.js';
import { MAX_JSON_NESTING_DEPTH, parseJsonObject } from './parse-json-body.js';

function errorOf(run: () => unknown): InvalidRequestError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidRequestError) return error;
    throw error;
  }
  throw new Error('expected an InvalidRequestError, nothing was thrown');
}

const arrays = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const objects = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const chatWith = (field: string, value: string): string => `{"model":"m","messages":[{"role":"user","content":"hi"}],"${field}":${value}}`;

describe('parseJsonObject', () => {
  it('returns the parsed object', () => {
    expect(parseJsonObject(' {"model":"m","n":1}\n')).toEqual({ model: 'm', n: 1 });
  });

  it('ignores a leading byte-order mark', () => {
    expect(parseJsonObject('\uFEFF{"model":"m"}')).toEqual({ model: 'm' });
  });

  it.each(['', ' ', '\n\t\r  ', '\uFEFF'])('rejects the empty body %j', (text) => {
    const error = errorOf(() => parseJsonObject(text));
    expect(error.status).toBe(400);
    expect(error.code).toBe('empty_body');
    expect(error.message).toBe('Request body is empty; send a JSON object.');
    expect(error.param).toBeNull();
  });

  it.each(['{"model":', '{model:"m"}', "{'model':'m'}", '{"a":1,}', 'nul', '{"a":1}}', '{"a":"b\u0001"}', '{"a":"\\x"}'])(
    'rejects malformed JSON %j',
    (text) => {
      const error = errorOf(() => parseJsonObject(text));
      expect(error.status).toBe(400);
      expect(error.code).toBe('invalid_json');
      expect(error.message).toMatch(/^Request body is not valid JSON: /);
    },
  );

  it('does not echo a huge malformed body', () => {
    const text = `{"model":"${'x'.repeat(100_000)}" oops}`;
    const error = errorOf(() => parseJsonObject(text));
    expect(error.code).toBe('invalid_json');
    expect(error.message.length).toBeLessThan(300);
    const start = `x${'y'.repeat(200_000)}`;
    expect(errorOf(() => parseJsonObject(start)).message.length).toBeLessThan(300);
  });

  it.each([
    ['[]', 'an array'],
    ['[{"model":"m"}]', 'an array'],
    ['"text"', 'a string'],
    ['42', 'a number'],
    ['null', 'null'],
    ['true', 'a boolean'],
  ])('rejects the top-level value %s', (text, described) => {
    const error = errorOf(() => parseJsonObject(text));
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_body');
    expect(error.message).toBe(`Request body must be a JSON object, got ${described}.`);
  });
});

describe('parseJsonObject nesting depth', () => {
  it('accepts exactly the maximum depth and rejects one more', () => {
    expect(MAX_JSON_NESTING_DEPTH).toBe(64);
    // The body object is level 1, so the value may add 63 levels.
    expect(() => parseJsonObject(chatWith('metadata', arrays(63)))).not.toThrow();
    expect(() => parseJsonObject(chatWith('metadata', objects(63)))).not.toThrow();
    const error = errorOf(() => parseJsonObject(chatWith('metadata', arrays(64))));
    expect(error.status).toBe(400);
    expect(error.code).toBe('json_too_deep');
    expect(error.param).toBe('metadata');
  });

  it.each([10_000, 1_000_000])('rejects a top-level array %i deep, quickly', (depth) => {
    const text = arrays(depth);
    const started = performance.now();
    const error = errorOf(() => parseJsonObject(text));
    expect(error.status).toBe(400);
    expect(error.code).toBe('json_too_deep');
    expect(error.param).toBeNull();
    expect(error.message).toMatch(/more than 64 levels deep/);
    // Parsing 1,000,000 levels takes V8 about 0.5 s; the scan stops at level 65.
    expect(performance.now() - started).toBeLessThan(250);
  });

  it.each([10_000, 1_000_000])('names the top-level field of values %i deep', (depth) => {
    expect(errorOf(() => parseJsonObject(chatWith('metadata', arrays(depth)))).param).toBe('metadata');
    expect(errorOf(() => parseJsonObject(chatWith('logit_bias', objects(depth)))).param).toBe('logit_bias');
    const tools = `[{"type":"function","function":{"name":"f","parameters":${objects(depth)}}}]`;
    expect(errorOf(() => parseJsonObject(chatWith('tools', tools))).param).toBe('tools');
    const content = `[{"role":"user","content":[{"type":"image_url","image_url":${arrays(depth)}}]}]`;
    expect(errorOf(() => parseJsonObject(`{"model":"m","messages":${content}}`)).param).toBe('messages');
  });

  it('decodes an escaped field name for the error', () => {
    expect(errorOf(() => parseJsonObject(chatWith('meta\\u0064ata', arrays(100)))).param).toBe('metadata');
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const brackets = '['.repeat(10_000) + '{'.repeat(10_000);
    for (const content of [brackets, `\\"${brackets}`, `x\\\\${brackets}`, `\\\\\\"${brackets}\\\\`]) {
      const text = `{"model":"m","messages":[{"role":"user","content":"${content}"}]}`;
      expect(() => parseJsonObject(text)).not.toThrow();
    }
  });

  it('leaves an unterminated string full of brackets to the JSON parser', () => {
    const error = errorOf(() => parseJsonObject(`{"model":"${'['.repeat(1000)}`));
    expect(error.code).toBe('invalid_json');
  });

  it('agrees with the real depth on random documents (strings with brackets, quotes, backslashes)', () => {
    // mulberry32: a seeded generator, so a failure replays exactly.
    let seed = 12345;
    const random = (): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let mixed = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
      return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
    };
    const pieces = ['[', ']', '{', '}', '"', '\\', 'a', ':'];
    const randomString = (): string => {
      let text = '';
      const length = Math.floor(random() * 6);
      for (let index = 0; index < length; index++) text += pieces[Math.floor(random() * pieces.length)];
      return text;
    };
    const build = (depth: number): unknown => {
      if (depth === 0 || random() < 0.01) return randomString();
      // Mostly one child per level, so documents reach the target depth without growing exponentially.
      const children = random() < 0.04 ? 2 : 1;
      if (random() < 0.5) return Array.from({ length: children }, () => build(depth - 1));
      const object: Record<string, unknown> = {};
      for (let index = 0; index < children; index++) object[randomString() + index] = build(depth - 1);
      return object;
    };
    const depthOf = (value: unknown): number => {
      if (value === null || typeof value !== 'object') return 0;
      const children = Array.isArray(value) ? value : Object.values(value);
      return 1 + Math.max(0, ...children.map(depthOf));
    };
    let accepted = 0;
    let rejected = 0;
    for (let trial = 0; trial < 300; trial++) {
      const value = { model: randomString(), payload: build(55 + Math.floor(random() * 20)) };
      const text = JSON.stringify(value);
      if (depthOf(value) <= MAX_JSON_NESTING_DEPTH) {
        expect(JSON.stringify(parseJsonObject(text))).toBe(text);
        accepted++;
      } else {
        expect(errorOf(() => parseJsonObject(text)).param).toBe('payload');
        rejected++;
      }
    }
    expect(accepted).toBeGreaterThan(20);
    expect(rejected).toBeGreaterThan(20);
  });
});

describe('parseJsonObject and __proto__', () => {
  it('keeps a "__proto__" key as an own data property and pollutes nothing', () => {
    const parsed = parseJsonObject('{"__proto__":{"polluted":true},"a":{"__proto__":{"polluted":true}}}');
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true);
    expect(Object.keys(parsed)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});
