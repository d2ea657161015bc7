/**
 * `messages` of a chat request -> trusted `ChatMessage[]`.
 *
 * Each message is rebuilt from the fields taskgate knows. Fields it does not
 * know are allowed (SDKs add some, e.g. `refusal` or `audio` on replayed
 * assistant messages) but dropped, so nothing unchecked reaches an engine.
 * Non-text content parts (images, audio, files) are the exception: their
 * inner fields are the payload, so they pass through as parsed, after the
 * body parser bounded their depth.
 */
import type { ChatMessage, ContentPart, Role, ToolCall } from './chat-types.js';
import {
  arrayTooLongError,
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  missingParameterError,
  optionalString,
  ownField,
  showValue,
} from './field-checks.js';

export const MAX_MESSAGES = 4096;
/** Tool calls in one assistant message; far above what any model emits. */
export const MAX_TOOL_CALLS_PER_MESSAGE = 1024;
const MAX_NAME_LENGTH = 256;

const ROLE_LIST = "'system', 'developer', 'user', 'assistant', 'tool'";

export function validateMessages(value: unknown): ChatMessage[] {
  if (value === undefined || value === null) throw missingParameterError('messages');
  if (!Array.isArray(value)) throw invalidTypeError('messages', 'an array of message objects', value);
  if (value.length === 0) throw invalidValueError('messages', 'expected a non-empty array of messages, got [].');
  if (value.length > MAX_MESSAGES) throw arrayTooLongError('messages', MAX_MESSAGES, value.length);
  const messages: ChatMessage[] = [];
  for (let index = 0; index < value.length; index++) messages.push(validateMessage(value[index], index));
  return messages;
}

function validateMessage(raw: unknown, index: number): ChatMessage {
  if (!isJsonObject(raw)) throw invalidTypeError(`messages[${index}]`, 'a message object', raw);
  const role = validateRole(ownField(raw, 'role'), index);

  let toolCalls: ToolCall[] | undefined;
  if (role === 'assistant') toolCalls = validateToolCalls(ownField(raw, 'tool_calls'), index);

  const rawContent = ownField(raw, 'content');
  let content: ChatMessage['content'];
  if (rawContent === undefined || rawContent === null) {
    if (toolCalls === undefined) {
      throw missingParameterError(
        `messages[${index}].content`,
        ' Content may be null or absent only on an assistant message that has tool_calls.',
      );
    }
    content = null;
  } else {
    content = validateContent(rawContent, index);
  }

  const message: ChatMessage = { role, content };
  const name = optionalString(ownField(raw, 'name'), `messages[${index}].name`, MAX_NAME_LENGTH);
  if (name !== undefined) message.name = name;
  if (toolCalls !== undefined) message.tool_calls = toolCalls;
  if (role === 'tool') {
    const toolCallId = ownField(raw, 'tool_call_id');
    if (toolCallId === undefined || toolCallId === null) throw missingParameterError(`messages[${index}].tool_call_id`);
    if (typeof toolCallId !== 'string') throw invalidTypeError(`messages[${index}].tool_call_id`, 'a string', toolCallId);
    message.tool_call_id = toolCallId;
  }
  return message;
}

function validateRole(value: unknown, index: number): Role {
  switch (value) {
    case 'system':
    case 'developer':
    case 'user':
    case 'assistant':
    case 'tool':
      return value;
  }
  const param = `messages[${index}].role`;
  if (value === undefined || value === null) throw missingParameterError(param);
  if (typeof value !== 'string') throw invalidTypeError(param, `one of ${ROLE_LIST}`, value);
  throw invalidValueError(param, `expected one of ${ROLE_LIST}, got ${showValue(value)}.`);
}

function validateContent(value: unknown, index: number): string | ContentPart[] {
  // NUL and other control characters are valid in JSON strings; they are kept as sent.
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) {
    throw invalidTypeError(`messages[${index}].content`, 'a string or an array of content parts', value);
  }
  if (value.length === 0) {
    throw invalidValueError(`messages[${index}].content`, 'expected a string or a non-empty array of content parts, got [].');
  }
  const parts: ContentPart[] = [];
  for (let partIndex = 0; partIndex < value.length; partIndex++) {
    const part: unknown = value[partIndex];
    if (!isJsonObject(part)) throw invalidTypeError(`messages[${index}].content[${partIndex}]`, 'a content part object', part);
    const type = ownField(part, 'type');
    if (typeof type !== 'string' || type.length === 0) {
      const param = `messages[${index}].content[${partIndex}].type`;
      if (type === undefined || type === null) throw missingParameterError(param);
      throw invalidTypeError(param, 'a non-empty string', type);
    }
    if (type === 'text') {
      const text = ownField(part, 'text');
      if (typeof text !== 'string') {
        const param = `messages[${index}].content[${partIndex}].text`;
        if (text === undefined || text === null) throw missingParameterError(param);
        throw invalidTypeError(param, 'a string', text);
      }
      parts.push({ type: 'text', text });
    } else {
      // The object itself, not a copy: copying with spread or Object.assign
      // would run the `__proto__` setter for a `"__proto__"` key.
      parts.push(part as ContentPart);
    }
  }
  return parts;
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
    toolCalls.push(validateToolCall(value[callIndex], index, callIndex));
  }
  return toolCalls;
}

function validateToolCall(raw: unknown, index: number, callIndex: number): ToolCall {
  if (!isJsonObject(raw)) throw invalidTypeError(`messages[${index}].tool_calls[${callIndex}]`, 'a tool call object', raw);
  const id = requiredString(ownField(raw, 'id'), index, callIndex, 'id');
  const type = ownField(raw, 'type');
  if (type !== 'function') {
    const param = `messages[${index}].tool_calls[${callIndex}].type`;
    if (type === undefined || type === null) throw missingParameterError(param);
    throw invalidValueError(param, `expected 'function', got ${showValue(type)}.`);
  }
  const functionCall = ownField(raw, 'function');
  if (!isJsonObject(functionCall)) {
    const param = `messages[${index}].tool_calls[${callIndex}].function`;
    if (functionCall === undefined || functionCall === null) throw missingParameterError(param);
    throw invalidTypeError(param, 'an object with name and arguments', functionCall);
  }
  const name = requiredString(ownField(functionCall, 'name'), index, callIndex, 'function.name');
  const functionArguments = requiredString(ownField(functionCall, 'arguments'), index, callIndex, 'function.arguments');
  return { id, type: 'function', function: { name, arguments: functionArguments } };
}

function requiredString(value: unknown, index: number, callIndex: number, field: string): string {
  if (typeof value === 'string') return value;
  const param = `messages[${index}].tool_calls[${callIndex}].${field}`;
  if (value === undefined || value === null) throw missingParameterError(param);
  throw invalidTypeError(param, 'a string', value);
}
