/**
 * Watches a stream go by and keeps what the trace needs: the finish reason, the
 * usage, and (when bodies are kept) the reply assembled as one message.
 */
import type { AssistantMessage, ChatCompletion, ToolCall, Usage } from '../api/chat-types.js';
import type { EngineChunk } from './engine.js';

export class StreamRecorder {
  finishReason: string | null = null;
  usage: Usage | null = null;
  private content: string[] | null;
  private toolCalls: ToolCall[] = [];
  /** The message assembled by the last `message()`, until another chunk comes (the router's sample and the trace both ask). */
  private assembled: AssistantMessage | undefined;

  constructor(keepContent: boolean) {
    this.content = keepContent ? [] : null;
  }

  observe(chunk: EngineChunk): void {
    this.assembled = undefined;
    if (chunk.usage != null) this.usage = chunk.usage;
    for (const choice of chunk.choices) {
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) this.finishReason = choice.finish_reason;
      if (this.content === null || choice.index !== 0) continue;
      const delta = choice.delta;
      if (typeof delta.content === 'string') this.content.push(delta.content);
      if (delta.tool_calls !== undefined) {
        for (const part of delta.tool_calls) {
          const call = (this.toolCalls[part.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
          if (part.id !== undefined) call.id = part.id;
          if (part.function?.name !== undefined) call.function.name += part.function.name;
          if (part.function?.arguments !== undefined) call.function.arguments += part.function.arguments;
        }
      }
    }
  }

  /** The reply assembled as one message, or null when bodies are not kept. */
  message(): AssistantMessage | null {
    if (this.content === null) return null;
    if (this.assembled !== undefined) return this.assembled;
    const toolCalls = this.toolCalls.filter((call) => call !== undefined);
    this.assembled = {
      role: 'assistant',
      content: this.content.length > 0 ? this.content.join('') : null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    };
    return this.assembled;
  }

  /** The reply as a `chat.completion`, or null when bodies are not kept. */
  replyBody(id: string, created: number, model: string): string | null {
    const message = this.message();
    if (message === null) return null;
    const completion: ChatCompletion = {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message,
          finish_reason: (this.finishReason as ChatCompletion['choices'][number]['finish_reason']) ?? null,
        },
      ],
      usage: this.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    };
    return JSON.stringify(completion);
  }
}
