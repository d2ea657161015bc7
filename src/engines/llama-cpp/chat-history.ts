/**
 * OpenAI chat messages and tools, as node-llama-cpp's `LlamaChat` takes them.
 *
 * `LlamaChat` renders the history with the model's own chat template (from the
 * GGUF metadata) and turns function definitions into the template's
 * function-calling syntax. Here we only translate shapes:
 *   - `system` and `developer` messages become system items;
 *   - `user` messages become user items (text parts joined; image, audio and
 *     file parts are refused with a 400 naming the part: no catalog CPU model
 *     reads them);
 *   - an assistant message without content (OpenAI allows one) is an empty
 *     model turn;
 *   - an `assistant` message becomes a model response: its text, then one
 *     function call per `tool_calls` entry, each with the result the following
 *     `tool` message gave it (matched by `tool_call_id`);
 *   - `tools` become `functions` keyed by name, unless `tool_choice` is "none".
 * A history that ends with an assistant message is continued (prefill).
 */
import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelFunctions, ChatModelResponse } from 'node-llama-cpp';
import type { ChatMessage, ContentPart, GenerationParameters } from '../../api/chat-types.js';
import { InvalidRequestError } from '../../api/errors.js';

export function toChatHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const toolResults = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'tool' && message.tool_call_id !== undefined) toolResults.set(message.tool_call_id, textOf(message.content, -1));
  }

  const history: ChatHistoryItem[] = [];
  messages.forEach((message, index) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        history.push({ type: 'system', text: textOf(message.content, index) });
        return;
      case 'user':
        history.push({ type: 'user', text: textOf(message.content, index) });
        return;
      case 'assistant':
        history.push(modelResponse(message, index, toolResults));
        return;
      case 'tool':
        // Folded into the assistant message that made the call; a result with
        // no matching call still reaches the model, as the user's words.
        if (!hasCall(messages, message.tool_call_id)) history.push({ type: 'user', text: textOf(message.content, index) });
        return;
    }
  });
  return history;
}

/** The functions the model may call, or undefined when it may call none. */
export function toChatFunctions(parameters: Pick<GenerationParameters, 'tools' | 'tool_choice'>): ChatModelFunctions | undefined {
  if (parameters.tools === undefined || parameters.tools.length === 0 || parameters.tool_choice === 'none') return undefined;
  const functions: Record<string, ChatModelFunctions[string]> = {};
  for (const tool of parameters.tools) {
    const { name, description, parameters: schema } = tool.function;
    functions[name] = {
      ...(description === undefined ? {} : { description }),
      ...(schema === undefined || isEmptyObjectSchema(schema) ? {} : { params: schema as ChatModelFunctions[string]['params'] }),
    };
  }
  return functions;
}

function modelResponse(message: ChatMessage, index: number, toolResults: ReadonlyMap<string, string>): ChatModelResponse {
  const response: ChatModelResponse['response'] = [];
  const text = message.content === null ? '' : textOf(message.content, index);
  if (text.length > 0) response.push(text);
  for (const call of message.tool_calls ?? []) {
    const functionCall: ChatModelFunctionCall = {
      type: 'functionCall',
      name: call.function.name,
      params: parseArguments(call.function.arguments),
      result: toolResults.get(call.id) ?? '',
    };
    response.push(functionCall);
  }
  return { type: 'model', response };
}

function textOf(content: string | ContentPart[] | null, index: number): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part, partIndex) => {
      if (part.type === 'text') return part.text;
      throw new InvalidRequestError(
        `Content parts of type '${part.type}' are not supported by the CPU engine; send text.`,
        index < 0 ? 'messages' : `messages[${index}].content[${partIndex}]`,
        'unsupported_content',
      );
    })
    .join('');
}

/** Arguments as the model would have written them: parsed JSON when they are JSON. */
function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function hasCall(messages: readonly ChatMessage[], callId: string | undefined): boolean {
  return callId !== undefined && messages.some((message) => message.tool_calls?.some((call) => call.id === callId) === true);
}

/** `{type: "object"}` with no properties: a function without parameters. */
function isEmptyObjectSchema(schema: Record<string, unknown>): boolean {
  const properties = schema.properties;
  return (
    schema.type === 'object' &&
    (properties === undefined || (typeof properties === 'object' && properties !== null && Object.keys(properties).length === 0))
  );
}
