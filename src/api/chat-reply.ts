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
 *     engines) go back as `{type: "custom", custom: {name, input}}`
 *     (`custom-input.ts`). In a stream they go as OpenAI streams them: the
 *     call's first delta carries `index`, `id`, `type: "custom"` and
 *     `custom: {name, input}`, the input so far (maybe empty); each later one
 *     `index` and `custom: {input}`, the next piece of the input, decoded
 *     from the engine's arguments as they arrive;
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
import { CustomInputDecoder, customInput } from './custom-input.js';

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

/** A custom call being streamed. */
interface StreamedCustomCall {
  input: CustomInputDecoder;
  /** Whether its id went out: with its first delta, else with the first that brought one (clients append what comes twice). */
  idSent: boolean;
}

/**
 * Shapes the choices of each stream chunk, in order. Stateful (it follows
 * custom calls), so one per stream; `forStream` returns undefined when the
 * request needs no shaping, and chunks then go out as engines made them.
 */
export class ReplyChunkShaper {
  /** Per choice index: tool-call index -> the custom call being streamed (absent for function calls). */
  private readonly custom = new Map<number, Map<number, StreamedCustomCall>>();

  private constructor(private readonly notes: RequestNotes) {}

  static forStream(notes: RequestNotes | undefined): ReplyChunkShaper | undefined {
    return notes !== undefined && (notes.legacyFunctions || notes.customTools.length > 0) ? new ReplyChunkShaper(notes) : undefined;
  }

  shape(choices: readonly ChunkChoice[]): ReplyChunkChoice[] {
    return choices.map((choice) => (this.notes.legacyFunctions ? legacyChoice(choice) : this.customChoice(choice)));
  }

  private customChoice(choice: ChunkChoice): ReplyChunkChoice {
    let calls = this.custom.get(choice.index);
    const passed: Array<ToolCallDelta | CustomToolCallDelta> = [];
    for (const delta of choice.delta.tool_calls ?? []) {
      const call = calls?.get(delta.index);
      if (call !== undefined) {
        const input = call.input.push(delta.function?.arguments ?? '');
        const id = call.idSent || !delta.id ? undefined : delta.id;
        if (id !== undefined) call.idSent = true;
        if (input !== '' || id !== undefined)
          passed.push(id === undefined ? { index: delta.index, custom: { input } } : { index: delta.index, id, custom: { input } });
      } else if (delta.function?.name !== undefined && this.notes.customTools.includes(delta.function.name)) {
        if (calls === undefined) this.custom.set(choice.index, (calls = new Map()));
        const started: StreamedCustomCall = { input: new CustomInputDecoder(), idSent: Boolean(delta.id) };
        calls.set(delta.index, started);
        const custom = { name: delta.function.name, input: started.input.push(delta.function.arguments ?? '') };
        passed.push(
          started.idSent ? { index: delta.index, id: delta.id, type: 'custom', custom } : { index: delta.index, type: 'custom', custom },
        );
      } else {
        passed.push(delta);
      }
    }
    if (choice.finish_reason !== null && calls !== undefined) {
      // What only the whole arguments could say (an input not written as `{"input": "…"}`), before the choice's end.
      for (const [index, call] of calls) {
        const input = call.input.end();
        if (input !== '') passed.push({ index, custom: { input } });
      }
      this.custom.delete(choice.index);
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
