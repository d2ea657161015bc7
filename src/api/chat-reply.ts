/**
 * Engine replies -> what the caller gets, after OpenAI's
 * `CreateChatCompletionResponse` and `CreateChatCompletionStreamResponse`.
 *
 * Whole replies: every choice has `message.refusal` and `logprobs` (null when
 * there are none: both are required, nullable) and a finish reason (an engine
 * that gave none finished; "tool_calls" if it called tools, else "stop").
 *
 * Both, undoing what validation translated (`RequestNotes`):
 *   - calls of custom tools (function calls with arguments `{"input": …}` to
 *     engines) go back as `{type: "custom", custom: {name, input}}`. In a
 *     stream a custom call is held back and sent whole in the delta that
 *     finishes its choice: its input is the decoded `input` string, which
 *     cannot be cut from the JSON text piece by piece;
 *   - a request with the legacy `functions` gets `function_call` (the first
 *     call; legacy requests ask engines for one) and finish reason
 *     "function_call", as OpenAI answers such requests.
 */
import type {
  ChatChoice,
  ChunkChoice,
  CustomToolCall,
  CustomToolCallDelta,
  FinishReason,
  ReplyChoice,
  ReplyChunkChoice,
  RequestNotes,
  ToolCall,
  ToolCallDelta,
} from './chat-types.js';

export function replyChoices(choices: readonly ChatChoice[], notes: RequestNotes | undefined): ReplyChoice[] {
  return choices.map((choice) => replyChoice(choice, notes));
}

function replyChoice(choice: ChatChoice, notes: RequestNotes | undefined): ReplyChoice {
  const source = choice.message;
  const message: ReplyChoice['message'] = { role: 'assistant', content: source.content ?? null, refusal: source.refusal ?? null };
  const calls = source.tool_calls ?? [];
  let finishReason: FinishReason = choice.finish_reason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
  if (calls.length > 0) {
    if (notes?.legacyFunctions === true) {
      message.function_call = { name: calls[0]!.function.name, arguments: calls[0]!.function.arguments };
      if (finishReason === 'tool_calls') finishReason = 'function_call';
    } else {
      message.tool_calls = calls.map((call) => callerCall(call, notes));
    }
  }
  if (source.reasoning_content !== undefined) message.reasoning_content = source.reasoning_content;
  return { index: choice.index, message, finish_reason: finishReason, logprobs: choice.logprobs ?? null };
}

function callerCall(call: ToolCall, notes: RequestNotes | undefined): ToolCall | CustomToolCall {
  if (notes === undefined || !notes.customTools.includes(call.function.name)) return call;
  return { id: call.id, type: 'custom', custom: { name: call.function.name, input: customInput(call.function.arguments) } };
}

/** The `input` of a custom call from its function arguments; text that is not `{"input": "…"}` is taken as the input itself. */
export function customInput(argumentsText: string): string {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { input?: unknown }).input === 'string') {
      return (parsed as { input: string }).input;
    }
  } catch {
    // Not JSON: the model wrote the input plainly.
  }
  return argumentsText;
}

/** A custom call being streamed: held until its choice finishes. */
interface HeldCall {
  index: number;
  id: string;
  name: string;
  argumentsText: string;
}

/**
 * Shapes the choices of each stream chunk, in order. Stateful (it holds
 * custom calls back), so one per stream; `forStream` returns undefined when
 * the request needs no shaping, and chunks then go out as engines made them.
 */
export class ReplyChunkShaper {
  /** Per choice index: tool-call index -> the custom call being held (absent for function calls). */
  private readonly held = new Map<number, Map<number, HeldCall>>();

  private constructor(private readonly notes: RequestNotes) {}

  static forStream(notes: RequestNotes | undefined): ReplyChunkShaper | undefined {
    return notes !== undefined && (notes.legacyFunctions || notes.customTools.length > 0) ? new ReplyChunkShaper(notes) : undefined;
  }

  shape(choices: readonly ChunkChoice[]): ReplyChunkChoice[] {
    return choices.map((choice) => (this.notes.legacyFunctions ? legacyChoice(choice) : this.customChoice(choice)));
  }

  private customChoice(choice: ChunkChoice): ReplyChunkChoice {
    let held = this.held.get(choice.index);
    const passed: Array<ToolCallDelta | CustomToolCallDelta> = [];
    for (const delta of choice.delta.tool_calls ?? []) {
      const call = held?.get(delta.index);
      if (call !== undefined) {
        call.argumentsText += delta.function?.arguments ?? '';
        if (delta.id !== undefined) call.id = delta.id;
      } else if (delta.function?.name !== undefined && this.notes.customTools.includes(delta.function.name)) {
        if (held === undefined) this.held.set(choice.index, (held = new Map()));
        held.set(delta.index, { index: delta.index, id: delta.id ?? '', name: delta.function.name, argumentsText: delta.function.arguments ?? '' });
      } else {
        passed.push(delta);
      }
    }
    if (choice.finish_reason !== null && held !== undefined) {
      for (const call of held.values()) {
        passed.push({ index: call.index, id: call.id, type: 'custom', custom: { name: call.name, input: customInput(call.argumentsText) } });
      }
      this.held.delete(choice.index);
    }
    if (choice.delta.tool_calls === undefined && passed.length === 0) return choice;
    const { tool_calls: _engineCalls, ...rest } = choice.delta;
    return { ...choice, delta: passed.length > 0 ? { ...rest, tool_calls: passed } : rest };
  }
}

/** The first call's deltas as `function_call` deltas; other calls are dropped (legacy replies carry one). */
function legacyChoice(choice: ChunkChoice): ReplyChunkChoice {
  const finishReason = choice.finish_reason === 'tool_calls' ? 'function_call' : choice.finish_reason;
  const calls = choice.delta.tool_calls;
  if (calls === undefined) return finishReason === choice.finish_reason ? choice : { ...choice, finish_reason: finishReason };
  const { tool_calls: _engineCalls, ...rest } = choice.delta;
  const first = calls.find((call) => call.index === 0)?.function;
  const delta: ReplyChunkChoice['delta'] = first === undefined ? rest : { ...rest, function_call: { ...first } };
  return { ...choice, delta, finish_reason: finishReason };
}
