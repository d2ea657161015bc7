/**
 * OpenAI's chat-completions schemas (the fixture extracted from
 * openai/openai-openapi, see test/fixtures/openai-openapi/README.md) as JSON
 * Schema 2020-12 validators.
 *
 * The spec says `openapi: 3.1.0` but still uses OpenAPI 3.0's `nullable: true`
 * in places (`stop`, `usage` of a chunk, a chunk's `logprobs`); each is turned
 * into the 2020-12 form ("or null") here, so e.g. a chunk's `"usage": null`
 * validates as OpenAI means it to. Vendor keywords (`x-…`, `discriminator`,
 * `example`) are ignored.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type SchemaObject = { [key: string]: Json };

interface Fixture {
  source: { repository: string; path: string; commit: string };
  roots: string[];
  schemas: Record<string, SchemaObject>;
}

export const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/openai-openapi/chat-completions.schemas.json', import.meta.url), 'utf8'),
) as Fixture;

/** A URI as taskgate checks `image_url.url`: a scheme, then anything (RFC 3986's `scheme ":" …`). */
export const URI_PATTERN = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

/** `nullable: true` (OpenAPI 3.0) -> "or null" (JSON Schema 2020-12), everywhere. */
export function withoutNullable(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutNullable);
  if (value === null || typeof value !== 'object') return value;
  const converted: SchemaObject = {};
  for (const [key, inner] of Object.entries(value)) if (key !== 'nullable') converted[key] = withoutNullable(inner);
  if (value.nullable !== true) return converted;
  if (typeof converted.type === 'string' && converted.enum === undefined && converted.$ref === undefined) {
    return { ...converted, type: [converted.type, 'null'] };
  }
  return { anyOf: [converted, { type: 'null' }] };
}

/**
 * The schemas with "null means not sent" applied: every optional property of
 * every object also takes null. taskgate treats an explicit null as absent
 * for every optional field (SDKs and LangChain send them), so the request
 * oracle must too.
 */
export function withOptionalNulls(value: Json): Json {
  if (Array.isArray(value)) return value.map(withOptionalNulls);
  if (value === null || typeof value !== 'object') return value;
  const converted: SchemaObject = {};
  for (const [key, inner] of Object.entries(value)) converted[key] = withOptionalNulls(inner);
  const properties = converted.properties;
  if (properties !== null && typeof properties === 'object' && !Array.isArray(properties)) {
    const required = Array.isArray(value.required) ? value.required : [];
    const relaxed: SchemaObject = {};
    for (const [name, schema] of Object.entries(properties)) {
      relaxed[name] = required.includes(name) ? schema : { anyOf: [schema, { type: 'null' }] };
    }
    converted.properties = relaxed;
  }
  return converted;
}

function compile(schemas: Record<string, SchemaObject>, id: string): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  ajv.addFormat('uri', URI_PATTERN);
  ajv.addFormat('unixtime', { type: 'number', validate: (value: number) => Number.isInteger(value) && value >= 0 });
  ajv.addSchema({ $id: id, components: { schemas } });
  return ajv;
}

const strict = compile(withoutNullable(fixture.schemas) as Record<string, SchemaObject>, 'openai');
const lenient = compile(withOptionalNulls(withoutNullable(fixture.schemas)) as Record<string, SchemaObject>, 'openai-lenient');

export type SchemaName = 'CreateChatCompletionRequest' | 'CreateChatCompletionResponse' | 'CreateChatCompletionStreamResponse';

export function validatorFor(name: SchemaName): ValidateFunction {
  const validate = strict.getSchema(`openai#/components/schemas/${name}`);
  if (validate === undefined) throw new Error(`no schema ${name}`);
  return validate;
}

/** `CreateChatCompletionRequest` with optional fields also taking null (see `withOptionalNulls`). */
export const validateRequestLeniently: ValidateFunction = (() => {
  const validate = lenient.getSchema('openai-lenient#/components/schemas/CreateChatCompletionRequest');
  if (validate === undefined) throw new Error('no request schema');
  return validate;
})();

/** The validator's errors as one readable line, or null when `value` is valid. */
export function schemaErrors(name: SchemaName, value: unknown): string | null {
  const validate = validatorFor(name);
  if (validate(value)) return null;
  return (validate.errors ?? [])
    .map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`)
    .join('; ');
}
