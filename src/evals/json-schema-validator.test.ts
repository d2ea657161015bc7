import { describe, expect, it } from 'vitest';
import { compileJsonSchema } from './json-schema-validator.js';

function validatorOf(schema: Record<string, unknown>, mode: 'lenient' | 'strict' = 'lenient'): (value: unknown) => string | null {
  const compiled = compileJsonSchema(schema, mode);
  if (!compiled.ok) throw new Error(`expected the schema to compile: ${compiled.error}`);
  return compiled.validate;
}

describe('compileJsonSchema', () => {
  it('validates and says where a value breaks the schema', () => {
    const validate = validatorOf({
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'string' } } },
      additionalProperties: false,
    });
    expect(validate({ items: ['a'] })).toBeNull();
    expect(validate({ items: ['a', 2] })).toBe('/items/1: must be string');
    expect(validate({ items: [], extra: 1 })).toBe('(root): must NOT have additional properties ("extra")');
  });

  it('compiles a schema once: the same JSON, in any key order, gives the cached validator', () => {
    const first = compileJsonSchema({ type: 'string', minLength: 2 });
    const second = compileJsonSchema({ minLength: 2, type: 'string' });
    expect(second).toBe(first);
    expect(compileJsonSchema({ type: 'string', minLength: 2 }, 'strict')).not.toBe(first);
  });

  it('keeps schemas that share an $id apart, and a meta-schema $id does not break later schemas', () => {
    const strings = validatorOf({ $id: 'https://example.com/thing', type: 'string' });
    const numbers = validatorOf({ $id: 'https://example.com/thing', type: 'number' });
    expect([strings('a'), numbers(1)]).toEqual([null, null]);
    expect(numbers('a')).toBe('(root): must be number');
    compileJsonSchema({ $id: 'http://json-schema.org/draft-07/schema#', type: 'string' });
    expect(compileJsonSchema({ type: 'strin' }).ok).toBe(false);
    expect(validatorOf({ type: 'integer' })(1.5)).toBe('(root): must be integer');
  });

  it('follows $schema for 2020-12 and 2019-09, and defaults to draft-07', () => {
    const tuple = validatorOf({ $schema: 'https://json-schema.org/draft/2020-12/schema', prefixItems: [{ type: 'string' }], items: false });
    expect(tuple(['a'])).toBeNull();
    expect(tuple(['a', 'b'])).not.toBeNull();
    const unevaluated = validatorOf({
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      properties: { a: {} },
      unevaluatedProperties: false,
    });
    expect(unevaluated({ b: 1 })).not.toBeNull();
    // draft-07 array-form items is a tuple.
    expect(validatorOf({ items: [{ type: 'string' }], additionalItems: false })(['a', 'b'])).not.toBeNull();
  });

  it('treats format as an annotation', () => {
    expect(validatorOf({ type: 'string', format: 'date-time' })('not a date')).toBeNull();
  });

  it('reports schemas that do not compile, naming the schema keyword', () => {
    const invalid = compileJsonSchema({ type: 'strin' });
    expect(invalid).toEqual({
      ok: false,
      error: expect.stringContaining('schema is invalid: schema/type must be equal to one of the allowed values'),
    });
    expect(compileJsonSchema({ $ref: 'https://example.com/remote.json' })).toEqual({
      ok: false,
      error: expect.stringContaining("can't resolve reference"),
    });
  });

  it('ignores unknown keywords when lenient and rejects them when strict', () => {
    expect(compileJsonSchema({ type: 'object', requred: ['a'] }).ok).toBe(true);
    expect(compileJsonSchema({ type: 'object', requred: ['a'] }, 'strict')).toEqual({
      ok: false,
      error: 'strict mode: unknown keyword: "requred"',
    });
    // Annotations and an applicator without "type" are fine in strict mode.
    expect(
      compileJsonSchema({ title: 't', description: 'd', examples: [1], default: 1, properties: { a: { type: 'string' } } }, 'strict').ok,
    ).toBe(true);
  });
});
