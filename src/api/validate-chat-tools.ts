/**
 * `tools`, `tool_choice` and `response_format` of a chat request.
 *
 * Tool `parameters` and response schemas are free-form JSON Schema: they are
 * checked to be objects and passed on as parsed (their depth is bounded by the
 * body parser). They are never copied by spread or Object.assign, so a
 * `"__proto__"` property in a schema stays a plain data property and is sent
 * on to the engine as the caller wrote it.
 */
import type { FunctionTool, ResponseFormat, ToolChoice } from './chat-types.js';
import {
  arrayTooLongError,
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  missingParameterError,
  optionalBoolean,
  optionalString,
  ownField,
  quoteForMessage,
  showValue,
} from './field-checks.js';

export const MAX_TOOLS = 128;
const MAX_DESCRIPTION_LENGTH = 100_000;
/** OpenAI's rule for function and response-schema names. */
const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** An empty `tools` array counts as none (some clients always send the field). */
export function validateTools(value: unknown): FunctionTool[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidTypeError('tools', 'an array of tools', value);
  if (value.length === 0) return undefined;
  if (value.length > MAX_TOOLS) throw arrayTooLongError('tools', MAX_TOOLS, value.length);
  const tools: FunctionTool[] = [];
  for (let index = 0; index < value.length; index++) {
    const tool = validateTool(value[index], index);
    // Two tools of one name make the model's calls ambiguous.
    for (const earlier of tools) {
      if (earlier.function.name === tool.function.name) {
        throw invalidValueError(`tools[${index}].function.name`, `the name '${tool.function.name}' is used by more than one tool.`);
      }
    }
    tools.push(tool);
  }
  return tools;
}

function validateTool(raw: unknown, index: number): FunctionTool {
  if (!isJsonObject(raw)) throw invalidTypeError(`tools[${index}]`, 'a tool object', raw);
  const type = ownField(raw, 'type');
  if (type !== 'function') {
    if (type === undefined || type === null) throw missingParameterError(`tools[${index}].type`);
    throw invalidValueError(`tools[${index}].type`, `expected 'function', got ${showValue(type)}.`);
  }
  const definition = ownField(raw, 'function');
  if (!isJsonObject(definition)) {
    if (definition === undefined || definition === null) throw missingParameterError(`tools[${index}].function`);
    throw invalidTypeError(`tools[${index}].function`, 'an object', definition);
  }
  const name = checkedName(ownField(definition, 'name'), `tools[${index}].function.name`);
  const tool: FunctionTool = { type: 'function', function: { name } };
  const description = optionalString(ownField(definition, 'description'), `tools[${index}].function.description`, MAX_DESCRIPTION_LENGTH);
  if (description !== undefined) tool.function.description = description;
  const parameters = ownField(definition, 'parameters');
  if (parameters !== undefined && parameters !== null) {
    if (!isJsonObject(parameters)) throw invalidTypeError(`tools[${index}].function.parameters`, 'a JSON Schema object', parameters);
    tool.function.parameters = parameters;
  }
  const strict = optionalBoolean(ownField(definition, 'strict'), `tools[${index}].function.strict`);
  if (strict !== undefined) tool.function.strict = strict;
  return tool;
}

export function validateToolChoice(value: unknown, tools: FunctionTool[] | undefined): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (tools === undefined) {
    throw invalidValueError('tool_choice', "'tool_choice' is only allowed when 'tools' are specified.");
  }
  if (value === 'auto' || value === 'none' || value === 'required') return value;
  if (typeof value === 'string') {
    throw invalidValueError('tool_choice', `expected 'auto', 'none', 'required' or a function choice object, got ${quoteForMessage(value)}.`);
  }
  if (!isJsonObject(value)) {
    throw invalidTypeError('tool_choice', "'auto', 'none', 'required' or {\"type\": \"function\", \"function\": {\"name\": …}}", value);
  }
  const type = ownField(value, 'type');
  if (type !== 'function') {
    if (type === undefined || type === null) throw missingParameterError('tool_choice.type');
    throw invalidValueError('tool_choice.type', `expected 'function', got ${showValue(type)}.`);
  }
  const definition = ownField(value, 'function');
  if (!isJsonObject(definition)) {
    if (definition === undefined || definition === null) throw missingParameterError('tool_choice.function');
    throw invalidTypeError('tool_choice.function', 'an object with a name', definition);
  }
  const name = ownField(definition, 'name');
  if (typeof name !== 'string') {
    if (name === undefined || name === null) throw missingParameterError('tool_choice.function.name');
    throw invalidTypeError('tool_choice.function.name', 'a string', name);
  }
  for (const tool of tools) {
    if (tool.function.name === name) return { type: 'function', function: { name } };
  }
  throw invalidValueError('tool_choice.function.name', `no tool named ${quoteForMessage(name)} is in 'tools'.`);
}

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

function validateJsonSchemaFormat(value: unknown): Extract<ResponseFormat, { type: 'json_schema' }>['json_schema'] {
  if (!isJsonObject(value)) {
    if (value === undefined || value === null) throw missingParameterError('response_format.json_schema');
    throw invalidTypeError('response_format.json_schema', 'an object', value);
  }
  const name = checkedName(ownField(value, 'name'), 'response_format.json_schema.name');
  const schema = ownField(value, 'schema');
  if (!isJsonObject(schema)) {
    if (schema === undefined || schema === null) throw missingParameterError('response_format.json_schema.schema');
    throw invalidTypeError('response_format.json_schema.schema', 'a JSON Schema object', schema);
  }
  const format: Extract<ResponseFormat, { type: 'json_schema' }>['json_schema'] = { name, schema };
  const description = optionalString(ownField(value, 'description'), 'response_format.json_schema.description', MAX_DESCRIPTION_LENGTH);
  if (description !== undefined) format.description = description;
  const strict = optionalBoolean(ownField(value, 'strict'), 'response_format.json_schema.strict');
  if (strict !== undefined) format.strict = strict;
  return format;
}

function checkedName(value: unknown, param: string): string {
  if (typeof value === 'string' && value.length <= 64 && FUNCTION_NAME_PATTERN.test(value)) return value;
  if (value === undefined || value === null) throw missingParameterError(param);
  if (typeof value !== 'string') throw invalidTypeError(param, 'a string', value);
  throw invalidValueError(param, `expected a name matching ${FUNCTION_NAME_PATTERN.source}, got ${quoteForMessage(value)}.`);
}
