/**
 * `messages` of a chat request -> trusted `ChatMessage[]`, after OpenAI's
 * `ChatCompletionRequestMessage` (the six roles, and the content parts each
 * takes: `validate-content-parts.ts`).
 *
 * Each message is rebuilt from the fields taskgate knows. Fields it does not
 * know are allowed (SDKs add some) but dropped, so nothing unchecked reaches
 * an engine. Translations, so engines see one form:
 *   - a custom tool call `{type: "custom", custom: {name, input}}` becomes a
 *     function call with arguments `{"input": …}` (how custom tools are
 *     offered to engines, see `validate-chat-tools.ts`);
 *   - an assistant's legacy `function_call` becomes its one tool call, with
 *     the id `call_legacy_<message index>` (ignored when the message also has
 *     `tool_calls`);
 *   - a legacy `function` message becomes a `tool` message answering the
 *     latest earlier call of that function (or, with none, an id of its own:
 *     engines then read it as a result no call asked for);
 *   - an assistant's `refusal`, when it has no content, becomes its content;
 *     its `audio` (a reference to an earlier audio reply, which taskgate never
 *     makes) is ignored.
 */
import type { ChatMessage, Role, ToolCall } from './chat-types.js';
import {
  arrayTooLongError,
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  missingParameterError,
  optionalString,
  ownField,
  requiredObject,
  requiredString,
  showValue,
} from './field-checks.js';
import { validateContent } from './validate-content-parts.js';

export const MAX_MESSAGES = 4096;
/** Tool calls in one assistant message; far above what any model emits. */
export const MAX_TOOL_CALLS_PER_MESSAGE = 1024;
const MAX_NAME_LENGTH = 256;

const ROLE_LIST = "'system', 'developer', 'user', 'assistant', 'tool', 'function'";

/** `ignored` collects the names of fields that were accepted and set aside. */
export function validateMessages(value: unknown, ignored: string[] = []): ChatMessage[] {
  if (value === undefined || value === null) throw missingParameterError('messages');
  if (!Array.isArray(value)) throw invalidTypeError('messages', 'an array of message objects', value);
  if (value.length === 0) throw invalidValueError('messages', 'expected a non-empty array of messages, got [].');
  if (value.length > MAX_MESSAGES) throw arrayTooLongError('messages', MAX_MESSAGES, value.length);
  const messages: ChatMessage[] = [];
  for (let index = 0; index < value.length; index++) messages.push(validateMessage(value[index], index, messages, ignored));
  return messages;
}

function validateMessage(raw: unknown, index: number, earlier: readonly ChatMessage[], ignored: string[]): ChatMessage {
  if (!isJsonObject(raw)) throw invalidTypeError(`messages[${index}]`, 'a message object', raw);
  const role = validateRole(ownField(raw, 'role'), index);
  if (role === 'function') return functionMessage(raw, index, earlier);
  if (role === 'assistant') return assistantMessage(raw, index, ignored);

  const content = ownField(raw, 'content');
  if (content === undefined || content === null) throw missingParameterError(`messages[${index}].content`);
  const message: ChatMessage = { role, content: validateContent(content, index, role, ignored) };
  const name = ownField(raw, 'name');
  if (name !== undefined && name !== null) message.name = optionalString(name, `messages[${index}].name`, MAX_NAME_LENGTH)!;
  if (role === 'tool') {
    const toolCallId = ownField(raw, 'tool_call_id');
    message.tool_call_id = typeof toolCallId === 'string' ? toolCallId : requiredString(toolCallId, `messages[${index}].tool_call_id`);
  }
  return message;
}

function assistantMessage(raw: Record<string, unknown>, index: number, ignored: string[]): ChatMessage {
  let toolCalls = validateToolCalls(ownField(raw, 'tool_calls'), index);
  const functionCall = ownField(raw, 'function_call');
  if (functionCall !== undefined && functionCall !== null) {
    const call = legacyCall(functionCall, index);
    if (toolCalls === undefined) toolCalls = [call];
    else if (!ignored.includes('messages[].function_call')) ignored.push('messages[].function_call');
  }

  const rawContent = ownField(raw, 'content');
  let content = rawContent === undefined || rawContent === null ? null : validateContent(rawContent, index, 'assistant', ignored);
  const refusal = ownField(raw, 'refusal');
  if (refusal !== undefined && refusal !== null) {
    const checked = optionalString(refusal, `messages[${index}].refusal`, Number.MAX_SAFE_INTEGER)!;
    if (content === null) content = checked;
  }
  const audio = ownField(raw, 'audio');
  if (audio !== undefined && audio !== null) {
    requiredString(ownField(requiredObject(audio, `messages[${index}].audio`), 'id'), `messages[${index}].audio.id`);
    if (!ignored.includes('messages[].audio')) ignored.push('messages[].audio');
  }

  const message: ChatMessage = { role: 'assistant', content };
  const name = ownField(raw, 'name');
  if (name !== undefined && name !== null) message.name = optionalString(name, `messages[${index}].name`, MAX_NAME_LENGTH)!;
  if (toolCalls !== undefined) message.tool_calls = toolCalls;
  return message;
}

/** Legacy `{role: "function", name, content}`: a tool message answering the latest earlier call of that function. */
function functionMessage(raw: Record<string, unknown>, index: number, earlier: readonly ChatMessage[]): ChatMessage {
  const name = requiredString(ownField(raw, 'name'), `messages[${index}].name`);
  const content = ownField(raw, 'content');
  // OpenAI's schema requires the field, though it may be null.
  if (content === undefined) throw missingParameterError(`messages[${index}].content`, ' It may be null on a function message.');
  if (content !== null && typeof content !== 'string') {
    throw invalidTypeError(`messages[${index}].content`, 'a string or null', content);
  }
  return { role: 'tool', content: content ?? '', tool_call_id: latestCallOf(earlier, name) ?? `call_legacy_${index}` };
}

function latestCallOf(messages: readonly ChatMessage[], name: string): string | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const calls = messages[index]!.tool_calls;
    if (calls === undefined) continue;
    for (let callIndex = calls.length - 1; callIndex >= 0; callIndex--) {
      if (calls[callIndex]!.function.name === name) return calls[callIndex]!.id;
    }
  }
  return undefined;
}

function legacyCall(value: unknown, index: number): ToolCall {
  const param = `messages[${index}].function_call`;
  const call = requiredObject(value, param, 'an object with name and arguments');
  const name = requiredString(ownField(call, 'name'), `${param}.name`);
  const functionArguments = requiredString(ownField(call, 'arguments'), `${param}.arguments`);
  return { id: `call_legacy_${index}`, type: 'function', function: { name, arguments: functionArguments } };
}

function validateRole(value: unknown, index: number): Role | 'function' {
  switch (value) {
    case 'system':
    case 'developer':
    case 'user':
    case 'assistant':
    case 'tool':
    case 'function':
      return value;
  }
  const param = `messages[${index}].role`;
  if (value === undefined || value === null) throw missingParameterError(param);
  if (typeof value !== 'string') throw invalidTypeError(param, `one of ${ROLE_LIST}`, value);
  throw invalidValueError(param, `expected one of ${ROLE_LIST}, got ${showValue(value)}.`);
}

/** Assistant `tool_calls`; an empty array (some SDKs send one) counts as none. */
function validateToolCalls(value: unknown, index: number): ToolCall[] | undefined {
  if (value === undefined || value === null) return undefined;
  const param = `messages[${index}].tool_calls`;
  if (!Array.isArray(value)) throw invalidTypeError(param, 'an array of tool calls', value);
  if (value.length === 0) return undefined;
  if (value.length > MAX_TOOL_CALLS_PER_MESSAGE) throw arrayTooLongError(param, MAX_TOOL_CALLS_PER_MESSAGE, value.length);
  const toolCalls: ToolCall[] = [];
  for (let callIndex = 0; callIndex < value.length; callIndex++) {
    toolCalls.push(plainFunctionCall(value[callIndex]) ?? validateToolCall(value[callIndex], `${param}[${callIndex}]`));
  }
  return toolCalls;
}

/** The common case, a well-formed function call, checked without building any error path. */
function plainFunctionCall(raw: unknown): ToolCall | undefined {
  if (!isJsonObject(raw) || ownField(raw, 'type') !== 'function') return undefined;
  const id = ownField(raw, 'id');
  const call = ownField(raw, 'function');
  if (typeof id !== 'string' || !isJsonObject(call)) return undefined;
  const name = ownField(call, 'name');
  const functionArguments = ownField(call, 'arguments');
  if (typeof name !== 'string' || typeof functionArguments !== 'string') return undefined;
  return { id, type: 'function', function: { name, arguments: functionArguments } };
}

function validateToolCall(raw: unknown, param: string): ToolCall {
  if (!isJsonObject(raw)) throw invalidTypeError(param, 'a tool call object', raw);
  const id = requiredString(ownField(raw, 'id'), `${param}.id`);
  const type = ownField(raw, 'type');
  if (type === 'function') {
    const call = requiredObject(ownField(raw, 'function'), `${param}.function`, 'an object with name and arguments');
    const name = requiredString(ownField(call, 'name'), `${param}.function.name`);
    return {
      id,
      type: 'function',
      function: { name, arguments: requiredString(ownField(call, 'arguments'), `${param}.function.arguments`) },
    };
  }
  if (type === 'custom') {
    const call = requiredObject(ownField(raw, 'custom'), `${param}.custom`, 'an object with name and input');
    const name = requiredString(ownField(call, 'name'), `${param}.custom.name`);
    const input = requiredString(ownField(call, 'input'), `${param}.custom.input`);
    return { id, type: 'function', function: { name, arguments: JSON.stringify({ input }) } };
  }
  if (type === undefined || type === null) throw missingParameterError(`${param}.type`);
  throw invalidValueError(`${param}.type`, `expected 'function' or 'custom', got ${showValue(type)}.`);
}
