/**
 * `tools` (function and custom tools) and the legacy `functions` of a chat
 * request, after OpenAI's `ChatCompletionTool`, `CustomToolChatCompletions`
 * and `ChatCompletionFunctions`.
 *
 * Engines are offered function tools only:
 *   - a custom tool (free-form text input) becomes a function taking one
 *     string, `input`; its grammar, if any, is written into that parameter's
 *     description for the model to follow, not enforced. The reply gives its
 *     calls back as custom calls (`chat-reply.ts`);
 *   - legacy `functions` become function tools after any `tools`.
 * All names share one namespace (they all become functions), follow OpenAI's
 * function-name rule, and must differ.
 *
 * Tool `parameters` are free-form JSON Schema: checked to be objects and passed
 * on as parsed (their depth is bounded by the body parser). They are never
 * copied by spread or Object.assign, so a `"__proto__"` property in a schema
 * stays a plain data property and is sent on to the engine as the caller
 * wrote it.
 */
import type { FunctionTool } from './chat-types.js';
import { InvalidRequestError } from './errors.js';
import {
  arrayTooLongError,
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  missingParameterError,
  optionalBoolean,
  optionalEnum,
  optionalString,
  ownField,
  quoteForMessage,
  requiredObject,
  requiredString,
  showValue,
} from './field-checks.js';

export const MAX_TOOLS = 128;
export const MAX_DESCRIPTION_LENGTH = 100_000;
/** OpenAI's rule for function and response-schema names (from the schema's descriptions). */
export const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** The tools a request offers, all as functions, and which of them are custom tools. */
export interface OfferedTools {
  tools: FunctionTool[];
  customTools: string[];
}

/** An empty `tools` array counts as none (some clients always send the field). */
export function validateTools(value: unknown): OfferedTools | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidTypeError('tools', 'an array of tools', value);
  if (value.length === 0) return undefined;
  if (value.length > MAX_TOOLS) throw arrayTooLongError('tools', MAX_TOOLS, value.length);
  const offered: OfferedTools = { tools: [], customTools: [] };
  for (let index = 0; index < value.length; index++) {
    const raw: unknown = value[index];
    if (!isJsonObject(raw)) throw invalidTypeError(`tools[${index}]`, 'a tool object', raw);
    const type = ownField(raw, 'type');
    if (type === 'function') {
      addTool(
        offered,
        functionTool(requiredObject(ownField(raw, 'function'), `tools[${index}].function`), `tools[${index}].function`),
        `tools[${index}].function.name`,
      );
    } else if (type === 'custom') {
      const tool = customTool(requiredObject(ownField(raw, 'custom'), `tools[${index}].custom`), `tools[${index}].custom`);
      addTool(offered, tool, `tools[${index}].custom.name`);
      offered.customTools.push(tool.function.name);
    } else {
      if (type === undefined || type === null) throw missingParameterError(`tools[${index}].type`);
      throw invalidValueError(`tools[${index}].type`, `expected 'function' or 'custom', got ${showValue(type)}.`);
    }
  }
  return offered;
}

/**
 * The legacy `functions` (1 to 128), added to `offered` as function tools.
 * Returns the tools now offered.
 */
export function addLegacyFunctions(value: unknown, offered: OfferedTools | undefined): OfferedTools | undefined {
  if (value === undefined || value === null) return offered;
  if (!Array.isArray(value)) throw invalidTypeError('functions', 'an array of functions', value);
  if (value.length === 0) throw invalidValueError('functions', 'expected at least 1 function, got []; leave the field out instead.');
  if (value.length > MAX_TOOLS) throw arrayTooLongError('functions', MAX_TOOLS, value.length);
  const result: OfferedTools =
    offered === undefined ? { tools: [], customTools: [] } : { tools: [...offered.tools], customTools: offered.customTools };
  if (result.tools.length + value.length > MAX_TOOLS) {
    throw invalidValueError(
      'functions',
      `expected at most ${MAX_TOOLS} tools and functions together, got ${result.tools.length + value.length}.`,
    );
  }
  for (let index = 0; index < value.length; index++) {
    const raw: unknown = value[index];
    if (!isJsonObject(raw)) throw invalidTypeError(`functions[${index}]`, 'a function object', raw);
    addTool(result, functionTool(raw, `functions[${index}]`, false), `functions[${index}].name`);
  }
  return result;
}

function addTool(offered: OfferedTools, tool: FunctionTool, nameParam: string): void {
  // Two tools of one name make the model's calls ambiguous.
  for (const earlier of offered.tools) {
    if (earlier.function.name === tool.function.name) {
      throw invalidValueError(nameParam, `the name '${tool.function.name}' is used by more than one tool.`);
    }
  }
  offered.tools.push(tool);
}

/** A function definition (`tools[i].function`, or a legacy `functions[i]`, which has no `strict`). */
function functionTool(definition: Record<string, unknown>, param: string, takesStrict = true): FunctionTool {
  const tool: FunctionTool = { type: 'function', function: { name: checkedName(ownField(definition, 'name'), `${param}.name`) } };
  const description = optionalString(ownField(definition, 'description'), `${param}.description`, MAX_DESCRIPTION_LENGTH);
  if (description !== undefined) tool.function.description = description;
  const parameters = ownField(definition, 'parameters');
  if (parameters !== undefined && parameters !== null) {
    if (!isJsonObject(parameters)) throw invalidTypeError(`${param}.parameters`, 'a JSON Schema object', parameters);
    tool.function.parameters = parameters;
  }
  if (takesStrict) {
    const strict = optionalBoolean(ownField(definition, 'strict'), `${param}.strict`);
    if (strict !== undefined) tool.function.strict = strict;
  }
  return tool;
}

/** A custom tool as a function taking one string, `input`. */
function customTool(definition: Record<string, unknown>, param: string): FunctionTool {
  const name = checkedName(ownField(definition, 'name'), `${param}.name`);
  const input: Record<string, unknown> = { type: 'string' };
  const rule = formatRule(ownField(definition, 'format'), `${param}.format`);
  input.description = rule ?? 'The input, as free-form text.';
  const tool: FunctionTool = {
    type: 'function',
    function: { name, parameters: { type: 'object', properties: { input }, required: ['input'], additionalProperties: false } },
  };
  const description = optionalString(ownField(definition, 'description'), `${param}.description`, MAX_DESCRIPTION_LENGTH);
  if (description !== undefined) tool.function.description = description;
  return tool;
}

/** A custom tool's `format` (text, or a Lark or regex grammar) as an instruction; undefined for free text. */
function formatRule(value: unknown, param: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const format = requiredObject(value, param);
  const type = optionalEnum(ownField(format, 'type'), `${param}.type`, ['text', 'grammar'] as const);
  if (type === undefined) throw missingParameterError(`${param}.type`);
  // Both formats are closed objects in OpenAI's schema (`additionalProperties: false`).
  for (const key of Object.keys(format)) {
    if (key !== 'type' && !(type === 'grammar' && key === 'grammar')) {
      const shown = key.length > 64 ? `${key.slice(0, 64)}…` : key;
      throw new InvalidRequestError(`Unrecognized argument supplied: ${param}.${shown}`, `${param}.${shown}`, 'unknown_parameter');
    }
  }
  if (type === 'text') return undefined;
  const grammar = requiredObject(ownField(format, 'grammar'), `${param}.grammar`);
  const definition = requiredString(ownField(grammar, 'definition'), `${param}.grammar.definition`);
  const syntax = optionalEnum(ownField(grammar, 'syntax'), `${param}.grammar.syntax`, ['lark', 'regex'] as const);
  if (syntax === undefined) throw missingParameterError(`${param}.grammar.syntax`);
  return `The input must match this ${syntax === 'regex' ? 'regular expression' : 'Lark grammar'}:\n${definition}`;
}

export function checkedName(value: unknown, param: string): string {
  if (typeof value === 'string' && value.length <= 64 && FUNCTION_NAME_PATTERN.test(value)) return value;
  if (value === undefined || value === null) throw missingParameterError(param);
  if (typeof value !== 'string') throw invalidTypeError(param, 'a string', value);
  throw invalidValueError(param, `expected a name matching ${FUNCTION_NAME_PATTERN.source}, got ${quoteForMessage(value)}.`);
}
