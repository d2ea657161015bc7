/**
 * `response_format`: text, json_object, or json_schema (OpenAI's
 * `ResponseFormatJsonSchema`, where `schema` is optional: without one the
 * reply is any JSON). The schema is free-form and passed on as parsed.
 */
import type { ResponseFormat } from './chat-types.js';
import {
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  missingParameterError,
  optionalBoolean,
  optionalString,
  ownField,
  requiredObject,
  showValue,
} from './field-checks.js';
import { checkedName, MAX_DESCRIPTION_LENGTH } from './validate-chat-tools.js';

type JsonSchemaFormat = Extract<ResponseFormat, { type: 'json_schema' }>['json_schema'];

export function validateResponseFormat(value: unknown): ResponseFormat | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw invalidTypeError('response_format', 'an object', value);
  const type = ownField(value, 'type');
  switch (type) {
    case 'text':
    case 'json_object':
      return { type };
    case 'json_schema':
      return { type, json_schema: validateJsonSchemaFormat(ownField(value, 'json_schema')) };
  }
  if (type === undefined || type === null) throw missingParameterError('response_format.type');
  throw invalidValueError('response_format.type', `expected 'text', 'json_object' or 'json_schema', got ${showValue(type)}.`);
}

function validateJsonSchemaFormat(value: unknown): JsonSchemaFormat {
  const definition = requiredObject(value, 'response_format.json_schema');
  const format: JsonSchemaFormat = { name: checkedName(ownField(definition, 'name'), 'response_format.json_schema.name') };
  const schema = ownField(definition, 'schema');
  if (schema !== undefined && schema !== null) {
    if (!isJsonObject(schema)) throw invalidTypeError('response_format.json_schema.schema', 'a JSON Schema object', schema);
    format.schema = schema;
  }
  const description = optionalString(
    ownField(definition, 'description'),
    'response_format.json_schema.description',
    MAX_DESCRIPTION_LENGTH,
  );
  if (description !== undefined) format.description = description;
  const strict = optionalBoolean(ownField(definition, 'strict'), 'response_format.json_schema.strict');
  if (strict !== undefined) format.strict = strict;
  return format;
}
