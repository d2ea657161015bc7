/**
 * Wire types of `POST /v1/chat/completions`: the OpenAI chat-completions shapes
 * plus taskgate's `task`. A `ChatCompletionRequest` is what
 * `validateChatRequest` returns: every field has been checked, so code past
 * validation trusts these types.
 */

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextContentPart {
  type: 'text';
  text: string;
}

/** Non-text parts (images, audio, files) pass through to engines that accept them. */
export interface OtherContentPart {
  type: string;
  [field: string]: unknown;
}

export type ContentPart = TextContentPart | OtherContentPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  /** `null` only on an assistant message that carries `tool_calls`. */
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
  /** Engine extras (vLLM, SGLang, llama.cpp): documented in the README. */
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

export interface ChatChoice {
  index: number;
  message: AssistantMessage;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
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
  logprobs?: unknown;
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
