/**
 * One chat generation on one context sequence: OpenAI parameters in, an
 * OpenAI-shaped reply out, with text and tool-call arguments reported as they
 * are generated (for streaming).
 *
 * Parameters:
 *   - `max_tokens` bounds the reply, and so does the room left in the
 *     sequence's context; hitting either ends the reply with "length". A
 *     prompt that leaves no room is a 400 `context_length_exceeded`, as OpenAI
 *     answers, never a silent truncation of the history.
 *   - `stop` strings end the reply ("stop") and are not part of it.
 *   - Sampling defaults are llama.cpp server's (temperature 0.8, top_p 0.95,
 *     top_k 40, min_p 0.05); `temperature: 0` is greedy. The same `seed` with
 *     the same request gives the same reply.
 *   - `response_format` json_object / json_schema constrain the reply with a
 *     grammar, so it always parses (and matches the schema).
 *   - `tools` become functions in the model's own calling syntax; calls come
 *     back as `tool_calls` ("tool_calls"), never executed here. With tools
 *     offered, `response_format` is not enforced (llama.cpp applies one grammar
 *     at a time); `tool_choice` "required" or a named function is treated as
 *     "auto".
 *   - Custom tools, `allowed_tools` and the legacy `functions` arrive as
 *     plain function tools (validation translates them), so they are served
 *     like any other tools.
 *   - `reasoning_effort` and `verbosity` are ignored: the catalog's CPU models
 *     have no reasoning modes, and neither field changes what OpenAI's schema
 *     lets a reply be.
 *   - Usage counts come from the model's tokenizer: the prompt as rendered by
 *     its chat template, and every generated token. A sequence keeps the last
 *     call's tokens, so a prompt sharing a prefix with it (a system prompt)
 *     skips evaluating that prefix: reported as `cached_tokens`, as OpenAI does.
 */
import { randomBytes } from 'node:crypto';
import type {
  ChatHistoryItem,
  ChatModelFunctions,
  LlamaChat,
  LlamaChatResponse,
  LlamaGrammar,
  LLamaChatGenerateResponseOptions,
} from 'node-llama-cpp';
import type { FinishReason, ToolCall, Usage } from '../../api/chat-types.js';
import { ClientAbortError, EngineError, GatewayError, InvalidRequestError } from '../../api/errors.js';
import type { EngineRequest } from '../engine.js';
import { toChatFunctions, toChatHistory } from './chat-history.js';

/** What a generation reports while it runs. */
export interface GenerationListener {
  onText(text: string): void;
  /** A piece of the arguments of tool call `index`; the first piece of each call comes with its id. */
  onToolCallArguments(index: number, id: string, name: string, argumentsText: string): void;
}

export interface GeneratedReply {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
}

/**
 * The grammar for a JSON schema, or for any JSON when `schema` is undefined
 * (compiled once per schema by the engine). Rejects with a 400 naming `param`
 * when the schema cannot be turned into a grammar.
 */
export type GrammarSource = (schema: Record<string, unknown> | undefined, param: string) => Promise<LlamaGrammar>;

const defaultSampling = { temperature: 0.8, topP: 0.95, topK: 40, minP: 0.05 };

export async function generateReply(
  chat: LlamaChat,
  request: EngineRequest,
  grammarFor: GrammarSource,
  signal: AbortSignal,
  listener?: GenerationListener,
): Promise<GeneratedReply> {
  refuseUnsupported(request);
  const history = toChatHistory(request.messages);
  const functions = toChatFunctions(request);
  const grammar = functions === undefined ? await formatGrammar(request.response_format, grammarFor) : undefined;
  if (functions !== undefined) await checkToolSchemas(request, grammarFor);

  const promptTokens = countPromptTokens(chat, history, functions);
  const room = chat.context.contextSize - promptTokens - 1;
  if (room <= 0) {
    throw new InvalidRequestError(
      `This model's context is ${chat.context.contextSize} tokens per sequence and the messages take ${promptTokens}. Shorten the messages or raise context_size in the config.`,
      'messages',
      'context_length_exceeded',
    );
  }
  const maxTokens = Math.min(request.max_tokens ?? room, room);

  const toolCallIds: string[] = [];
  const meterBefore = chat.sequence.tokenMeter.getState();
  const common = {
    signal,
    maxTokens,
    temperature: request.temperature ?? defaultSampling.temperature,
    topP: request.top_p ?? defaultSampling.topP,
    topK: request.top_k ?? defaultSampling.topK,
    minP: request.min_p ?? defaultSampling.minP,
    // llama.cpp seeds are 32-bit unsigned; OpenAI's are any integer.
    ...(request.seed === undefined ? {} : { seed: request.seed >>> 0 }),
    ...(request.stop === undefined || request.stop.length === 0 ? {} : { customStopTriggers: request.stop }),
    repeatPenalty: repeatPenaltyOf(request),
    onTextChunk: listener === undefined ? undefined : (text: string) => listener.onText(text),
  };
  const onFunctionCallParamsChunk = (chunk: { callIndex: number; functionName: string; paramsChunk: string }) => {
    toolCallIds[chunk.callIndex] ??= newToolCallId();
    listener?.onToolCallArguments(chunk.callIndex, toolCallIds[chunk.callIndex]!, chunk.functionName, chunk.paramsChunk);
  };

  let result: LlamaChatResponse<ChatModelFunctions | undefined>;
  try {
    result =
      functions === undefined
        ? await chat.generateResponse(history, { ...common, grammar })
        : await chat.generateResponse(history, { ...common, functions, onFunctionCallParamsChunk });
  } catch (error) {
    if (signal.aborted) throw new ClientAbortError();
    if (error instanceof GatewayError) throw error;
    throw new EngineError(`The CPU engine failed: ${error instanceof Error ? error.message : String(error)}`, error);
  }

  const meterAfter = chat.sequence.tokenMeter.getState();
  const completionTokens = meterAfter.usedOutputTokens - meterBefore.usedOutputTokens;
  // The sequence kept the previous call's tokens; the prompt's common prefix with them was not evaluated again.
  const cachedTokens = Math.max(0, promptTokens - (meterAfter.usedInputTokens - meterBefore.usedInputTokens));
  const toolCalls = (result.functionCalls ?? []).map((call, index) => ({
    id: toolCallIds[index] ?? newToolCallId(),
    type: 'function' as const,
    function: { name: call.functionName, arguments: JSON.stringify(call.params ?? {}) },
  }));
  return {
    text: result.response,
    toolCalls,
    finishReason: finishReasonOf(result.metadata.stopReason, toolCalls.length),
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: cachedTokens },
    },
  };
}

/**
 * The prompt's length in tokens, rendered as `LlamaChat` will render it: the
 * chat template with the functions' documentation, ending in an open model
 * turn.
 */
function countPromptTokens(chat: LlamaChat, history: ChatHistoryItem[], functions: ChatModelFunctions | undefined): number {
  const last = history.at(-1);
  const open: ChatHistoryItem[] = last?.type === 'model' ? history : [...history, { type: 'model', response: [] }];
  const { contextText } = chat.chatWrapper.generateContextState({ chatHistory: open, availableFunctions: functions });
  return contextText.tokenize(chat.model.tokenizer).length;
}

function formatGrammar(format: EngineRequest['response_format'], grammarFor: GrammarSource): Promise<LlamaGrammar> | undefined {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') return grammarFor(undefined, 'response_format');
  return grammarFor(format.json_schema.schema, 'response_format.json_schema.schema');
}

/** node-llama-cpp compiles tool parameters into a grammar mid-generation; a schema it cannot take is the caller's 400, found first. */
async function checkToolSchemas(request: EngineRequest, grammarFor: GrammarSource): Promise<void> {
  for (const [index, tool] of (request.tools ?? []).entries()) {
    if (tool.function.parameters !== undefined) await grammarFor(tool.function.parameters, `tools[${index}].function.parameters`);
  }
}

function finishReasonOf(stopReason: string, toolCallCount: number): FinishReason {
  if (toolCallCount > 0 || stopReason === 'functionCalls') return 'tool_calls';
  if (stopReason === 'maxTokens') return 'length';
  return 'stop';
}

function repeatPenaltyOf(request: EngineRequest): LLamaChatGenerateResponseOptions['repeatPenalty'] {
  const { repetition_penalty: penalty, presence_penalty: presencePenalty, frequency_penalty: frequencyPenalty } = request;
  if (penalty === undefined && presencePenalty === undefined && frequencyPenalty === undefined) return false;
  return { penalty: penalty ?? 1, presencePenalty: presencePenalty ?? 0, frequencyPenalty: frequencyPenalty ?? 0 };
}

/** What the CPU engine cannot do is refused, never silently ignored. */
function refuseUnsupported(request: EngineRequest): void {
  if (request.n !== undefined && request.n > 1)
    throw new InvalidRequestError('The CPU engine generates one choice per call; n must be 1.', 'n', 'unsupported_parameter');
  if (request.logprobs === true)
    throw new InvalidRequestError('The CPU engine does not return logprobs.', 'logprobs', 'unsupported_parameter');
  if (request.logit_bias !== undefined && Object.keys(request.logit_bias).length > 0) {
    throw new InvalidRequestError('The CPU engine does not apply logit_bias.', 'logit_bias', 'unsupported_parameter');
  }
}

function newToolCallId(): string {
  return `call_${randomBytes(12).toString('base64url')}`;
}
