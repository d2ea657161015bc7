/**
 * fast-check arbitraries generated from JSON Schema (the OpenAI fixture, after
 * `withoutNullable`): values valid by the schema, with every optional
 * property sometimes present. Understands what the chat-completions schemas
 * use: `$ref`, `allOf` of objects, `anyOf` / `oneOf`, `enum`, objects with
 * `properties` / `required` / `additionalProperties`, arrays with
 * `minItems` / `maxItems`, strings with `maxLength` and `format: uri`,
 * integers and numbers with bounds.
 *
 * Sizes are kept small (a few items, short strings), and `overrides` replace
 * the arbitrary at a path, for the rules the schema states only in prose
 * (function names, metadata sizes). A path is the schema's name, then
 * `.property` and `[]` for array items: `FunctionObject.name`,
 * `CreateChatCompletionRequest.messages`.
 */
import fc from 'fast-check';
import type { SchemaObject } from './openai-schemas.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = SchemaObject;

export interface SchemaArbitraryOptions {
  schemas: Record<string, Schema>;
  overrides?: Record<string, fc.Arbitrary<unknown>>;
  /** Probability that an optional property is present. */
  optionalRate?: number;
}

const REF_PREFIX = '#/components/schemas/';

/** Short strings of any code point (lone surrogates included: JSON escapes them), or plain ASCII. */
export function shortString(maxLength = 12): fc.Arbitrary<string> {
  return fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength }) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength }) });
}

/** Free-form JSON (tool parameters, schemas), shallow. */
export const smallJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;

export function uriArbitrary(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.webUrl(),
    fc.base64String({ maxLength: 24 }).map((data) => `data:image/png;base64,${data}`),
  );
}

export function schemaArbitrary(name: string, options: SchemaArbitraryOptions): fc.Arbitrary<unknown> {
  const optionalRate = options.optionalRate ?? 0.3;
  const overrides = options.overrides ?? {};
  const memo = new Map<string, fc.Arbitrary<unknown>>();

  function named(ref: string): fc.Arbitrary<unknown> {
    const cached = memo.get(ref);
    if (cached !== undefined) return cached;
    const schema = options.schemas[ref];
    if (schema === undefined) throw new Error(`unknown schema ${ref}`);
    // Lazy, so recursive schemas do not loop while building.
    const arbitrary = fc.constant(null).chain(() => build(schema, ref));
    memo.set(ref, arbitrary);
    return arbitrary;
  }

  function build(schema: Json, path: string): fc.Arbitrary<unknown> {
    const override = overrides[path];
    if (override !== undefined) return override;
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return smallJson;
    if (typeof schema.$ref === 'string') {
      const target = schema.$ref.slice(REF_PREFIX.length);
      return overrides[target] ?? named(target);
    }
    if (Array.isArray(schema.allOf)) {
      return fc.tuple(...schema.allOf.map((part) => build(part, path))).map((parts) => Object.assign({}, ...(parts as object[])));
    }
    const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
    if (branches !== undefined) {
      // Null branches are rare: most requests should carry real values.
      return fc.oneof(
        ...branches.map((branch) => ({
          weight: isNullSchema(branch) ? 1 : 4,
          arbitrary: build(branch, path),
        })),
      );
    }
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Json[]));
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
    if (types.length > 1) {
      return fc.oneof(...types.map((type) => ({ weight: type === 'null' ? 1 : 4, arbitrary: build({ ...schema, type }, path) })));
    }
    switch (types[0]) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return integerArbitrary(schema);
      case 'number':
        return fc.double({
          min: typeof schema.minimum === 'number' ? schema.minimum : -1e6,
          max: typeof schema.maximum === 'number' ? schema.maximum : 1e6,
          noNaN: true,
          noDefaultInfinity: true,
        });
      case 'string':
        if (schema.format === 'uri') return uriArbitrary();
        return shortString(typeof schema.maxLength === 'number' ? Math.min(schema.maxLength, 16) : 16);
      case 'array': {
        const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
        const maxLength = Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : minLength + 3, minLength + 3);
        return fc.array(build(schema.items ?? {}, `${path}[]`), { minLength, maxLength });
      }
      case 'object':
      default:
        if (schema.properties === undefined && types[0] === undefined) return smallJson;
        return objectArbitrary(schema, path);
    }
  }

  function objectArbitrary(schema: Schema, path: string): fc.Arbitrary<unknown> {
    const properties = (schema.properties ?? {}) as Record<string, Json>;
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const entries = Object.entries(properties).map(([key, inner]) => {
      const arbitrary = build(inner, `${path}.${key}`);
      return required.has(key)
        ? arbitrary.map((value) => [key, value] as const)
        : fc.oneof(
            { weight: Math.round((1 - optionalRate) * 10), arbitrary: fc.constant(undefined) },
            { weight: Math.round(optionalRate * 10), arbitrary: arbitrary.map((value) => [key, value] as const) },
          );
    });
    const fixed = fc.tuple(...entries).map((pairs) => Object.fromEntries(pairs.filter((pair) => pair !== undefined)));
    const extra = schema.additionalProperties;
    if (Object.keys(properties).length > 0 || extra === undefined || extra === false) return fixed;
    // A map (metadata, logit_bias) or a free-form object (tool parameters).
    const values = extra === true ? smallJson : build(extra, `${path}{}`);
    return fc.dictionary(shortString(8), values, { maxKeys: 3 });
  }

  return named(name);
}

function isNullSchema(schema: Json): boolean {
  return schema !== null && typeof schema === 'object' && !Array.isArray(schema) && schema.type === 'null';
}

function integerArbitrary(schema: Schema): fc.Arbitrary<number> {
  const minimum = typeof schema.minimum === 'number' ? schema.minimum : -(2 ** 40);
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : 2 ** 40;
  if (minimum >= -(2 ** 31) && maximum <= 2 ** 31 - 1) return fc.integer({ min: minimum, max: maximum });
  // Beyond 32 bits (int64 seeds): big integers, rounded to doubles as JSON parsing will.
  return fc.bigInt({ min: BigInt(Math.ceil(minimum)), max: BigInt(Math.floor(maximum)) }).map(Number);
}
