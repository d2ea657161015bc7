/**
 * Wire types of `POST /v1/chat/completions`: the OpenAI chat-completions shapes
 * (OpenAI's `CreateChatCompletionRequest`; the reference is the fixture in
 * `test/fixtures/openai-openapi/`) plus taskgate's `task`. A
 * `ChatCompletionRequest` is what `validateChatRequest` returns: every field
 * has been checked, so code past validation trusts these types.
 *
 * Past validation there is one way to say each thing: custom tools are
 * function tools taking one string `input`, the legacy `functions` /
 * `function_call` are `tools` / `tool_choice`, a `function` message is a
 * `tool` message, `allowed_tools` is a narrowed `tools` list. Engines, evals
 * and the router see only that form; `RequestNotes` says how to give the
 * reply back in the form the caller used (`chat-reply.ts`).
 */

/** `function` messages (legacy) become `tool` messages in validation. */
export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextContentPart {
  type: 'text';
  text: string;
}

/** User messages only; needs a model whose catalog entry `supports` `vision`. */
export interface ImageContentPart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** User messages only; passed on to engines, which refuse it when they cannot hear. */
export interface AudioContentPart {
  type: 'input_audio';
  input_audio: { data: string; format: 'wav' | 'mp3' };
}

/** User messages only; passed on to engines, which refuse it when they cannot read it. */
export interface FileContentPart {
  type: 'file';
  file: { filename?: string; file_data?: string; file_id?: string };
}

export type ContentPart = TextContentPart | ImageContentPart | AudioContentPart | FileContentPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A call of a custom tool as the caller sees it; engines see a `ToolCall` with arguments `{"input": …}`. */
export interface CustomToolCall {
  id: string;
  type: 'custom';
  custom: { name: string; input: string };
}

export interface ChatMessage {
  role: Role;
  /**
   * `null` only on an assistant message (OpenAI lets one carry no content,
   * e.g. when it has `tool_calls`). Assistant content parts are text (a
   * `refusal` part becomes a text part); system, developer and tool messages
   * take text parts; user messages take every kind.
   */
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  /** Required on `tool` messages: the call this message answers. */
  tool_call_id?: string;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean };
    };

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';
export type Verbosity = 'low' | 'medium' | 'high';

/** The generation parameters an engine receives (no scope, no transport fields). */
export interface GenerationParameters {
  messages: ChatMessage[];
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
  seed?: number;
  response_format?: ResponseFormat;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  user?: string;
  n?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  /** Passed on to engines that read them (reasoning models); the CPU engine ignores them. */
  reasoning_effort?: ReasoningEffort;
  verbosity?: Verbosity;
  /** Engine extras (vLLM, SGLang, llama.cpp): documented in docs/api.md. */
  top_k?: number;
  min_p?: number;
  repetition_penalty?: number;
}

export interface ChatCompletionRequest extends GenerationParameters {
  model: string;
  stream: boolean;
  stream_options?: { include_usage?: boolean };
  /** Alias of the workload name; the `x-taskgate-workload` header wins over it. */
  task?: string;
  metadata?: Record<string, string>;
  /** Present when validation translated or set aside something the reply must account for. Never sent to engines. */
  notes?: RequestNotes;
}

/** What the reply needs to know about how the caller wrote the request. */
export interface RequestNotes {
  /**
   * Fields that were sent (not null) and mean nothing on own capacity, in the
   * order sent: named in the `x-taskgate-ignored-fields` response header.
   */
  ignoredFields: string[];
  /** Names of the custom tools: their calls go back to the caller as `type: "custom"` calls. */
  customTools: string[];
  /** The request offered the legacy `functions` (and no `tools`): the reply carries `function_call`. */
  legacyFunctions: boolean;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  [detail: string]: unknown;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: ToolCall[];
  /** Reasoning models (vLLM `reasoning_content`, others `reasoning`): passed through. */
  reasoning_content?: string;
  refusal?: string | null;
}

/** A choice as engines return it (engines may leave `finish_reason` null and `logprobs` out). */
export interface ChatChoice {
  index: number;
  message: AssistantMessage;
  finish_reason: FinishReason | null;
  logprobs?: ChoiceLogprobs | null;
}

/** Log probabilities as OpenAI's reply carries them: both lists present, each possibly null. */
export interface ChoiceLogprobs {
  content: unknown[] | null;
  refusal: unknown[] | null;
}

/**
 * A choice as sent to the caller (`CreateChatCompletionResponse`): `refusal`
 * and `logprobs` always present (null when there are none), a finish reason
 * always set, custom and legacy calls in the caller's form.
 */
export interface ReplyChoice {
  index: number;
  message: {
    role: 'assistant';
    content: string | null;
    refusal: string | null;
    tool_calls?: Array<ToolCall | CustomToolCall>;
    /** Legacy `functions` requests only. */
    function_call?: { name: string; arguments: string };
    reasoning_content?: string;
  };
  finish_reason: FinishReason;
  logprobs: ChoiceLogprobs | null;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<ChatChoice | ReplyChoice>;
  usage: Usage;
  system_fingerprint?: string | null;
  metadata?: Record<string, string>;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string | null;
  tool_calls?: ToolCallDelta[];
  reasoning_content?: string;
  refusal?: string | null;
}

export interface ChunkChoice {
  index: number;
  delta: ChunkDelta;
  finish_reason: FinishReason | null;
  logprobs?: ChoiceLogprobs | null;
}

/**
 * A custom tool call in a stream, as OpenAI streams one (its published chunk
 * schema has only function calls, openai/openai-openapi#576): the call's
 * first delta carries `id`, `type` and `custom.name`, with `custom.input`
 * maybe empty; each later one a piece of `custom.input`, to be appended.
 */
export interface CustomToolCallDelta {
  index: number;
  id?: string;
  type?: 'custom';
  custom: { name?: string; input: string };
}

/** A stream choice as sent to the caller: custom calls and legacy `function_call` in the caller's form. */
export interface ReplyChunkChoice {
  index: number;
  delta: Omit<ChunkDelta, 'tool_calls'> & {
    tool_calls?: Array<ToolCallDelta | CustomToolCallDelta>;
    function_call?: { name?: string; arguments?: string };
  };
  finish_reason: FinishReason | null;
  logprobs?: ChoiceLogprobs | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: Usage | null;
  metadata?: Record<string, string>;
}
