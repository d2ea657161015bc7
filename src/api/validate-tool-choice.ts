/**
 * `tool_choice` and the legacy `function_call`, after OpenAI's
 * `ChatCompletionToolChoiceOption`: "none", "auto", "required", a named
 * function or custom tool, or `allowed_tools`.
 *
 * A choice must name a tool the request offers, of the kind it says, and is
 * only allowed with tools (as OpenAI answers). Engines get one of the plain
 * forms: a named custom tool is a named function (custom tools are functions
 * to engines), and `allowed_tools` narrows `tools` to the allowed ones with
 * "auto" or "required" (an empty list with "auto" is "none").
 */
import type { FunctionTool, ToolChoice } from './chat-types.js';
import {
  arrayTooLongError,
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  missingParameterError,
  optionalEnum,
  ownField,
  quoteForMessage,
  requiredObject,
  requiredString,
  showValue,
} from './field-checks.js';
import { MAX_TOOLS, type OfferedTools } from './validate-chat-tools.js';

export interface CheckedToolChoice {
  choice: ToolChoice;
  /** `allowed_tools`: the tools left to offer, in the order of `tools`. */
  tools?: FunctionTool[];
}

const CHOICE_WORDS = "'auto', 'none', 'required'";

export function validateToolChoice(value: unknown, offered: OfferedTools | undefined): CheckedToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (offered === undefined) {
    throw invalidValueError('tool_choice', "'tool_choice' is only allowed when 'tools' are specified.");
  }
  if (value === 'auto' || value === 'none' || value === 'required') return { choice: value };
  if (typeof value === 'string') {
    throw invalidValueError('tool_choice', `expected ${CHOICE_WORDS} or a tool choice object, got ${quoteForMessage(value)}.`);
  }
  if (!isJsonObject(value)) {
    throw invalidTypeError('tool_choice', `${CHOICE_WORDS} or {"type": "function" | "custom" | "allowed_tools", …}`, value);
  }
  const type = ownField(value, 'type');
  switch (type) {
    case 'function':
    case 'custom': {
      const target = requiredObject(ownField(value, type), `tool_choice.${type}`, 'an object with a name');
      const name = requiredString(ownField(target, 'name'), `tool_choice.${type}.name`);
      checkOffered(offered, type, name, `tool_choice.${type}.name`);
      return { choice: { type: 'function', function: { name } } };
    }
    case 'allowed_tools':
      return allowedTools(requiredObject(ownField(value, 'allowed_tools'), 'tool_choice.allowed_tools'), offered);
  }
  if (type === undefined || type === null) throw missingParameterError('tool_choice.type');
  throw invalidValueError('tool_choice.type', `expected 'function', 'custom' or 'allowed_tools', got ${showValue(type)}.`);
}

/** Legacy `function_call`: "none", "auto" or `{name}`, choosing among the offered functions. */
export function validateFunctionCall(value: unknown, offered: OfferedTools | undefined): CheckedToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (offered === undefined) {
    throw invalidValueError('function_call', "'function_call' is only allowed when 'functions' are specified.");
  }
  if (value === 'auto' || value === 'none') return { choice: value };
  if (typeof value === 'string')
    throw invalidValueError('function_call', `expected 'auto', 'none' or {"name": …}, got ${quoteForMessage(value)}.`);
  if (!isJsonObject(value)) throw invalidTypeError('function_call', `'auto', 'none' or {"name": …}`, value);
  const name = requiredString(ownField(value, 'name'), 'function_call.name');
  checkOffered(offered, 'function', name, 'function_call.name');
  return { choice: { type: 'function', function: { name } } };
}

function allowedTools(allowed: Record<string, unknown>, offered: OfferedTools): CheckedToolChoice {
  const mode = optionalEnum(ownField(allowed, 'mode'), 'tool_choice.allowed_tools.mode', ['auto', 'required'] as const);
  if (mode === undefined) throw missingParameterError('tool_choice.allowed_tools.mode');
  const list = ownField(allowed, 'tools');
  const param = 'tool_choice.allowed_tools.tools';
  if (list === undefined || list === null) throw missingParameterError(param);
  if (!Array.isArray(list)) throw invalidTypeError(param, 'an array of tool references', list);
  if (list.length > MAX_TOOLS) throw arrayTooLongError(param, MAX_TOOLS, list.length);
  const names = new Set<string>();
  for (let index = 0; index < list.length; index++) {
    const reference: unknown = list[index];
    const itemParam = `${param}[${index}]`;
    if (!isJsonObject(reference))
      throw invalidTypeError(itemParam, 'a tool reference such as {"type": "function", "function": {"name": …}}', reference);
    const kind = optionalEnum(ownField(reference, 'type'), `${itemParam}.type`, ['function', 'custom'] as const);
    if (kind === undefined) throw missingParameterError(`${itemParam}.type`);
    const target = requiredObject(ownField(reference, kind), `${itemParam}.${kind}`, 'an object with a name');
    const name = requiredString(ownField(target, 'name'), `${itemParam}.${kind}.name`);
    checkOffered(offered, kind, name, `${itemParam}.${kind}.name`);
    names.add(name);
  }
  if (names.size === 0) {
    if (mode === 'required') throw invalidValueError(param, "mode 'required' needs at least one allowed tool, got [].");
    return { choice: 'none' };
  }
  return { choice: mode, tools: offered.tools.filter((tool) => names.has(tool.function.name)) };
}

/** The name must be an offered tool of that kind: a custom tool is chosen as custom, a function as function. */
function checkOffered(offered: OfferedTools, kind: 'function' | 'custom', name: string, param: string): void {
  const found = offered.tools.some((tool) => tool.function.name === name);
  if (!found) throw invalidValueError(param, `no tool named ${quoteForMessage(name)} is in 'tools'.`);
  const isCustom = offered.customTools.includes(name);
  if (isCustom !== (kind === 'custom')) {
    const other = isCustom ? 'custom' : 'function';
    throw invalidValueError(
      param,
      `${quoteForMessage(name)} is a ${other} tool; choose it with {"type": "${other}", "${other}": {"name": …}}.`,
    );
  }
}
